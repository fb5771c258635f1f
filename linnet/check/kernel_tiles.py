"""Tile sizes that literals decide, reported by `linnet check` (E2127).

Tiles are powers of two (docs/language.md, "Kernels"). Most tile sizes are kernel generics,
known only when an op instance binds the kernel at concrete shapes, so the kernel stage
(`passes/front/elaborate_kernel.py`) checks them when it translates a chosen kernel. But a size
that literals alone decide is an error whatever the shapes, and `check` reports every
error that depends only on literals:

* a kernel's own literal tiles, `iota<i32>(1000)` or `fill<f32>([3, 4], 0.0)`;
* tiles that an op's binding makes literal: `iota<i32>(B)` in a kernel that an op binds
  as `kernel scale_rows<N, 1000>`. The binding is reported, with the tile it makes.
  A binding under which the kernel's `where` provably fails is left alone: that kernel
  never runs, its op's body does.

The message is the kernel stage's, so both stages say the same thing.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator, get_args

from ..diagnostics import DiagnosticBag
from ..syntax import tree as t
from .dim_normal_form import Dim
from .dims import Facts
from .types import TensorT, TupleT, Val

NEGATION = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
#: Statements whose recorded value is their expression's, named by the expression instead
#: (the kernel stage checks expressions and `let y[i] = ...`).
PLAIN_STATEMENTS = tuple(s for s in get_args(t.Stmt) if s is not t.LetIndex)
HELP = ("choose kernel generics that make every tile size a power of two, and mask what "
        "lies past the data")


def is_tile_size(n: int) -> bool:
    """A power of two (1 included), as Triton's and Pallas's tiles are."""
    return n > 0 and n & (n - 1) == 0


def bad_tile(types: dict[int, Val], body: tuple[t.Stmt, ...]) -> tuple[object, str] | None:
    """The first node of `body` (outermost first, in order) whose tile has a constant size
    that is not a power of two, and how the kernel stage names that tile."""
    for node in _nodes(body):
        v = types.get(id(node))
        shape = _bad_shape(v.type) if v is not None else None
        if shape is not None:
            return node, tile_text(node, shape)
    return None


def tile_text(node: object, shape: tuple[int | Dim, ...]) -> str:
    """`iota(1000)` for an iota, else `a tile of shape [3, 4]`."""
    if isinstance(node, t.Call) and node.callee == "iota":
        return f"iota({shape[0]})"
    return "a tile of shape [" + ", ".join(map(str, shape)) + "]"


def report_own_tiles(kernel: t.Kernel, types: dict[int, Val], bag: DiagnosticBag) -> None:
    """E2127 at the first tile of the kernel that its own literals make a bad size."""
    found = bad_tile(types, kernel.body)
    if found is not None:
        node, what = found
        bag.error("E2127", f"tile sizes must be powers of two: {what}", node.span,
                  "not a power of two", help=HELP)


def report_bound_tiles(op: t.Op, kernel: t.Kernel, own: dict[int, Val],
                       bound: dict[int, Val], bag: DiagnosticBag) -> None:
    """E2127 at the op's binding when it makes a tile of the kernel a bad constant size
    that the kernel alone does not (`own` are the kernel's types, `bound` the types under
    the binding)."""
    for node in _nodes(kernel.body):
        v = bound.get(id(node))
        shape = _bad_shape(v.type) if v is not None else None
        if shape is None:
            continue
        mine = own.get(id(node))
        if mine is not None and _bad_shape(mine.type) is not None:
            return  # the kernel's own mistake, reported at the kernel
        what = tile_text(node, shape)
        bag.error("E2127", f"tile sizes must be powers of two: `{op.name}` binds "
                  f"`{kernel.name}` so that it builds {what}", op.kernel.span,
                  "not a power of two", help=HELP)
        return


def where_provably_fails(where: list, facts: Facts) -> bool:
    """Does some substituted `where` clause of a kernel provably fail under the facts?"""
    return any(facts.prove(left, NEGATION[op], right) for left, op, right, _ in where)


def _bad_shape(ty) -> tuple | None:
    """The shape of a tile with a constant size that is not a power of two, else None."""
    if isinstance(ty, TupleT):
        return next((s for s in map(_bad_shape, ty.items) if s is not None), None)
    if not isinstance(ty, TensorT) or ty.rank == 0 or ty.has_pack:
        return None
    sizes = [d.as_int() for d in ty.dims]
    if any(n is not None and not is_tile_size(n) for n in sizes):
        return tuple(n if n is not None else d for n, d in zip(sizes, ty.dims))
    return None


def _nodes(body) -> Iterator[object]:
    """Every tree node of a body, each before the nodes inside it, in source order."""
    for node in body if isinstance(body, tuple) else (body,):
        if dataclasses.is_dataclass(node):
            if not isinstance(node, PLAIN_STATEMENTS):
                yield node
            for f in dataclasses.fields(node):
                if f.name not in ("span", "callee_span"):
                    yield from _nodes(_as_tuple(getattr(node, f.name)))


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)
