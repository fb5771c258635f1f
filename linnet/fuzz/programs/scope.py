"""The generator's state: names, variables in scope, the module being built.

Why one `Gen` object: every part (expressions, statements, helpers, kernels) draws from the
same random stream, counts constructs in the same `Counter` and adds items to the same
module, so a seed fixes the whole program.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from ...syntax import tree as t
from .config import GeneratorConfig
from .types import BITS, MANTISSA, DType, Dim, Info, Ty, dt

_DTYPE_NAMES = frozenset(BITS) | frozenset(MANTISSA) | {"bool"}


@dataclass
class Var:
    """A value in scope: its name, type and value facts; `mutable` for a `var`."""
    name: str
    ty: Ty
    info: Info
    mutable: bool = False


@dataclass
class Param:
    """An entry parameter and how its input is drawn (`style`: ints, dyadic, random)."""
    var: Var
    style: str


class Scope:
    """Variables visible at a point of a body; a child scope sees its parent's.

    `params` is set on an entry's root scope: where an expression needs a value of a type
    that nothing in scope has, a new entry parameter of that type is added.
    """

    def __init__(self, parent: "Scope | None" = None, params: list[Param] | None = None,
                 kernel: bool = False) -> None:
        self.parent = parent
        self.own: list[Var] = []
        self.params = params
        self.kernel = kernel if parent is None else parent.kernel
        self.loop_depth = 0 if parent is None else parent.loop_depth
        self.hidden: set[str] = set() if parent is None else set(parent.hidden)

    def child(self, loop: bool = False) -> "Scope":
        s = Scope(self)
        s.loop_depth += int(loop)
        return s

    def vars(self) -> list[Var]:
        """What expressions may read here (a loop's carried values are hidden in its body:
        their facts change from trip to trip)."""
        out = [] if self.parent is None else self.parent.vars()
        return [v for v in out + self.own if v.name not in self.hidden]

    def add(self, var: Var) -> Var:
        self.own.append(var)
        return var

    def root(self) -> "Scope":
        return self if self.parent is None else self.parent.root()

    def lookup(self, name: str) -> Var | None:
        for v in reversed(self.vars()):
            if v.name == name:
                return v
        return None

    def update(self, name: str, info: Info) -> None:
        """A carried `var` got new facts (after a loop or assignment)."""
        scope: Scope | None = self
        while scope is not None:
            for k, v in enumerate(scope.own):
                if v.name == name:
                    scope.own[k] = Var(v.name, v.ty, info, v.mutable)
                    return
            scope = scope.parent


@dataclass
class Gen:
    """Everything one program's generation shares."""
    rng: random.Random
    config: GeneratorConfig
    counts: Counter = field(default_factory=Counter)
    items: list[t.Item] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    dims: list[Dim] = field(default_factory=list)
    bindings: dict[str, int | str] = field(default_factory=dict)
    generics: list[t.Generic] = field(default_factory=list)
    where: list[t.Expr] = field(default_factory=list)
    positive: set[str] = field(default_factory=set)
    float_generic: DType | None = None
    kernel_results: set[str] = field(default_factory=set)  # names bound to kernel op calls
    model_rng: random.Random | None = None  # the model layer's decisions (models.py)
    form_rng: random.Random | None = None  # untyped results and `...` (forms.py)

    def fresh(self, base: str) -> str:
        """A name not used anywhere in the module yet, and not a dtype's (`i8`, `u16`, `f32`:
        a name shadowing a dtype makes `cast<i8>` in its scope read the name)."""
        k = 0
        while f"{base}{k}" in self.used or f"{base}{k}" in _DTYPE_NAMES:
            k += 1
        name = f"{base}{k}"
        self.used.add(name)
        return name

    def count(self, *constructs: str) -> None:
        for c in constructs:
            self.counts[c] += 1

    def has(self, feature: str) -> bool:
        return self.config.has(feature)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, xs):
        return xs[self.rng.randrange(len(xs))]

    def float_dtypes(self) -> list[DType]:
        out = [dt(n) for n in ("f16", "bf16", "f32", "f64") if n in self.config.dtypes]
        if self.float_generic is not None:
            out.append(self.float_generic)
        return out

    def int_dtypes(self) -> list[DType]:
        return [dt(n) for n in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
                if n in self.config.dtypes]

    def numeric_dtypes(self) -> list[DType]:
        return self.float_dtypes() + self.int_dtypes()

    def has_bool(self) -> bool:
        return "bool" in self.config.dtypes


def pick_dtype(g: Gen) -> DType:
    """Floats most often (most constructs are about them), every dtype sometimes."""
    floats, ints = g.float_dtypes(), g.int_dtypes()
    r = g.rng.random()
    if r < 0.55 or not ints:
        return g.pick(floats)
    if r < 0.9 or not g.has_bool():
        return g.pick(ints)
    return dt("bool")


def pick_type(g: Gen, scope: Scope) -> Ty:
    """A shape like one in scope (so values combine), or one from the entry's dims."""
    dtype = pick_dtype(g)
    shapes = [v.ty.dims for v in scope.vars() if v.info.finite]
    if shapes and g.chance(0.7):
        return Ty(g.pick(shapes), dtype)
    rank = g.pick([0, 1, 1, 2, 2, 3])
    return Ty(tuple(g.pick(g.dims) for _ in range(rank)) if g.dims else (), dtype)
