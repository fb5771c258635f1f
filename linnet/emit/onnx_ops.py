"""How each tensor-IR primitive is built as ONNX nodes: the table of the ONNX export.

`prim` and `einsum` add the nodes computing one IR expression to a `Nodes` (the node list
of one ONNX graph) and return the name of the value they produce. Semantics are the
language's (docs/language.md, "Types and generics", `docs/ir.md`), bit for bit on integers:

- Integer `add sub mul neg` wrap (onnxruntime's kernels wrap); `div` is ONNX `Div`, which
  truncates toward zero, and `mod` is `a - (a / b) * b`, the sign of the dividend (not
  `Mod(fmod=1)`, which onnxruntime 1.30 computes through doubles). A signed
  divisor of -1 is replaced by 1 first (`MIN / -1` traps in C++): the quotient is then
  negated, so `MIN / -1 == MIN` and `MIN % -1 == 0`. A zero divisor is replaced by 1
  too (the language's `x / 0` and `x % 0` are 0; C++ would trap), and the quotient made 0.
- `cast` is ONNX `Cast`: float to integer truncates toward zero, integer to integer keeps
  the low bits, anything to bool is `!= 0`.
- `shl`/`shr` are `BitShift` on the unsigned dtype of the same width. ONNX leaves counts of
  the width or more undefined, so the count is clamped to `width - 1` and a second shift by
  one more bit clears the value (`shl`, unsigned `shr`: 0, as the PyTorch table gives);
  a signed `shr` shifts `x ^ s` logically, `s` being -1 where `x < 0` else 0, and xors `s`
  back: an arithmetic shift whose large counts give the sign.
- `min`/`max` propagate NaN (ONNX `Min`/`Max` do); onnxruntime's `ReduceMax`/`ReduceMin`
  skip NaN, so a float max/min reduction is NaN where its slice holds one (`IsNaN`).
- onnxruntime sums and multiplies integers in `ReduceSum`/`ReduceProd`/`Einsum` through
  floating point (inexact past 2**53, and saturating). Integer sums are therefore a `MatMul`
  by a vector of ones (exact, wrapping), integer products a tree of `Mul`s over halves of
  the axis, integer einsums broadcast products summed that way.
- Empty reductions are constants (shapes are static): 0, 1, the dtype's lowest value for
  `max` (-inf for floats), its highest for `min`, false for `any`, true for `all`; so is a
  contraction over an empty axis (zeros: onnxruntime's `Einsum` dies of SIGFPE on one).

Work dtypes. onnxruntime's CPU kernels exist for some dtypes only (no `Add` on bf16, no
`Where` on i16 or bool, no `Min` on u16, ...). `WORK` lists, per ONNX operator, the dtypes
computed in a wider one: the operands are cast there, the operator runs, the result is
cast back. Each entry gives identical results: integers wrap modulo a larger power of two
(so the low bits are exact) or are held exactly; f16/bf16 arithmetic and math run in f32
and round once (as PyTorch computes them on the CPU), and half sums, scans and
contractions accumulate in f32.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper

from .. import prims
from ..ir import tensor as ir
from .jax_ops import value_of
from .common import (BITS, SIGNED, UNSIGNED, PrimCall, attr_int, attr_ints, freeze,
                     gathered_first, is_float)
from .torch_ops import highest, lowest

#: The ONNX element type of each Linnet dtype.
ELEM = {"bool": TensorProto.BOOL, "i8": TensorProto.INT8, "i16": TensorProto.INT16,
        "i32": TensorProto.INT32, "i64": TensorProto.INT64, "u8": TensorProto.UINT8,
        "u16": TensorProto.UINT16, "u32": TensorProto.UINT32, "u64": TensorProto.UINT64,
        "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16, "f32": TensorProto.FLOAT,
        "f64": TensorProto.DOUBLE}

_NP = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
       "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
       "f16": np.float16, "f32": np.float32, "f64": np.float64}

HALF = ("f16", "bf16")
_UNSIGNED_TWIN = {"i8": "u8", "i16": "u16", "i32": "u32", "i64": "u64",
                  "u8": "u8", "u16": "u16", "u32": "u32", "u64": "u64"}

# ------------------------------------------------------------- work dtypes

_HALVES = {"f16": "f32", "bf16": "f32"}
_NARROW_INTS = {"i8": "i32", "i16": "i32", "u8": "i32", "u16": "i32"}
_ARITH = ("Add", "Sub", "Mul", "Div", "Mod", "Abs", "Sqrt", "Reciprocal", "IsNaN",
          "ReduceSum", "ReduceProd", "Equal")
#: The ONNX operators of the table's rows (`Op`): halves computed in f32, and the dtypes
#: each row adds (onnxruntime has no kernel for them).
_ROW_OPS = {form.name: dict(form.work) for form in (r.onnx for r in prims.PRIMS.values())
            if isinstance(form, prims.Op)}

#: ONNX operator -> {dtype: the dtype it is computed in}; dtypes not listed run as they are.
WORK: dict[str, dict[str, str]] = {
    **{op: _HALVES for op in _ARITH},
    **{op: {**_HALVES, **work} for op, work in _ROW_OPS.items()},
    **{op: {**_HALVES, "i16": "i32", "u16": "i32"} for op in ("Min", "Max")},
    # negation of unsigned values: in a wider signed dtype, then the low bits
    "Neg": {**_HALVES, "u8": "i32", "u16": "i32", "u32": "i64", "u64": "i64"},
    **{op: {"bf16": "f32", "bool": "u8"}
       for op in ("Less", "LessOrEqual", "Greater", "GreaterOrEqual")},
    "Where": {"bf16": "f32", "bool": "u8", "i8": "i32", "i16": "i32", "u16": "i32",
              "u32": "i64", "u64": "i64"},
    "BitShift": {"u16": "u32"},  # onnxruntime shifts u8, u32 and u64 only
    "Expand": {"bf16": "f32"},
    "CumSum": {**_HALVES, **_NARROW_INTS, "u32": "i64", "u64": "i64"},
    **{op: {"bf16": "f32", "i16": "i32", "u16": "i32", "u32": "i64"}
       for op in ("ReduceMax", "ReduceMin")},
    "MatMul": {**_HALVES, **_NARROW_INTS},
    "Einsum": _HALVES,
    "ScatterND": _HALVES,  # a gather's adjoint: half values summed in f32
}


def work(op: str, dtype: str) -> str:
    """The dtype ONNX operator `op` computes `dtype` values in."""
    return WORK.get(op, {}).get(dtype, dtype)


# ------------------------------------------------------------------- nodes

class Scope:
    """What the graphs of one model share: fresh names and the constants (initializers of
    the main graph, visible in every subgraph)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.initializers: list[onnx.TensorProto] = []
        self._consts: dict[tuple, str] = {}
        #: the output of each `Cast` node -> (its input, the input's dtype)
        self.cast_sources: dict[str, tuple[str, str]] = {}

    def fresh(self, prefix: str = "v") -> str:
        k = self.counts.get(prefix, 0)
        self.counts[prefix] = k + 1
        return f"{prefix}{k}"

    def const(self, values: Any, dtype: str, shape: tuple[int, ...]) -> str:
        """A constant tensor (an initializer), shared by every use of the same value."""
        flat = tuple(np.asarray(values, dtype=object).reshape(-1).tolist())
        key = (dtype, shape, tuple(repr(v) for v in flat))
        if key not in self._consts:
            name = self._consts[key] = self.fresh("c")
            self.initializers.append(_tensor(name, flat, dtype, shape))
        return self._consts[key]


def _tensor(name: str, flat: tuple, dtype: str, shape: tuple[int, ...]) -> onnx.TensorProto:
    values = [value_of(v, dtype) for v in flat]
    if dtype == "bf16":
        return helper.make_tensor(name, TensorProto.BFLOAT16, shape, values)
    array = np.array(values, dtype=_NP[dtype]).reshape(shape)
    return onnx.numpy_helper.from_array(array, name)


class Nodes:
    """The nodes of one ONNX graph, added in order; every value is named by the scope."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.nodes: list[onnx.NodeProto] = []

    def add(self, op: str, inputs: Sequence[str], outputs: int = 1, **attrs: Any
            ) -> str | list[str]:
        """Add a node; its output name (a list of them when `outputs` is not 1)."""
        names = [self.scope.fresh() for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, list(inputs), names,
                                           name=self.scope.fresh("n"), **attrs))
        return names[0] if outputs == 1 else names

    def const(self, value: Any, dtype: str, shape: tuple[int, ...] = ()) -> str:
        """A constant: a scalar `value` broadcast to `shape` when it is a plain number.

        Only the scalar is an initializer, expanded to `shape` by a node (`fill`): an
        initializer holds every element, and shapes here can be as large as the program's
        (a vector of 10**8 ones would be 800 MB of model)."""
        if np.ndim(value) == 0 and math.prod(shape) != 1:
            return self.fill(value, dtype, tuple(shape))
        return self.scope.const(value, dtype, tuple(shape))

    def ints(self, values: Sequence[int]) -> str:
        """A 1-D i64 constant (shapes, axes, starts, ...)."""
        return self.const(list(values), "i64", (len(values),))

    def cast(self, x: str, src: str, dst: str) -> str:
        """`x` (of dtype `src`) as `dst`. A cast back of a lossless cast (`dst` to a dtype
        holding each of its values, then back to `dst`) is the original value: no node.

        Besides saving two nodes, this keeps models away from an onnxruntime bug (seen in
        1.32.0): its optimizer removes such a round trip in the main graph but leaves a
        `Loop` body that reads the result asking for the removed value ("Missing Input"),
        although the model is valid. `cast<bool>(cast<f32>(x)) | v` in a loop
        whose cast is hoisted out of it is one (docs/exports.md)."""
        if src == dst:
            return x
        source = self.scope.cast_sources.get(x)
        if source is not None and source[1] == dst and lossless(dst, src):
            return source[0]
        y = self.add("Cast", [x], to=ELEM[dst])
        self.scope.cast_sources[y] = (x, src)
        return y

    def op(self, op: str, xs: Sequence[str], dtype: str, *, pre: Sequence[str] = (),
           post: Sequence[str] = (), out: str | None = None, **attrs: Any) -> str:
        """ONNX `op` over data operands `xs` of `dtype`, computed in its work dtype.

        `pre`/`post` are further inputs (a condition, axes, a shape) that are not cast; the
        result has dtype `out` (a comparison's bool) or else `dtype`, cast back from the
        work dtype."""
        w = work(op, dtype)
        ys = [self.cast(x, dtype, w) for x in xs]
        y = self.add(op, [*pre, *ys, *post], **attrs)
        return y if out is not None else self.cast(y, w, dtype)

    def fill(self, value: Any, dtype: str, shape: tuple[int, ...]) -> str:
        """A constant of `shape`, made by expanding a scalar (the shape may be large)."""
        scalar = self.scope.const(value, dtype, ())
        return scalar if not shape else self.op("Expand", [scalar], dtype,
                                                post=[self.ints(shape)])


#: Significant bits of each float dtype (the integers up to 2**bits are exact).
_MANTISSA = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}
_WIDER_FLOATS = {"f16": ("f32", "f64"), "bf16": ("f32", "f64"), "f32": ("f64",), "f64": ()}


def lossless(src: str, dst: str) -> bool:
    """Does casting a `src` value to `dst` and back give it again, for every value?

    bool goes through any dtype (0 and 1, then `!= 0`); an integer through any integer at
    least as wide (integer casts keep the low bits: widening and narrowing again is the
    identity, whatever the signedness) and through a float whose significand covers its
    magnitude; a float through a wider float. Nothing else (no float through an integer,
    nothing through bool) comes back unchanged for every value."""
    if src == dst or src == "bool":
        return True
    if dst == "bool" or is_float(src) and not is_float(dst):
        return False
    if is_float(src):  # f16 and bf16 hold each other's values neither way
        return dst in _WIDER_FLOATS[src]
    if is_float(dst):
        return BITS[src] - (1 if src in SIGNED else 0) <= _MANTISSA[dst]
    return BITS[dst] >= BITS[src]


# ------------------------------------------------------------- elementwise

_PLAIN_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "min": "Min", "max": "Max"}
_COMPARE = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater",
            "ge": "GreaterOrEqual"}
_BOOL_LOGIC = {"and": "And", "or": "Or", "xor": "Xor"}
_BITWISE = {"and": "BitwiseAnd", "or": "BitwiseOr", "xor": "BitwiseXor"}


def _binary(g: Nodes, op: str, a: str, b: str, ta: ir.TType, tb: ir.TType) -> str:
    d = ta.dtype
    if op in _PLAIN_BINARY:
        return g.op(_PLAIN_BINARY[op], [a, b], d)
    if op in ("div", "mod"):
        return _div_mod(g, op, a, b, d)
    if op in _COMPARE:
        return g.op(_COMPARE[op], [a, b], d, out="bool")
    if op == "ne":
        return g.add("Not", [g.op("Equal", [a, b], d, out="bool")])
    if op in _BOOL_LOGIC:
        return g.add(_BOOL_LOGIC[op] if d == "bool" else _BITWISE[op], [a, b])
    if op in ("shl", "shr"):
        return _shift(g, op, a, g.cast(b, tb.dtype, d), d)
    raise ValueError(f"unknown binary primitive {op!r}")


def _div_mod(g: Nodes, op: str, a: str, b: str, d: str) -> str:
    """Float: true division, fmod. Integer: truncating `Div`, and the remainder as
    `a - (a / b) * b` (onnxruntime before 1.32 takes an integer `Mod` through doubles,
    inexact for 64-bit values); a signed divisor of -1 becomes 1 (C++ traps on
    MIN / -1), the quotient then negated; a zero divisor becomes 1, the quotient then 0
    (and so the remainder)."""
    if is_float(d):
        return g.op("Div", [a, b], d) if op == "div" else g.op("Mod", [a, b], d, fmod=1)
    one = g.const(1, d)
    zero = g.op("Equal", [b, g.const(0, d)], d, out="bool")
    safe = select(g, zero, one, b, d)
    if d in SIGNED:
        minus_one = g.op("Equal", [b, g.const(-1, d)], d, out="bool")
        safe = select(g, minus_one, one, safe, d)
    quotient = g.op("Div", [a, safe], d)
    if op == "mod":  # x % 1 == x % -1 == 0
        return g.op("Sub", [a, g.op("Mul", [quotient, safe], d)], d)
    if d in SIGNED:
        quotient = select(g, minus_one, g.op("Neg", [quotient], d), quotient, d)
    return select(g, zero, g.const(0, d), quotient, d)


def select(g: Nodes, c: str, a: str, b: str, dtype: str) -> str:
    return g.op("Where", [a, b], dtype, pre=[c])


def _shift(g: Nodes, op: str, x: str, n: str, d: str) -> str:
    """`shl`/`shr` by a count `n` of x's dtype, on the unsigned dtype of the same width
    (see the module docstring for counts of the width or more)."""
    bits, u = BITS[d], _UNSIGNED_TWIN[d]
    w = work("BitShift", u)  # u16 shifts in u32: the low 16 bits are the same
    n64 = g.cast(n, d, "i64")
    count = g.cast(g.op("Min", [n64, g.const(bits - 1, "i64")], "i64"), "i64", w)
    if op == "shr" and d in SIGNED:
        sign = g.op("Neg", [g.cast(g.op("Less", [x, g.const(0, d)], d, out="bool"),
                                   "bool", d)], d)  # -1 where x < 0, else 0
        flipped = g.cast(g.cast(g.add("BitwiseXor", [x, sign]), d, u), u, w)  # >= 0
        shifted = g.cast(g.add("BitShift", [flipped, count], direction="RIGHT"), w, u)
        return g.add("BitwiseXor", [g.cast(shifted, u, d), sign])
    direction = "LEFT" if op == "shl" else "RIGHT"
    big = g.cast(g.op("GreaterOrEqual", [n64, g.const(bits, "i64")], "i64", out="bool"),
                 "bool", w)  # 1 where the count is the width or more: one more bit out
    shifted = g.add("BitShift", [g.cast(g.cast(x, d, u), u, w), count], direction=direction)
    if w != u:  # bits shifted past the width of u are dropped before the second shift
        shifted = g.cast(g.cast(shifted, w, u), u, w)
    return g.cast(g.cast(g.add("BitShift", [shifted, big], direction=direction), w, u), u, d)


def _unary(g: Nodes, op: str, x: str, d: str) -> str:
    if op == "neg":
        return g.op("Neg", [x], d)
    if op == "not":
        return g.add("Not" if d == "bool" else "BitwiseNot", [x])
    if op == "abs":
        return x if d in UNSIGNED else g.op("Abs", [x], d)
    if op == "rsqrt":  # both steps in the work dtype, rounded once
        w = work("Sqrt", d)
        y = g.add("Reciprocal", [g.add("Sqrt", [g.cast(x, d, w)])])
        return g.cast(y, w, d)
    raise ValueError(f"unknown unary primitive {op!r}")


# ------------------------------------------------------------------ shapes

def _index(g: Nodes, x: str, tx: ir.TType, items: tuple) -> str:
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


def _dyn_index(g: Nodes, x: str, positions: Sequence[str], tys: Sequence[ir.TType]) -> str:
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


def _gather(g: Nodes, c: PrimCall) -> str:
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


def _scatter_add(g: Nodes, c: PrimCall) -> str:
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


def _diagonal(g: Nodes, x: str, tx: ir.TType, axes: tuple[int, ...]) -> str:
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


def _dot(g: Nodes, args: Sequence[str], tys: Sequence[ir.TType], result: ir.TType) -> str:
    """`acc + a @ b`: the operands cast to the result dtype (a half one computed in f32)."""
    d = result.dtype
    w = work("MatMul", d)
    a, b = (g.cast(g.cast(x, t.dtype, d), d, w) for x, t in zip(args[:2], tys[:2]))
    product = g.cast(g.add("MatMul", [a, b]), w, d)
    return g.op("Add", [args[2], product], d) if len(args) == 3 else product


# -------------------------------------------------------------- reductions

def _reduce(g: Nodes, op: str, x: str, tx: ir.TType, tr: ir.TType,
            axes: tuple[int, ...]) -> str:
    axes = tuple(sorted({a % tx.rank if tx.rank else a for a in axes}))
    d = tr.dtype
    x = g.cast(x, tx.dtype, d)  # accumulate in the result dtype
    if not axes:
        return x
    if any(tx.shape[a] == 0 for a in axes):
        return g.fill(_empty_value(op, d), d, tr.shape)
    if op in ("sum", "prod") and not is_float(d):
        return _int_fold(g, op, x, tx.shape, d, axes)
    name = {"sum": "ReduceSum", "prod": "ReduceProd", "max": "ReduceMax", "min": "ReduceMin",
            "any": "ReduceMax", "all": "ReduceMin"}[op]
    if d == "u64" and op in ("max", "min"):
        return _u64_extreme(g, name, x, axes)
    y = g.op(name, [x], d, post=[g.ints(axes)], keepdims=0)
    if is_float(d) and op in ("max", "min"):  # onnxruntime's reductions skip NaN
        nan = g.op("IsNaN", [x], d, out="bool")
        has_nan = g.add("ReduceMax", [nan, g.ints(axes)], keepdims=0)
        y = select(g, has_nan, g.const(math.nan, d), y, d)
    return y


def _empty_value(op: str, d: str) -> bool | int | float:
    """A reduction over nothing: its identity."""
    if op == "max":
        return lowest(d)
    if op == "min":
        return highest(d)
    return {"sum": 0, "prod": 1, "any": False, "all": True}[op]


def _u64_extreme(g: Nodes, name: str, x: str, axes: tuple[int, ...]) -> str:
    """Max/min of u64 (no kernel): flip the sign bit, so that i64 order is u64 order."""
    sign = g.const(1 << 63, "u64")
    flipped = g.cast(g.add("BitwiseXor", [x, sign]), "u64", "i64")
    y = g.add(name, [flipped, g.ints(axes)], keepdims=0)
    return g.add("BitwiseXor", [g.cast(y, "i64", "u64"), sign])


def _to_back(g: Nodes, x: str, shape: tuple[int, ...], axes: tuple[int, ...]
             ) -> tuple[str, tuple[int, ...], int]:
    """The reduced axes moved last and merged into one: (value, kept shape, their size)."""
    rest = tuple(a for a in range(len(shape)) if a not in axes)
    perm = rest + axes
    if perm != tuple(range(len(shape))):
        x = g.add("Transpose", [x], perm=list(perm))
    kept = tuple(shape[a] for a in rest)
    k = math.prod(shape[a] for a in axes)
    return g.add("Reshape", [x, g.ints(kept + (k,))], allowzero=1), kept, k


def _int_fold(g: Nodes, op: str, x: str, shape: tuple[int, ...], d: str,
              axes: tuple[int, ...]) -> str:
    """An exact, wrapping integer sum (`MatMul` by ones) or product (a `Mul` tree)."""
    x, kept, k = _to_back(g, x, shape, axes)
    if op == "sum":
        w = work("MatMul", d)
        return g.cast(g.add("MatMul", [g.cast(x, d, w), g.const(1, w, (k,))]), w, d)
    last = len(kept)
    while k > 1:
        h = k // 2
        lo = g.add("Slice", [x, g.ints([0]), g.ints([h]), g.ints([last])])
        hi = g.add("Slice", [x, g.ints([h]), g.ints([2 * h]), g.ints([last])])
        y = g.add("Mul", [lo, hi])
        if k % 2:
            odd = g.add("Slice", [x, g.ints([2 * h]), g.ints([k]), g.ints([last])])
            y = g.add("Concat", [y, odd], axis=last)
        x, k = y, h + k % 2
    return g.add("Squeeze", [x, g.ints([last])])


# ------------------------------------------------------------ contractions

def einsum(g: Nodes, spec: str, args: Sequence[str], tys: Sequence[ir.TType],
           result: ir.TType, acc: str = "") -> str:
    """`Einsum(spec, args)`: operands cast to `acc`, contracted in `acc` (a half one in
    f32, an integer one exactly), the result cast to its dtype. A contraction over an
    empty axis is zeros: onnxruntime's `Einsum` dies of SIGFPE on one (1.30, 1.32)."""
    if _sums_over_nothing(spec, tys):
        return g.fill(0, result.dtype, result.shape)
    acc = acc or result.dtype
    xs = [g.cast(x, t.dtype, acc) for x, t in zip(args, tys)]
    if is_float(acc):
        y = g.op("Einsum", xs, acc, equation=spec)
    else:
        y = _einsum_int(g, spec, xs, [t.shape for t in tys], acc)
    return g.cast(y, acc, result.dtype)


def _sums_over_nothing(spec: str, tys: Sequence[ir.TType]) -> bool:
    """Does the einsum sum over a letter whose axis has size 0?"""
    ins, out = spec.split("->")
    return any(n == 0 and c not in out
               for sub, t in zip(ins.split(","), tys) for c, n in zip(sub, t.shape))


def _einsum_int(g: Nodes, spec: str, xs: Sequence[str], shapes: Sequence[tuple[int, ...]],
                d: str) -> str:
    """An integer einsum: each operand's diagonals taken, its axes laid out along all the
    letters (outputs, then summed ones), the broadcast product, then an exact sum."""
    ins, out = spec.split("->")
    subs = ins.split(",")
    summed: list[str] = []
    for s in subs:
        summed.extend(c for c in s if c not in out and c not in summed)
    full = list(out) + summed
    size: dict[str, int] = {}
    product = None
    for s, x, shape in zip(subs, xs, shapes):
        x, letters, shape = _einsum_diagonals(g, x, list(s), tuple(shape), d)
        size.update(zip(letters, shape))
        perm = [letters.index(c) for c in full if c in letters]
        if perm != list(range(len(perm))):
            x = g.add("Transpose", [x], perm=perm)
        x = g.add("Reshape", [x, g.ints([size[c] if c in letters else 1 for c in full])],
                  allowzero=1)
        product = x if product is None else g.add("Mul", [product, x])
    if not summed:
        return product
    shape = tuple(size[c] for c in full)
    axes = tuple(range(len(out), len(full)))
    return _reduce(g, "sum", product, ir.TType(shape, d),
                   ir.TType(shape[:len(out)], d), axes)


def _einsum_diagonals(g: Nodes, x: str, letters: list[str], shape: tuple[int, ...], d: str
                      ) -> tuple[str, list[str], tuple[int, ...]]:
    """A letter repeated within one operand is that operand's diagonal, placed last."""
    while len(set(letters)) < len(letters):
        c = next(c for c in letters if letters.count(c) > 1)
        pair = (letters.index(c), letters.index(c, letters.index(c) + 1))
        x = _diagonal(g, x, ir.TType(shape, d), pair)
        shape = tuple(n for k, n in enumerate(shape) if k not in pair) + (
            min(shape[k] for k in pair),)
        letters = [t for k, t in enumerate(letters) if k not in pair] + [c]
    return x, letters, shape


# -------------------------------------------------------------- the table

def _reshape(g: Nodes, x: str, shape: tuple[int, ...], to: tuple[int, ...]) -> str:
    """A reshape that only adds axes of 1 is an `Unsqueeze`, one that only drops them a
    `Squeeze`: their axes say nothing of the other sizes, so the node serves every size
    (a symbolic export needs that: linnet/cli/onnx_symbolic.py); any other is a `Reshape`."""
    added = _unit_axes(to, shape)
    if added is not None:
        return g.add("Unsqueeze", [x, g.ints(added)]) if added else x
    dropped = _unit_axes(shape, to)
    if dropped is not None:
        return g.add("Squeeze", [x, g.ints(dropped)])
    return g.add("Reshape", [x, g.ints(to)], allowzero=1)


def _unit_axes(longer: tuple[int, ...], shorter: tuple[int, ...]) -> list[int] | None:
    """The axes of `longer` that are 1 and absent from `shorter`, when `longer` is
    `shorter` with such axes added (matched from the left), else None."""
    axes, k = [], 0
    for axis, n in enumerate(longer):
        if k < len(shorter) and n == shorter[k]:
            k += 1
        elif n == 1:
            axes.append(axis)
        else:
            return None
    return axes if k == len(shorter) else None


def _iota(g: Nodes, c: PrimCall) -> str:
    (n,) = c.result.shape
    count = g.add("Range", [g.const(0, "i64"), g.const(n, "i64"), g.const(1, "i64")])
    return g.cast(count, "i64", c.result.dtype)


def _fill(g: Nodes, c: PrimCall) -> str:
    value = g.cast(c.x, c.tx.dtype, c.result.dtype)
    return g.op("Expand", [value], c.result.dtype, post=[g.ints(c.result.shape)])


def _cumsum(g: Nodes, c: PrimCall) -> str:
    d = c.result.dtype
    return g.op("CumSum", [g.cast(c.x, c.tx.dtype, d)], d, post=[g.const(c.axis, "i64")])


#: The functions the rows of `linnet.prims` name for ONNX (`Via`): (nodes, call) -> value.
FUNCTIONS: dict[str, Callable[[Nodes, PrimCall], str]] = {
    "binary": lambda g, c: _binary(g, c.op, c.args[0], c.args[1], c.types[0], c.types[1]),
    "unary": lambda g, c: _unary(g, c.op, c.x, c.tx.dtype),
    "rsqrt": lambda g, c: _unary(g, c.op, c.x, c.tx.dtype),
    "select": lambda g, c: select(g, c.args[0], c.args[1], c.args[2], c.result.dtype),
    "cast": lambda g, c: g.cast(c.x, c.tx.dtype, c.result.dtype),
    "broadcast_to": lambda g, c: g.op("Expand", [c.x], c.result.dtype,
                                      post=[g.ints(c.result.shape)]),
    "reshape": lambda g, c: _reshape(g, c.x, tuple(c.tx.shape), tuple(c.result.shape)),
    "permute": lambda g, c: g.add("Transpose", [c.x], perm=list(attr_ints(c.attrs["perm"]))),
    "concat": lambda g, c: g.add("Concat", list(c.args), axis=c.axis),
    "index": lambda g, c: _index(g, c.x, c.tx, tuple(freeze(c.attrs["items"]))),
    "dyn_index": lambda g, c: _dyn_index(g, c.x, c.args[1:], c.types[1:]),
    "gather": _gather,
    "scatter_add": _scatter_add,
    "iota": _iota,
    "fill": _fill,
    "cumsum": _cumsum,
    "reduce": lambda g, c: _reduce(g, c.op[len("reduce_"):], c.x, c.tx, c.result, c.axes),
    "diagonal": lambda g, c: _diagonal(g, c.x, c.tx, c.axes),
    "dot": lambda g, c: _dot(g, c.args, c.types, c.result),
}


def prim(g: Nodes, op: str, args: Sequence[str], arg_types: Sequence[ir.Ty], result: ir.Ty,
         attrs: Any = ()) -> str:
    """Add the nodes computing `Prim(op, args)`, as its row in `linnet.prims` says (an
    ONNX operator, or a function of `FUNCTIONS`); the name of its value."""
    tys = list(arg_types)
    ir.check_prim_operands(op, args, tys, result)
    form = prims.row(op).onnx
    call = PrimCall(op, tuple(args), tuple(tys), result, dict(attrs))
    if isinstance(form, prims.Op):
        return g.op(form.name, list(args), result.dtype)
    if isinstance(form, prims.Via):
        return FUNCTIONS[form.name](g, call)
    raise ValueError(f"no ONNX lowering for primitive {op!r}")
