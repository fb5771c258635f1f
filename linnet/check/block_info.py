"""What the checker learns of a block (`BlockInfo`: its generics, `where` facts, tensor
members, subs and functions' signatures), in a module of its own so that the phases
(`blocks.py`) and the bodies (`block_bodies.py`) both build on it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..syntax import tree as t
from .dim_normal_form import Dim
from .dims import Facts
from .pack_products import size_symbols
from .signatures import Binding, Signature
from .types import Type


@dataclass
class TensorInfo:
    """A param, buffer or state: its type in the block's own generics."""
    member: t.TensorMember
    type: Type | None
    optional: bool

    @property
    def kind(self) -> str:
        return self.member.kind


@dataclass
class SubInfo:
    """A sub: its block, the block's generics in the parent's terms, and its array length."""
    member: t.Sub
    block: "BlockInfo | None"
    binding: Binding | None
    count: Dim | None
    optional: bool


@dataclass
class BlockInfo:
    """What the checker knows of one block, for its own bodies and for its parents."""
    item: t.BlockDef
    generics: dict[str, t.Generic]
    where: list = field(default_factory=list)  # (Dim, op, Dim, clause), as Signature.where
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    subs: dict[str, SubInfo] = field(default_factory=dict)
    fns: dict[str, t.Function] = field(default_factory=dict)
    sigs: dict[str, Signature] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.item.name

    def facts(self, extra: tuple[t.Generic, ...] = ()) -> Facts:
        """The block's `where` facts over its sizes (and those of extra generics)."""
        sizes = size_symbols((*self.generics.values(), *extra))
        return Facts(sizes).assume_all((l, op, r) for l, op, r, _ in self.where)
