"""The product of a shape pack's sizes, `prod(S)`, as a dimension.

Why this module exists: an op over `Tensor[*S, H; T]` can hand its rows to an op over
`Tensor[R, H; T]` (one with a kernel) only by flattening them, `reshape(x, [prod(S), H])`,
and that needs a name for the number of rows whatever `S` holds. In the dimension
polynomials a pack's product is one more symbol, spelt `prod(S)`: no `Dim` generic can be
so named (names have no parentheses), it is never negative (as a `Dim` is not), and a
binding of `S` to dimensions replaces it with their product, so `prod(S)` with `S = [B,
T]` is `B*T`, and with `S = [2, 3]` it is 6. The element count of `Tensor[*S, H; T]` is
`prod(S)*H`, which is what lets `reshape` prove the flattening.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ..syntax import tree as t
from .dim_normal_form import Dim
from .types import DimItem, PackDim


def product_symbol(pack: str) -> str:
    """The symbol that stands for the product of the pack `pack`'s sizes."""
    return f"prod({pack})"


def pack_product(pack: str) -> Dim:
    """`prod(S)` as a dimension."""
    return Dim.sym(product_symbol(pack))


def shape_product(dims: tuple[DimItem, ...]) -> Dim:
    """The number of elements of a tensor of these dimensions: their product, a pack
    counting as its `prod(S)`."""
    total = Dim.const(1)
    for d in dims:
        total = total * (pack_product(d.name) if isinstance(d, PackDim) else d)
    return total


def size_symbols(generics: Iterable[t.Generic]) -> list[str]:
    """The symbols of an item's sizes, each known to be `>= 0`: its `Dim` generics, and
    the product of each of its shape packs."""
    return [g.name if g.kind == "Dim" else product_symbol(g.name)
            for g in generics if g.kind in ("Dim", "Shape")]


def size_env(dims: Mapping[str, Dim], packs: Mapping[str, tuple[DimItem, ...]]
             ) -> dict[str, Dim]:
    """What a binding substitutes into a dimension: each `Dim` generic's value, and each
    bound pack's product for its `prod(S)`."""
    return {**dims, **{product_symbol(name): shape_product(value)
                       for name, value in packs.items()}}
