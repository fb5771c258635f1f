"""Signatures of `fn`, `op`, `entry` and `kernel` items, and generic substitution.

A signature is computed once per item, in the item's own frame, and then
instantiated at each call by binding its generics from the arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..syntax import tree as t
from ..syntax.printer import print_expr
from .dim_normal_form import Dim
from .pack_products import size_env
from .types import DimItem, MemT, PackDim, TensorT, TupleT, Type
from .value_types import map_parts


@dataclass
class Signature:
    item: t.Function | t.Op | t.Kernel
    generics: tuple[t.Generic, ...]
    params: list[Type | None]
    result: Type | None
    where: list[tuple[Dim, str, Dim, t.Expr]] = field(default_factory=list)
    results: list[Type | None] = field(default_factory=list)  # a kernel's named results

    @property
    def name(self) -> str:
        return self.item.name


@dataclass
class Binding:
    """Values for generics: dims, dtypes and shape packs."""
    dims: dict[str, Dim] = field(default_factory=dict)
    dtypes: dict[str, str] = field(default_factory=dict)
    packs: dict[str, tuple[DimItem, ...]] = field(default_factory=dict)

    def bound(self, name: str) -> bool:
        return name in self.dims or name in self.dtypes or name in self.packs

    def sizes(self) -> dict[str, Dim]:
        """What substituting the binding into a dimension replaces: each `Dim` generic,
        and each bound pack's `prod(S)` (check/pack_products.py)."""
        return size_env(self.dims, self.packs)


def substitute(ty: Type | None, b: Binding) -> Type | None:
    """The type with every bound generic replaced by its value."""
    if isinstance(ty, TensorT):
        sizes = b.sizes()
        dims: list[DimItem] = []
        for d in ty.dims:
            if isinstance(d, PackDim):
                dims.extend(b.packs.get(d.name, (d,)))
            else:
                dims.append(d.substitute(sizes) if sizes else d)
        return TensorT(tuple(dims), b.dtypes.get(ty.dtype, ty.dtype))
    if isinstance(ty, TupleT):
        return TupleT(tuple(substitute(x, b) for x in ty.items))  # type: ignore[misc]
    if isinstance(ty, MemT):
        return MemT(substitute(ty.tensor, b), ty.role)  # type: ignore[arg-type]
    mapped = map_parts(ty, lambda x: substitute(x, b))  # structs and optionals
    return ty if mapped is None else mapped


def bind_shape(param: Type, shape: tuple[int, ...] | None, dtype: str | None,
               generics: set[str], b: Binding) -> bool:
    """Bind the generics of a parameter from an input's shape and dtype name (either None
    when the input does not say, a Python number's); False when its rank cannot fit the
    parameter's. What every runtime does with a call's inputs, and the batch rule with a
    shard's."""
    if not isinstance(param, TensorT):
        return True
    if param.dtype in generics and dtype is not None:
        b.dtypes.setdefault(param.dtype, dtype)
    if shape is None:
        return True
    return match_dims(param.dims, tuple(Dim.const(n) for n in shape), generics, b)


def match_dims(want: tuple[DimItem, ...], got: tuple[DimItem, ...], generics: set[str],
               b: Binding) -> bool:
    """Bind the generics of want from got; False when the ranks cannot line up."""
    packs = [k for k, d in enumerate(want) if isinstance(d, PackDim)]
    if not packs:
        if len(want) != len(got):
            return False
        for w, g in zip(want, got):
            _bind_dim(w, g, generics, b)
        return True
    if len(packs) > 1 or len(got) < len(want) - 1:
        return False
    k = packs[0]
    tail = len(want) - k - 1
    head_got, mid_got = got[:k], got[k:len(got) - tail]
    tail_got = got[len(got) - tail:] if tail else ()
    name = want[k].name  # type: ignore[union-attr]
    if name in generics and name not in b.packs:
        b.packs[name] = tuple(mid_got)
    for w, g in zip(want[:k] + want[k + 1:], head_got + tail_got):
        _bind_dim(w, g, generics, b)
    return True


def _bind_dim(want: DimItem, got: DimItem, generics: set[str], b: Binding) -> None:
    if isinstance(want, PackDim) or isinstance(got, PackDim):
        return
    symbols = want.symbols()
    if len(symbols) == 1:
        (name,) = symbols
        if name in generics and name not in b.dims and want == Dim.sym(name):
            b.dims[name] = got


def where_note(owner: str, clause: t.Expr) -> str:
    """Which clause a failed `where` proof comes from, as its owner wrote it (a divisor's
    `d > 0` comes from the clause that divides by it)."""
    return f"`{owner}` states `where {print_expr(clause)}`"


def where_help(left: Dim, op: str, right: Dim, whose: str) -> str:
    """The cure for an unproved `where`: restate it in `whose` clause, unless no symbol is
    left in it (then it is false for the values given)."""
    if not left.symbols() and not right.symbols():
        return f"`{left} {op} {right}` is false: give values that satisfy the clause"
    return f"restate it in {whose} `where` clause: `where {left} {op} {right}`"
