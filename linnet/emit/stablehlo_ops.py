"""How each tensor-IR primitive is computed in StableHLO: the table of the StableHLO printer.

Every row writes operations through an `OpWriter`, which prints them in MLIR's generic form
(`%v3 = "stablehlo.add"(%v1, %v2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`). The
generic form is verbose but has one grammar for every operation and does not change between
releases of the dialect, so the text parses on every JAX that bundles StableHLO.

The semantics are the JAX table's (`jax_ops.py`), which are XLA's, row for row:

- Elementwise operands are broadcast to the result shape first (`broadcast_in_dim`, axes
  aligned on the right, size-1 axes stretched), since StableHLO never broadcasts implicitly.
- Integers wrap; `div` is `stablehlo.divide` (truncating; `MIN / -1` is `MIN`), `mod` is
  `stablehlo.remainder` (the dividend's sign; `fmod` for floats). An integer divisor of 0
  is made 1 and the quotient 0 (`_int_div_mod`): the language's `x / 0` and `x % 0` are 0.
- `shl`/`shr` convert the count to the shifted dtype and use `shift_left`,
  `shift_right_arithmetic` (signed) or `shift_right_logical` (unsigned): counts of the width
  or more give 0, or the sign for an arithmetic shift, as `lax` does.
- Comparisons use `compare_type` SIGNED, UNSIGNED (unsigned and bool) or FLOAT (no total
  order: NaN compares unequal), as JAX lowers them.
- `min`/`max` are `stablehlo.minimum`/`maximum`, which propagate NaN (IEEE-754 minimum and
  maximum), the very operations `jnp.minimum`/`jnp.maximum` lower to. A float max or min
  reduction is also NaN where its slice holds one (`_nan_where_nan`): XLA's vectorised CPU
  reductions can skip a NaN.
- `cast` is `stablehlo.convert` (float to integer truncates, integers keep their low bits),
  except to `bool`, which is `x != 0`.
- Sums, products, scans and contractions of f16/bf16 values run in f32 and round once;
  an empty `max` is the dtype's lowest value (`-inf` for floats), an empty `min` its highest.
- `dot` and `Einsum` are `dot_general` with `precision_config = [HIGHEST, HIGHEST]` unless
  the numerics are "fast".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

from .. import prims
from ..ir import tensor as ir
from ..ir import kernel_numerics as kn
from .common import (HALF, SIGNED, UNSIGNED, attr_int, attr_ints, freeze, gathered_first,
                     highest_value, is_float, lowest_value)
from .jax_ops import value_of

ELEMENT = {"bool": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64",
           "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64",
           "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}

# (significand bits after the point, lowest normal exponent, highest exponent, bit width)
_FLOAT_FORMATS = {"f16": (10, -14, 15, 16), "bf16": (7, -126, 127, 16),
                  "f32": (23, -126, 127, 32), "f64": (52, -1022, 1023, 64)}


# ---------------------------------------------------------------- values and types

@dataclass(frozen=True, slots=True)
class Value:
    """An SSA value of the text being written: its name (`%v3`, `%v3#1`) and tensor type."""
    name: str
    type: ir.TType


def tensor_type(ty: ir.TType) -> str:
    """`tensor<4x8xf32>`; a scalar is `tensor<f32>`."""
    if ty.dtype not in ELEMENT:
        raise ValueError(f"unknown dtype {ty.dtype!r}")
    dims = "".join(f"{attr_int(n)}x" for n in ty.shape)
    return f"tensor<{dims}{ELEMENT[ty.dtype]}>"


def _types(values: Sequence[Value | ir.TType]) -> str:
    return ", ".join(tensor_type(v.type if isinstance(v, Value) else v) for v in values)


def work_dtype(dtype: str) -> str:
    """The dtype sums and products of `dtype` values accumulate in."""
    return "f32" if dtype in HALF else dtype


# ---------------------------------------------------------------------- literals

def round_float(value: float, dtype: str) -> float:
    """`value` rounded to the nearest `dtype` number, ties to even, in one step (no double
    rounding through f32); too large a magnitude becomes an infinity."""
    value = float(value)
    if not math.isfinite(value) or value == 0.0:
        return value
    frac, lowest, highest, _ = _FLOAT_FORMATS[dtype]
    exponent = max(math.frexp(abs(value))[1] - 1, lowest)
    quantum = Fraction(2) ** (exponent - frac)
    rounded = round(Fraction(abs(value)) / quantum) * quantum
    if rounded >= Fraction(2) ** (highest + 1):
        return math.copysign(math.inf, value)
    return math.copysign(float(rounded), value)


def _float_bits(value: float, dtype: str) -> str:
    """The hex bit pattern MLIR reads for an infinity or a (quiet) NaN of `dtype`."""
    frac, _, highest, width = _FLOAT_FORMATS[dtype]
    exponent_ones = ((1 << (width - frac - 1)) - 1) << frac
    bits = exponent_ones | (1 << (frac - 1)) if math.isnan(value) else exponent_ones
    if value < 0:
        bits |= 1 << (width - 1)
    return f"0x{bits:0{width // 4}X}"


def literal_text(value: bool | int | float, dtype: str) -> str:
    """A scalar as an MLIR dense element: `true`, `-3`, `4294967295` (unsigned values as
    such), `0.1` (the exact decimal of the rounded value), or `0x7F800000` for inf and NaN."""
    v = value_of(value, dtype)
    if dtype == "bool":
        return "true" if v else "false"
    if not is_float(dtype):
        return str(int(v))
    v = round_float(v, dtype)
    if not math.isfinite(v):
        return _float_bits(v, dtype)
    text = repr(v)  # the shortest decimal that reads back as v exactly
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"  # MLIR's float literals need a point: 1e+30 is 1.0e+30
    return mantissa + (f"e{exponent}" if e else "")


# ------------------------------------------------------------------- the writer

Region = Callable[["OpWriter"], None]


class OpWriter:
    """Lines of MLIR being written: fresh SSA names and one generic-form operation a call."""

    def __init__(self, depth: int = 0) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.depth = depth

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count - 1}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def op(self, name: str, operands: Sequence[Value], results: Sequence[ir.TType],
           props: str = "", regions: Sequence[Region] = ()) -> list[Value]:
        """Write `results = "name"(operands) <{props}> (regions) : (types) -> (types)`."""
        base = self.fresh() if results else ""
        values = ([Value(base, results[0])] if len(results) == 1 else
                  [Value(f"{base}#{k}", t) for k, t in enumerate(results)])
        lhs = "" if not results else f"{base} = " if len(results) == 1 else \
            f"{base}:{len(results)} = "
        head = f'{lhs}"{name}"({", ".join(v.name for v in operands)})'
        head += f" <{{{props}}}>" if props else ""
        out = tensor_type(results[0]) if len(results) == 1 else f"({_types(results)})"
        signature = f" : ({_types(operands)}) -> {out}"
        if not regions:
            self.line(head + signature)
            return values
        self.line(head + " ({")
        for k, region in enumerate(regions):
            if k:
                self.line("}, {")
            self.depth += 1
            region(self)
            self.depth -= 1
        self.line("})" + signature)
        return values

    def op1(self, name: str, operands: Sequence[Value], result: ir.TType,
            props: str = "", regions: Sequence[Region] = ()) -> Value:
        return self.op(name, operands, [result], props, regions)[0]

    def block_args(self, types: Sequence[ir.TType]) -> list[Value]:
        """Open a region's block with fresh arguments of `types`."""
        values = [Value(self.fresh(), t) for t in types]
        args = ", ".join(f"{v.name}: {tensor_type(v.type)}" for v in values)
        self.lines.append("  " * (self.depth - 1) + f"^bb0({args}):")
        return values

    def ret(self, values: Sequence[Value], name: str = "stablehlo.return") -> None:
        self.line(f'"{name}"({", ".join(v.name for v in values)}) : ({_types(values)}) -> ()')


def dense_array(values: Sequence[int]) -> str:
    return f"array<i64{': ' if values else ''}{', '.join(str(attr_int(v)) for v in values)}>"


# -------------------------------------------------------------- building blocks

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


def _scalar_region(name: str, dtype: str) -> Region:
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
                 [_scalar_region(combine, x.type.dtype)])


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


# ----------------------------------------------------------------------- rows

_DIV_MOD = {"div": "divide", "mod": "remainder"}
_COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
_REDUCE = {"sum": ("add", 0), "prod": ("multiply", 1), "any": ("or", False),
           "all": ("and", True)}


@dataclass(frozen=True, slots=True)
class Row:
    """What a row gets: the writer, operands, result type, attributes and numerics."""
    w: OpWriter
    args: list[Value]
    result: ir.TType
    attrs: dict[str, Any]
    numerics: str
    op: str = ""


def _elementwise(r: Row, name: str, dtype: str | None = None) -> Value:
    xs = [broadcast(r.w, x, r.result.shape) for x in r.args]
    return r.w.op1(name, xs, ir.TType(r.result.shape, dtype or r.result.dtype))


def _int_div_mod(r: Row, op: str) -> Value:
    """Float `/` and `%` as they are; an integer one divides by 1 where the divisor is 0 and
    gives 0 there (XLA alone gives -1 for `/` and the dividend for `%`)."""
    name = f"stablehlo.{_DIV_MOD[op]}"
    d = r.result.dtype
    if is_float(d):
        return _elementwise(r, name)
    a, b = (broadcast(r.w, x, r.result.shape) for x in r.args)
    shape = r.result.shape
    zero = compare(r.w, "EQ", b, constant(r.w, 0, d, shape))
    safe = r.w.op1("stablehlo.select", [zero, constant(r.w, 1, d, shape), b], b.type)
    q = r.w.op1(name, [a, safe], r.result)
    if op == "mod":  # x % 1 == 0
        return q
    return r.w.op1("stablehlo.select", [zero, constant(r.w, 0, d, shape), q], r.result)


def _compare_row(op: str) -> Callable[[Row], Value]:
    def row(r: Row) -> Value:
        a, b = (broadcast(r.w, x, r.result.shape) for x in r.args)
        return compare(r.w, _COMPARE[op], a, b)
    return row


def _shift(op: str) -> Callable[[Row], Value]:
    def row(r: Row) -> Value:
        x, count = r.args
        d = r.result.dtype
        name = ("shift_left" if op == "shl" else
                "shift_right_logical" if d in UNSIGNED else "shift_right_arithmetic")
        return _elementwise(Row(r.w, [x, convert(r.w, count, d)], r.result, r.attrs,
                                r.numerics), f"stablehlo.{name}")
    return row


def _unary(op: str) -> Callable[[Row], Value]:
    def row(r: Row) -> Value:
        if op == "abs" and r.result.dtype in UNSIGNED:
            return r.args[0]
        return _elementwise(r, f"stablehlo.{op}")
    return row


def _select(r: Row) -> Value:
    c, a, b = (broadcast(r.w, x, r.result.shape) for x in r.args)
    return r.w.op1("stablehlo.select", [c, a, b], r.result)


def _cast(r: Row) -> Value:
    return convert(r.w, r.args[0], r.result.dtype)


def _broadcast_to(r: Row) -> Value:
    return broadcast(r.w, r.args[0], r.result.shape)


def _reshape(r: Row) -> Value:
    return reshape(r.w, r.args[0], r.result.shape)


def _permute(r: Row) -> Value:
    return transpose(r.w, r.args[0], attr_ints(r.attrs["perm"]))


def _concat(r: Row) -> Value:
    axis = attr_int(r.attrs["axis"]) % r.result.rank
    return r.w.op1("stablehlo.concatenate", r.args, r.result, f"dimension = {axis} : i64")


def _index(r: Row) -> Value:
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


def _dyn_index(r: Row) -> Value:
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


def _gather(r: Row) -> Value:
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


def _scatter_add(r: Row) -> Value:
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
                    [_scalar_region("stablehlo.add", d)])
    back = [order.index(k) for k in range(len(table))]
    return convert(r.w, transpose(r.w, total, back), r.result.dtype)


def _iota(r: Row) -> Value:
    counts = r.w.op1("stablehlo.iota", [], ir.TType(r.result.shape, "i64"),
                     "iota_dimension = 0 : i64")
    return convert(r.w, counts, r.result.dtype)


def _fill(r: Row) -> Value:
    return broadcast(r.w, convert(r.w, r.args[0], r.result.dtype), r.result.shape)


def _cumsum(r: Row) -> Value:
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
                    [_scalar_region("stablehlo.add", x.type.dtype)])
    return convert(r.w, total, r.result.dtype)


def _reduce_row(op: str) -> Callable[[Row], Value]:
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


def _diagonal(r: Row) -> Value:
    return diagonal(r.w, r.args[0], attr_ints(r.attrs["axes"]))


def _dot(r: Row) -> Value:
    """`acc + a @ b`: the operands cast to the result dtype (to f32 for a half result, which
    is computed in f32 and rounded once)."""
    w = work_dtype(r.result.dtype)
    a, b = (convert(r.w, x, w) for x in r.args[:2])
    product = convert(r.w, dot_general(r.w, a, b, [], [(a.type.rank - 1, 0)], r.numerics),
                      r.result.dtype)
    if len(r.args) == 3:
        return r.w.op1("stablehlo.add", [r.args[2], product], r.result)
    return product


#: The functions the rows of `linnet.prims` name for StableHLO (`Via`).
FUNCTIONS: dict[str, Callable[[Row], Value]] = {
    "div_mod": lambda r: _int_div_mod(r, r.op),
    "compare": lambda r: _compare_row(r.op)(r),
    "shift": lambda r: _shift(r.op)(r),
    "abs": _unary("abs"),
    "select": _select, "cast": _cast, "broadcast_to": _broadcast_to, "reshape": _reshape,
    "permute": _permute, "concat": _concat, "index": _index, "dyn_index": _dyn_index,
    "gather": _gather, "scatter_add": _scatter_add,
    "iota": _iota, "fill": _fill, "cumsum": _cumsum,
    "reduce": lambda r: _reduce_row(r.op[len("reduce_"):])(r),
    "diagonal": _diagonal, "dot": _dot,
}


def prim(w: OpWriter, op: str, args: Sequence[Value], result: ir.Ty, attrs: Any = (),
         numerics: str = "equivalent") -> Value:
    """Write the operations computing `Prim(op, args)`, as its row in `linnet.prims` says
    (a StableHLO operation, or a function of `FUNCTIONS`); its value."""
    ir.check_prim_operands(op, args, [a.type for a in args], result)
    form = prims.row(op).stablehlo
    row = Row(w, list(args), result, dict(attrs), numerics, op)
    if isinstance(form, prims.Op):
        value = _elementwise(row, form.name)
    elif isinstance(form, prims.Via):
        value = FUNCTIONS[form.name](row)
    else:
        raise ValueError(f"no StableHLO lowering for primitive {op!r}")
    if value.type != result:
        raise ValueError(f"{op}: the StableHLO row gave {value.type}, expected {result}")
    return value
