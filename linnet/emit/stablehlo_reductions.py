"""The StableHLO rows that sum and contract: running sums (`cumsum`), `reduce_*` (float
max and min NaN where a slice holds one), and `dot`; halves accumulate in f32."""

from __future__ import annotations

import math
from typing import Callable, Sequence

from .common import attr_int, attr_ints, highest_value, is_float, lowest_value
from .stablehlo_building_blocks import (compare, constant, convert, dot_general, reduce,
                                        scalar_region)
from .stablehlo_writer import OpWriter, Row, Value, dense_array, work_dtype


_REDUCE = {"sum": ("add", 0), "prod": ("multiply", 1), "any": ("or", False),
           "all": ("and", True)}


def cumsum(r: Row) -> Value:
    """Running sums as `reduce_window` over windows reaching `n - 1` back along the axis
    (padded with zeros), in f32 for half dtypes, as `jnp.cumsum` lowers on a CPU."""
    x = convert(r.w, r.args[0], work_dtype(r.result.dtype))
    axis = attr_int(r.attrs["axis"]) % x.type.rank
    n = x.type.shape[axis]
    if n == 0 or math.prod(x.type.shape) == 0:
        return convert(r.w, x, r.result.dtype)
    window = [n if k == axis else 1 for k in range(x.type.rank)]
    pads = ", ".join(f"[{n - 1 if k == axis else 0}, 0]" for k in range(x.type.rank))
    props = (f"window_dimensions = {dense_array(window)}, "
             f"window_strides = {dense_array([1] * x.type.rank)}, "
             f"padding = dense<[{pads}]> : tensor<{x.type.rank}x2xi64>")
    zero = constant(r.w, 0, x.type.dtype)
    total = r.w.op1("stablehlo.reduce_window", [x, zero], x.type, props,
                    [scalar_region("stablehlo.add", x.type.dtype)])
    return convert(r.w, total, r.result.dtype)


def reduce_row(op: str) -> Callable[[Row], Value]:
    def row(r: Row) -> Value:
        (x,) = r.args
        axes = attr_ints(r.attrs["axes"])
        d = r.result.dtype
        if not axes:
            return convert(r.w, x, d)
        if op in ("max", "min"):
            init = lowest_value(d) if op == "max" else highest_value(d)
            x = convert(r.w, x, d)
            extreme = reduce(r.w, x, axes, f"stablehlo.{op}imum", init)
            return _nan_where_nan(r.w, x, axes, extreme) if is_float(d) else extreme
        combine, init = _REDUCE[op]
        w = work_dtype(d) if op in ("sum", "prod") else d
        total = reduce(r.w, convert(r.w, x, w), axes, f"stablehlo.{combine}", init)
        return convert(r.w, total, d)
    return row


def _nan_where_nan(w: OpWriter, x: Value, axes: Sequence[int], extreme: Value) -> Value:
    """`extreme` (a max or min of x over axes), NaN where the reduced slice holds a NaN:
    `stablehlo.maximum` propagates NaN, but XLA's vectorised CPU reductions can skip it."""
    has_nan = reduce(w, compare(w, "NE", x, x), axes, "stablehlo.or", False)
    nan = constant(w, math.nan, extreme.type.dtype, extreme.type.shape)
    return w.op1("stablehlo.select", [has_nan, nan, extreme], extreme.type)


def dot(r: Row) -> Value:
    """`acc + a @ b`: the operands cast to the result dtype (to f32 for a half result, which
    is computed in f32 and rounded once)."""
    w = work_dtype(r.result.dtype)
    a, b = (convert(r.w, x, w) for x in r.args[:2])
    product = convert(r.w, dot_general(r.w, a, b, [], [(a.type.rank - 1, 0)], r.numerics),
                      r.result.dtype)
    if len(r.args) == 3:
        return r.w.op1("stablehlo.add", [r.args[2], product], r.result)
    return product
