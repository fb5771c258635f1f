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

The nodes of one graph are built by `Nodes` (`onnx_nodes.py`, with the work dtypes of
each operator: onnxruntime computes some dtypes in a wider one); the rows live in modules
named for what they compute: `onnx_elementwise.py`, `onnx_gathers.py` (index, gather,
scatter, diagonal), `onnx_reductions.py` (reductions, `dot`, `Einsum`), and here the shape
and construction rows and the table itself (`FUNCTIONS`, `prim`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import prims
from ..ir import tensor as ir
from .common import PrimCall, attr_ints, freeze
from .onnx_elementwise import binary, select, unary
from .onnx_gathers import diagonal, dyn_index, gather, index, scatter_add
from .onnx_nodes import ELEM, HALF, WORK, Nodes, Scope, lossless, work
from .onnx_reductions import dot, einsum, reduce

__all__ = ["ELEM", "FUNCTIONS", "HALF", "Nodes", "Scope", "WORK", "einsum", "lossless",
           "prim", "select", "work"]


# ------------------------------------------------------- shapes and construction

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


# -------------------------------------------------------------- the table

#: The functions the rows of `linnet.prims` name for ONNX (`Via`): (nodes, call) -> value.
FUNCTIONS: dict[str, Callable[[Nodes, PrimCall], str]] = {
    "binary": lambda g, c: binary(g, c.op, c.args[0], c.args[1], c.types[0], c.types[1]),
    "unary": lambda g, c: unary(g, c.op, c.x, c.tx.dtype),
    "rsqrt": lambda g, c: unary(g, c.op, c.x, c.tx.dtype),
    "select": lambda g, c: select(g, c.args[0], c.args[1], c.args[2], c.result.dtype),
    "cast": lambda g, c: g.cast(c.x, c.tx.dtype, c.result.dtype),
    "broadcast_to": lambda g, c: g.op("Expand", [c.x], c.result.dtype,
                                      post=[g.ints(c.result.shape)]),
    "reshape": lambda g, c: _reshape(g, c.x, tuple(c.tx.shape), tuple(c.result.shape)),
    "permute": lambda g, c: g.add("Transpose", [c.x], perm=list(attr_ints(c.attrs["perm"]))),
    "concat": lambda g, c: g.add("Concat", list(c.args), axis=c.axis),
    "index": lambda g, c: index(g, c.x, c.tx, tuple(freeze(c.attrs["items"]))),
    "dyn_index": lambda g, c: dyn_index(g, c.x, c.args[1:], c.types[1:]),
    "gather": gather,
    "scatter_add": scatter_add,
    "iota": _iota,
    "fill": _fill,
    "cumsum": _cumsum,
    "reduce": lambda g, c: reduce(g, c.op[len("reduce_"):], c.x, c.tx, c.result, c.axes),
    "diagonal": lambda g, c: diagonal(g, c.x, c.tx, c.axes),
    "dot": lambda g, c: dot(g, c.args, c.types, c.result),
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
