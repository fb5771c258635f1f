"""Reductions and contractions as ONNX nodes: `reduce_*` (empty ones are their
identity; float max/min propagate NaN; integer sums and products exact and wrapping),
`dot`, and the `Einsum` of the tensor IR (integer einsums as broadcast products summed
exactly)."""

from __future__ import annotations

import math
from typing import Sequence

from ..ir import tensor as ir
from .common import is_float
from .onnx_elementwise import select
from .onnx_gathers import diagonal
from .onnx_nodes import Nodes, work
from .torch_ops import highest, lowest


# -------------------------------------------------------------- reductions

def reduce(g: Nodes, op: str, x: str, tx: ir.TType, tr: ir.TType,
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

def dot(g: Nodes, args: Sequence[str], tys: Sequence[ir.TType], result: ir.TType) -> str:
    """`acc + a @ b`: the operands cast to the result dtype (a half one computed in f32)."""
    d = result.dtype
    w = work("MatMul", d)
    a, b = (g.cast(g.cast(x, t.dtype, d), d, w) for x, t in zip(args[:2], tys[:2]))
    product = g.cast(g.add("MatMul", [a, b]), w, d)
    return g.op("Add", [args[2], product], d) if len(args) == 3 else product


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
    return reduce(g, "sum", product, ir.TType(shape, d),
                   ir.TType(shape[:len(out)], d), axes)


def _einsum_diagonals(g: Nodes, x: str, letters: list[str], shape: tuple[int, ...], d: str
                      ) -> tuple[str, list[str], tuple[int, ...]]:
    """A letter repeated within one operand is that operand's diagonal, placed last."""
    while len(set(letters)) < len(letters):
        c = next(c for c in letters if letters.count(c) > 1)
        pair = (letters.index(c), letters.index(c, letters.index(c) + 1))
        x = diagonal(g, x, ir.TType(shape, d), pair)
        shape = tuple(n for k, n in enumerate(shape) if k not in pair) + (
            min(shape[k] for k in pair),)
        letters = [t for k, t in enumerate(letters) if k not in pair] + [c]
    return x, letters, shape
