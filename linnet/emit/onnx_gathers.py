"""The primitives that read elements at positions, as ONNX nodes: `index` (static
slices and positions), `dyn_index` (runtime positions), `gather` and its adjoint
`scatter_add` (positions outside their axis read 0 and add nothing), and `diagonal`."""

from __future__ import annotations

from typing import Sequence

from ..ir import tensor as ir
from .common import PrimCall, attr_int, freeze, gathered_first
from .onnx_elementwise import select
from .onnx_nodes import Nodes, work


def index(g: Nodes, x: str, tx: ir.TType, items: tuple) -> str:
    """Leading-axis items: `Slice` them all (an `at` is a slice of one), then `Squeeze`
    the `at` axes."""
    if not items:
        return x
    starts, ends, steps, drop = [], [], [], []
    for axis, item in enumerate(items):
        item = freeze(item)
        if item[0] == "at":
            lo, hi, step = attr_int(item[1]), attr_int(item[1]) + 1, 1
            drop.append(axis)
        else:
            lo, hi, step = (list(item[1:]) + [None, None, None])[:3]
            lo, step = (0 if lo is None else attr_int(lo)), (1 if step is None else attr_int(step))
            hi = tx.shape[axis] if hi is None else attr_int(hi)
        starts.append(lo)
        ends.append(hi)
        steps.append(step)
    axes = list(range(len(items)))
    y = g.add("Slice", [x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps)])
    return g.add("Squeeze", [y, g.ints(drop)]) if drop else y


def dyn_index(g: Nodes, x: str, positions: Sequence[str], tys: Sequence[ir.TType]) -> str:
    """`x[i, j]` with runtime scalars: one `Gather` on axis 0 per position."""
    for i, t in zip(positions, tys):
        x = g.add("Gather", [x, g.cast(i, t.dtype, "i64")], axis=0)
    return x


def _positions(g: Nodes, c: PrimCall, table: tuple[int, ...]) -> tuple[str, str]:
    """A gather's positions made safe: where all lie inside their axes (with axes of 1 for
    the table's other axes), and the `GatherND` indices, each position clamped into its
    axis. Both read the positions as i64 (a u64 above the i64 range wraps negative)."""
    inside, keys = "", []
    for k, p, t in zip(c.axes, c.args[1:], c.types[1:]):
        q = g.cast(p, t.dtype, "i64")
        low, high = g.const(0, "i64"), g.const(table[k] - 1, "i64")
        ok = g.add("And", [g.add("GreaterOrEqual", [q, low]),
                           g.add("LessOrEqual", [q, high])])
        inside = ok if not inside else g.add("And", [inside, ok])
        keys.append(g.add("Unsqueeze", [g.add("Min", [g.add("Max", [q, low]), high]),
                                        g.ints([-1])]))
    index = keys[0] if len(keys) == 1 else g.add("Concat", keys, axis=-1)
    rank = c.types[1].rank
    spread = list(range(rank, rank + len(table) - len(c.axes)))
    return (g.add("Unsqueeze", [inside, g.ints(spread)]) if spread else inside), index


def gather(g: Nodes, c: PrimCall) -> str:
    """`GatherND` of the table with its gathered axes first, at the clamped positions;
    0 where a position lies outside its axis."""
    table, d = tuple(c.tx.shape), c.tx.dtype
    if any(table[k] == 0 for k in c.axes):
        return g.fill(0, d, tuple(c.result.shape))
    inside, index = _positions(g, c, table)
    order = gathered_first(len(table), c.axes)
    x = c.x if order == tuple(range(len(table))) else g.add("Transpose", [c.x],
                                                            perm=list(order))
    return select(g, inside, g.add("GatherND", [x, index]), g.const(0, d), d)


def scatter_add(g: Nodes, c: PrimCall) -> str:
    """The adjoint of a gather: `ScatterND` adding g, zeroed where a position lies
    outside its axis, into zeros of the table with its gathered axes first."""
    table, d = tuple(c.result.shape), c.result.dtype
    if any(table[k] == 0 for k in c.axes):
        return g.fill(0, d, table)
    inside, index = _positions(g, c, table)
    order = gathered_first(len(table), c.axes)
    w = work("ScatterND", d)
    zeros = g.fill(0, w, tuple(table[k] for k in order))
    update = g.cast(select(g, inside, c.x, g.const(0, d), d), d, w)
    y = g.cast(g.add("ScatterND", [zeros, index, update], reduction="add"), w, d)
    back = [order.index(k) for k in range(len(table))]
    return y if back == list(range(len(table))) else g.add("Transpose", [y], perm=back)


def diagonal(g: Nodes, x: str, tx: ir.TType, axes: tuple[int, ...]) -> str:
    """Merge `axes` into one axis, placed last: transpose them to the back, then merge the
    last two axes (`[.., a, b]` reshaped to `[.., a * b]`, gathering `i * b + i`) until
    one is left."""
    rank = tx.rank
    axes = tuple(a % rank for a in axes)
    rest = tuple(a for a in range(rank) if a not in axes)
    perm = rest + axes
    if perm != tuple(range(rank)):
        x = g.add("Transpose", [x], perm=list(perm))
    shape = [tx.shape[a] for a in perm]
    for _ in range(len(axes) - 1):
        a, b = shape[-2], shape[-1]
        m = min(a, b)
        flat = g.add("Reshape", [x, g.ints(shape[:-2] + [a * b])], allowzero=1)
        x = g.add("Gather", [flat, g.ints([i * b + i for i in range(m)])], axis=-1)
        shape = shape[:-2] + [m]
    return x
