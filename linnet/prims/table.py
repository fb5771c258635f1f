"""The table of primitives: every row of every family, by name."""

from __future__ import annotations

from . import elementwise, kernel, math, shapes
from .definition import PrimDef

#: Every primitive of the tensor IR, in the order docs/ir.md lists them.
PRIMS: dict[str, PrimDef] = {row.name: row for row in (
    *elementwise.OPERATORS, *elementwise.UNARY, *math.ROWS, *elementwise.CHOICE,
    *shapes.ROWS, *kernel.ROWS)}


def row(op: str) -> PrimDef:
    """The definition of primitive `op`; a ValueError naming it if there is none."""
    found = PRIMS.get(op)
    if found is None:
        raise ValueError(f"unknown primitive {op!r}")
    return found


def ops_of(*families: str) -> tuple[str, ...]:
    """The primitives of the given families, in table order."""
    return tuple(name for name, r in PRIMS.items() if r.family in families)


def signatures() -> dict[str, tuple[int | None, tuple[str, ...]]]:
    """op name -> (arity, or None for variadic; attribute names): the IR's view."""
    return {name: (r.arity, r.attrs) for name, r in PRIMS.items()}
