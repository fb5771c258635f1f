"""The ONNX graph being built: fresh names, shared constants, casts, and operators
computed in their work dtypes (`Nodes`); the rows of the export (`linnet.emit.onnx_ops`)
add their nodes through it.

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
from typing import Any, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper

from .. import prims
from .common import BITS, SIGNED, is_float
from .jax_ops import value_of


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


# ------------------------------------------------------------------- casts

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
