"""What a body can see: items of the program, generics, and local variables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..diagnostics import Span
from ..prims import MATH
from ..scopes import ScopeStack
from ..syntax import tree as t
from .dims import Facts
from .types import DTYPE_KINDS, DTYPES, Val

if TYPE_CHECKING:
    from .signatures import Binding

PRELUDE = frozenset(
    "cast abs min max select shl shr reshape broadcast_to permute concat iota fill cumsum "
    "next_pow2".split()) | frozenset(MATH)
KERNEL_BUILTINS = frozenset({"program_id", "load"})
CALLABLE_BUILTINS = PRELUDE | KERNEL_BUILTINS
"""Names a declaration may not take (E1207): a local or parameter named so would hide the
builtin from every call in its scope. The reductions `sum prod any all` are not among
them, nor the statement words `store` and `atomic_*`, which a local cannot hide."""


@dataclass
class Globals:
    """The items visible in a module: its own, and the `pub` items of modules it uses."""
    items: dict[str, t.Item] = field(default_factory=dict)
    consts: dict[str, Val] = field(default_factory=dict)
    blocks: dict[str, object] = field(default_factory=dict)  # name -> check.blocks.BlockInfo


@dataclass
class Local:
    val: Val
    mutable: bool = False
    span: Span | None = None  # where it is declared, for messages that point there


@dataclass
class Frame:
    """The checking state of one body: a `fn`, `entry`, `op`, grad clause or kernel."""
    globals: Globals
    generics: dict[str, t.Generic]
    facts: Facts
    kernel: t.Kernel | None = None
    scopes: ScopeStack[str, Local] = field(default_factory=ScopeStack)
    loop_depth: int = 0
    scan_depth: int = 0
    writes: dict[str, str] = field(default_factory=dict)  # kernel result -> kind of write
    targets: set[str] = field(default_factory=set)  # every name a kernel tries to write
    binding: "Binding | None" = None  # an instance's generic values (see check/instance.py)

    def lookup(self, name: str) -> Local | None:
        return self.scopes.lookup(name)

    def bind(self, name: str, val: Val, mutable: bool = False,
             span: Span | None = None) -> None:
        self.scopes.define(name, Local(val, mutable, span))

    def visible_names(self) -> set[str]:
        """Every value name this body can read: locals, parameters, generics and the
        module's constants (where a misspelled name finds the one meant)."""
        return self.scopes.names() | set(self.generics) | set(self.globals.consts)

    def push(self) -> None:
        self.scopes.push()

    def pop(self) -> None:
        self.scopes.pop()

    def dtype_kind(self, dtype: str) -> str | None:
        """The kind of a generic dtype name, or None for a concrete dtype. A concrete dtype's
        name is never a generic's here, as in types: a generic named so is E1207."""
        g = None if dtype in DTYPES else self.generics.get(dtype)
        return g.kind if g is not None and g.kind in DTYPE_KINDS else None
