"""The StableHLO operations the rows are built of: constants, numpy-style broadcasts,
reshapes and transposes, comparisons, the language's `cast`, reductions, slices,
`dot_general` at the numerics' precision, and diagonals."""

from __future__ import annotations

import math
from typing import Sequence

from ..ir import tensor as ir
from ..ir import kernel_numerics as kn
from .common import SIGNED, is_float
from .stablehlo_writer import OpWriter, Region, Value, dense_array, literal_text, tensor_type


def constant(w: OpWriter, value: bool | int | float, dtype: str,
             shape: tuple[int, ...] = ()) -> Value:
    """A constant: the scalar `value` in `dtype`, splatted over `shape`."""
    ty = ir.TType(tuple(shape), dtype)
    return w.op1("stablehlo.constant", [], ty,
                 f"value = dense<{literal_text(value, dtype)}> : {tensor_type(ty)}")


def broadcast(w: OpWriter, x: Value, shape: tuple[int, ...]) -> Value:
    """`x` broadcast numpy-style to `shape` (axes aligned on the right)."""
    shape = tuple(shape)
    if x.type.shape == shape:
        return x
    dims = range(len(shape) - x.type.rank, len(shape))
    return w.op1("stablehlo.broadcast_in_dim", [x], ir.TType(shape, x.type.dtype),
                 f"broadcast_dimensions = {dense_array(dims)}")


def reshape(w: OpWriter, x: Value, shape: tuple[int, ...]) -> Value:
    shape = tuple(shape)
    if x.type.shape == shape:
        return x
    if math.prod(shape) != math.prod(x.type.shape):
        raise ValueError(f"reshape of {x.type} to {shape}")
    return w.op1("stablehlo.reshape", [x], ir.TType(shape, x.type.dtype))


def transpose(w: OpWriter, x: Value, perm: Sequence[int]) -> Value:
    perm = tuple(perm)
    if perm == tuple(range(x.type.rank)):
        return x
    shape = tuple(x.type.shape[p] for p in perm)
    return w.op1("stablehlo.transpose", [x], ir.TType(shape, x.type.dtype),
                 f"permutation = {dense_array(perm)}")


def _compare_type(dtype: str) -> str:
    return "FLOAT" if is_float(dtype) else "SIGNED" if dtype in SIGNED else "UNSIGNED"


def compare(w: OpWriter, direction: str, a: Value, b: Value) -> Value:
    """`a <direction> b` elementwise, `a` and `b` of one type."""
    props = (f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
             f"compare_type = #stablehlo<comparison_type {_compare_type(a.type.dtype)}>")
    return w.op1("stablehlo.compare", [a, b], ir.TType(a.type.shape, "bool"), props)


def convert(w: OpWriter, x: Value, dtype: str) -> Value:
    """The language's `cast`: `stablehlo.convert`, or `x != 0` for a bool result."""
    if x.type.dtype == dtype:
        return x
    if dtype == "bool":
        return compare(w, "NE", x, constant(w, 0, x.type.dtype, x.type.shape))
    return w.op1("stablehlo.convert", [x], ir.TType(x.type.shape, dtype))


def scalar_region(name: str, dtype: str) -> Region:
    """A reduction's body: combine two scalars of `dtype` with the elementwise op `name`."""
    def region(w: OpWriter) -> None:
        a, b = w.block_args([ir.TType((), dtype)] * 2)
        w.ret([w.op1(name, [a, b], ir.TType((), dtype))])
    return region


def reduce(w: OpWriter, x: Value, axes: Sequence[int], combine: str,
           init: bool | int | float) -> Value:
    """`stablehlo.reduce` of `axes` with the elementwise op `combine`, starting at `init`."""
    axes = sorted({a % x.type.rank for a in axes})
    shape = tuple(n for k, n in enumerate(x.type.shape) if k not in axes)
    start = constant(w, init, x.type.dtype)
    return w.op1("stablehlo.reduce", [x, start], ir.TType(shape, x.type.dtype),
                 f"dimensions = {dense_array(axes)}",
                 [scalar_region(combine, x.type.dtype)])


def slice_(w: OpWriter, x: Value, starts: Sequence[int], limits: Sequence[int],
           strides: Sequence[int]) -> Value:
    shape = tuple(max(0, -(-(hi - lo) // s)) for lo, hi, s in zip(starts, limits, strides))
    props = (f"start_indices = {dense_array(starts)}, limit_indices = {dense_array(limits)}, "
             f"strides = {dense_array(strides)}")
    return w.op1("stablehlo.slice", [x], ir.TType(shape, x.type.dtype), props)


def precision_props(numerics: str) -> str:
    """A contraction's `precision_config`: none (the device's default) where
    `kernel_numerics.reduced_precision_contractions` allows it, else HIGHEST."""
    if kn.reduced_precision_contractions(numerics):
        return ""
    highest = "#stablehlo<precision HIGHEST>"
    return f", precision_config = [{highest}, {highest}]"


def dot_general(w: OpWriter, a: Value, b: Value, batch: Sequence[tuple[int, int]],
                contract: Sequence[tuple[int, int]], numerics: str) -> Value:
    """`dot_general` of `a` and `b`: the result's axes are the batch axes, then `a`'s free
    axes, then `b`'s; floats at the numerics' precision."""
    la, lb = [p for p, _ in batch], [q for _, q in batch]
    ca, cb = [p for p, _ in contract], [q for _, q in contract]
    free_a = [n for k, n in enumerate(a.type.shape) if k not in la + ca]
    free_b = [n for k, n in enumerate(b.type.shape) if k not in lb + cb]
    shape = tuple(a.type.shape[p] for p in la) + tuple(free_a) + tuple(free_b)
    dims = []
    if batch:
        dims += [f"lhs_batching_dimensions = {la}", f"rhs_batching_dimensions = {lb}"]
    dims += [f"lhs_contracting_dimensions = {ca}", f"rhs_contracting_dimensions = {cb}"]
    props = f"dot_dimension_numbers = #stablehlo.dot<{', '.join(dims)}>"
    if is_float(a.type.dtype):
        props += precision_props(numerics)
    return w.op1("stablehlo.dot_general", [a, b], ir.TType(shape, a.type.dtype), props)


def diagonal(w: OpWriter, x: Value, axes: Sequence[int]) -> Value:
    """`x[..., i, i]`: `axes` merged into one last axis of the smallest of their extents.

    The axes are moved last and flattened; the diagonal is then a strided slice, since
    the flat position of `(i, i, ..., i)` is `i` times the sum of the axes' strides."""
    rank = x.type.rank
    axes = tuple(a % rank for a in axes)
    rest = tuple(a for a in range(rank) if a not in axes)
    x = transpose(w, x, rest + axes)
    sizes = [x.type.shape[len(rest) + k] for k in range(len(axes))]
    lead = x.type.shape[:len(rest)]
    flat = reshape(w, x, lead + (math.prod(sizes),))
    stride = sum(math.prod(sizes[k + 1:]) for k in range(len(sizes)))
    m = min(sizes)
    limit = (m - 1) * stride + 1 if m else 0
    return slice_(w, flat, [0] * len(flat.type.shape), lead + (limit,),
                  [1] * len(lead) + [stride])
