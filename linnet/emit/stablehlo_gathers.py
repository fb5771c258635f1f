"""The StableHLO rows that read elements at positions: `index` (one static slice),
`dyn_index` (`dynamic_slice`), and `gather` with its adjoint `scatter_add` (positions
clamped into their axes, and 0 read or nothing added where one lies outside)."""

from __future__ import annotations

from ..ir import tensor as ir
from .common import attr_int, attr_ints, freeze, gathered_first
from .stablehlo_building_blocks import (compare, constant, convert, reshape, scalar_region,
                                        slice_, transpose)
from .stablehlo_writer import OpWriter, Row, Value, dense_array, work_dtype


def index(r: Row) -> Value:
    """Leading axes taken at a position (`("at", k)`, the axis dropped) or sliced
    (`("slice", lo, hi, step)`): one `stablehlo.slice`, then a reshape dropping axes."""
    (x,) = r.args
    items = freeze(r.attrs["items"])
    bounds = [_index_bounds(items[k] if k < len(items) else None, n)
              for k, n in enumerate(x.type.shape)]
    starts, limits, strides = zip(*bounds) if bounds else ((), (), ())
    return reshape(r.w, slice_(r.w, x, starts, limits, strides), r.result.shape)


def _index_bounds(item: object, n: int) -> tuple[int, int, int]:
    """(start, limit, stride) of one axis, clipped to its extent `n` as Python slices are."""
    if item is None:
        return 0, n, 1
    if not isinstance(item, tuple) or not item or item[0] not in ("at", "slice"):
        raise ValueError(f"bad index item {item!r}")
    if item[0] == "at":
        k = attr_int(item[1])
        return k, k + 1, 1
    lo, hi, step = (list(item[1:]) + [None, None, None])[:3]
    lo = min(0 if lo is None else attr_int(lo), n)
    hi = n if hi is None else min(max(attr_int(hi), lo), n)
    step = 1 if step is None else attr_int(step)
    if step < 1 or lo < 0:
        raise ValueError(f"slice {item!r}: bounds must be non-negative and the step positive")
    return lo, hi, step


def dyn_index(r: Row) -> Value:
    """`x[i, j]` with runtime scalars: `dynamic_slice` of size 1 on the leading axes (XLA
    clamps a start out of range; the language leaves that undefined), then a reshape."""
    x, positions = r.args[0], r.args[1:]
    if not positions:
        return x
    if 0 in x.type.shape[:len(positions)]:
        # no position is in range (say, in a loop of no trips): any value will do, and
        # StableHLO refuses a slice of size 1 of an empty axis
        return constant(r.w, 0, r.result.dtype, r.result.shape)
    zero = constant(r.w, 0, "i64")
    starts = [convert(r.w, p, "i64") for p in positions]
    starts += [zero] * (x.type.rank - len(positions))
    sizes = [1] * len(positions) + list(x.type.shape[len(positions):])
    piece = r.w.op1("stablehlo.dynamic_slice", [x, *starts],
                    ir.TType(tuple(sizes), x.type.dtype), f"slice_sizes = {dense_array(sizes)}")
    return reshape(r.w, piece, r.result.shape)


def _positions(r: Row, table: tuple[int, ...]) -> tuple[Value, Value]:
    """A gather's positions made safe: where all lie inside their axes (of the positions'
    shape S), and the start indices `S + [k]`, each position clamped into its axis. Both
    read the positions as i64 (a u64 above the i64 range wraps negative: outside too)."""
    w, axes, positions = r.w, attr_ints(r.attrs["axes"]), r.args[1:]
    shape = positions[0].type.shape
    inside, keys = None, []
    for k, p in zip(axes, positions):
        q = convert(w, p, "i64")
        low, high = constant(w, 0, "i64", shape), constant(w, table[k] - 1, "i64", shape)
        ok = w.op1("stablehlo.and", [compare(w, "GE", q, low), compare(w, "LE", q, high)],
                   ir.TType(shape, "bool"))
        inside = ok if inside is None else w.op1("stablehlo.and", [inside, ok], ok.type)
        clamped = w.op1("stablehlo.minimum", [w.op1("stablehlo.maximum", [q, low], q.type),
                                              high], q.type)
        keys.append(reshape(w, clamped, shape + (1,)))
    index = keys[0] if len(keys) == 1 else w.op1(
        "stablehlo.concatenate", keys, ir.TType(shape + (len(keys),), "i64"),
        f"dimension = {len(shape)} : i64")
    return inside, index


def _gather_dims(shape: tuple[int, ...], k: int, rest: int, scatter: bool) -> str:
    """The dimension numbers of a gather (or of its adjoint scatter) of the table with its
    `k` gathered axes first, at start indices `shape + [k]`: the other `rest` axes whole."""
    window = _dense_list(range(len(shape), len(shape) + rest))
    first = _dense_list(range(k))
    if scatter:
        return (f"scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = "
                f"{window}, inserted_window_dims = {first}, scatter_dims_to_operand_dims = "
                f"{first}, index_vector_dim = {len(shape)}>")
    return (f"dimension_numbers = #stablehlo.gather<offset_dims = {window}, "
            f"collapsed_slice_dims = {first}, start_index_map = {first}, "
            f"index_vector_dim = {len(shape)}>")


def _dense_list(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _spread_left(w: OpWriter, x: Value, shape: tuple[int, ...]) -> Value:
    """x (of a prefix of `shape`) broadcast along the trailing axes of `shape`."""
    if x.type.shape == shape:
        return x
    return w.op1("stablehlo.broadcast_in_dim", [x], ir.TType(shape, x.type.dtype),
                 f"broadcast_dimensions = {dense_array(range(x.type.rank))}")


def gather(r: Row) -> Value:
    """`stablehlo.gather` of the table with its gathered axes first, at the clamped
    positions; 0 where a position lies outside its axis."""
    x, axes = r.args[0], attr_ints(r.attrs["axes"])
    table = x.type.shape
    if any(table[k] == 0 for k in axes):
        return constant(r.w, 0, r.result.dtype, r.result.shape)
    inside, index = _positions(r, table)
    order = gathered_first(len(table), axes)
    moved = transpose(r.w, x, order)
    sizes = [1] * len(axes) + [table[k] for k in order[len(axes):]]
    props = (_gather_dims(inside.type.shape, len(axes), len(sizes) - len(axes), False)
             + f", indices_are_sorted = false, slice_sizes = {dense_array(sizes)}")
    read = r.w.op1("stablehlo.gather", [moved, index], r.result, props)
    zero = constant(r.w, 0, r.result.dtype, r.result.shape)
    return r.w.op1("stablehlo.select", [_spread_left(r.w, inside, r.result.shape), read, zero],
                   r.result)


def scatter_add(r: Row) -> Value:
    """The adjoint of a gather: `stablehlo.scatter` adding g, zeroed where a position lies
    outside its axis, into zeros of the table with its gathered axes first (halves summed
    in f32)."""
    g, axes, table = r.args[0], attr_ints(r.attrs["axes"]), r.result.shape
    if any(table[k] == 0 for k in axes):
        return constant(r.w, 0, r.result.dtype, table)
    inside, index = _positions(r, table)
    order = gathered_first(len(table), axes)
    d = work_dtype(r.result.dtype)
    zero = constant(r.w, 0, g.type.dtype, g.type.shape)
    update = convert(r.w, r.w.op1("stablehlo.select", [_spread_left(r.w, inside, g.type.shape),
                                                       g, zero], g.type), d)
    start = constant(r.w, 0, d, tuple(table[k] for k in order))
    props = (_gather_dims(inside.type.shape, len(axes), len(table) - len(axes), True)
             + ", indices_are_sorted = false, unique_indices = false")
    total = r.w.op1("stablehlo.scatter", [start, index, update], start.type, props,
                    [scalar_region("stablehlo.add", d)])
    back = [order.index(k) for k in range(len(table))]
    return convert(r.w, transpose(r.w, total, back), r.result.dtype)
