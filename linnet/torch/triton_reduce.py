"""Triton's interpreter folding a `tl.reduce` a slice at a time instead of an element at a time.

Why: under `TRITON_INTERPRET=1` (kernels on the CPU: the tests, `linnet verify`, `fuzz` and
`tune` without a GPU) Triton's interpreter runs `tl.sum`, `tl.max` and `tl.min` as NumPy
reductions, but a reduction with a combine of its own through `generic_reduce`, which visits
every element in Python and builds interpreter tensors for each. The generated kernels reduce
floats with `_lt_fmax` and `_lt_fmin` (NaN propagates) and products with `_lt_mul`, so an
attention kernel's row maxima cost seconds a launch there, most of the time of the kernel tests.

`install` replaces that fallback by the same left fold run on slices: for each position along
the axis the combine runs once, on the whole slice across the other axes. Each output element
sees the same operations on the same values in the same order as the element-by-element fold
(the accumulator is cast back to the input's dtype after every step, as there), so the results
are the same bits (`tests/torch/test_triton_reduce.py` compares them). Only the time changes.
A Triton whose interpreter lacks the method is left alone, and a combine that fails on slices
or returns other than tensors is folded element by element as before.

The maxima and minima (`_lt_fmax`, `_lt_fmin`) go faster still: their combine selects one of
its two operands (the first NaN, else the first of the greatest), and a selection that is
associative picks the same element whichever way the operands are grouped, so neighbours are
combined in pairs, halving the axis each round: log2(n) combines instead of n - 1, the same
bits. A product's rounding depends on the grouping, so `_lt_mul` keeps the left fold.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import numpy as np

ElementWise = Callable[[Any, tuple], list]

# Combines that return one of their operands and are associative: folded in pairs.
SELECTIONS = frozenset({"_lt_fmax", "_lt_fmin"})

_INSTALLED: dict[str, ElementWise] = {}


@lru_cache(maxsize=None)
def install() -> bool:
    """Patch the interpreter's `ReduceOps.generic_reduce` (once per process, the answer kept):
    True when the sliced fold is in place, False when there is no such interpreter."""
    try:
        from triton.runtime import interpreter
    except Exception:  # noqa: BLE001 - no Triton, or one that does not import: nothing to do
        return False
    ops = getattr(interpreter, "ReduceOps", None)
    if ops is None or not all(hasattr(ops, name) for name in
                              ("generic_reduce", "unravel", "to_tensor")):
        return False
    element_wise = _INSTALLED["element_wise"] = ops.generic_reduce

    def generic_reduce(self, input):
        try:
            folded = sliced_fold(self, input)
        except Exception:  # noqa: BLE001 - a combine meant for scalars: the interpreter's fold
            folded = None  # answers (and raises again what is really wrong)
        return element_wise(self, input) if folded is None else folded

    ops.generic_reduce = generic_reduce
    return True


def element_wise_reduce() -> ElementWise | None:
    """The interpreter's own fold, as it was before `install` (None before it)."""
    return _INSTALLED.get("element_wise")


def sliced_fold(op: Any, inputs: tuple) -> list | None:
    """What `op.generic_reduce(inputs)` returns, computed a slice at a time; None where the
    element-by-element fold must answer (an empty axis, a combine returning non-tensors)."""
    keep_dims, original_axis = op.keep_dims, op.axis
    inputs, axis = op.unravel(inputs, op.axis)
    datas = [x.handle.data for x in inputs]
    shape = datas[0].shape
    if shape[axis] == 0:
        return None
    out_shape = shape[:axis] + shape[axis + 1:]

    if _halves(shape[axis]) and getattr(op.combine_fn.fn, "__name__", None) in SELECTIONS:
        datas = _pairwise(op, inputs, datas, axis)
        if datas is None:
            return None
        acc = tuple(op.to_tensor(np.take(d, 0, axis=axis), x.dtype)
                    for d, x in zip(datas, inputs))
    else:
        acc = _left_fold(op, inputs, datas, axis, out_shape)
        if acc is None:
            return None
    results = []
    for a, d, x in zip(acc, datas, inputs):
        data = _shaped(a.handle.data, out_shape, d.dtype)
        if keep_dims:
            data = (np.expand_dims(data, axis) if original_axis is not None
                    else data.reshape((1,) * len(shape)))
        elif original_axis is None:
            data = data.item()
        results.append(op.to_tensor(data, x.dtype))
    return results


def _left_fold(op: Any, inputs: tuple, datas: list, axis: int, out_shape: tuple) -> tuple | None:
    """The combine applied along the axis one position at a time, as the interpreter does."""
    def at(k: int) -> tuple:
        return tuple(op.to_tensor(np.take(d, k, axis=axis), x.dtype)
                     for d, x in zip(datas, inputs))

    acc = at(0)
    for k in range(1, datas[0].shape[axis]):
        out = _combined(op, acc, at(k))
        if out is None:
            return None
        acc = tuple(op.to_tensor(_shaped(o.handle.data, out_shape, d.dtype), x.dtype)
                    for o, d, x in zip(out, datas, inputs))
    return acc


def _halves(n: int) -> bool:
    """Can an axis of n positions be halved down to one? (A tile's axes are powers of two.)"""
    return n > 0 and n & (n - 1) == 0


def _pairwise(op: Any, inputs: tuple, datas: list, axis: int) -> list | None:
    """The axis (a power of two) halved until one position is left: positions 2i and
    2i + 1 combined, so the operands stay in their order."""
    while datas[0].shape[axis] > 1:
        n = datas[0].shape[axis]
        evens, odds = np.arange(0, n, 2), np.arange(1, n, 2)
        left = tuple(op.to_tensor(np.take(d, evens, axis=axis), x.dtype)
                     for d, x in zip(datas, inputs))
        right = tuple(op.to_tensor(np.take(d, odds, axis=axis), x.dtype)
                      for d, x in zip(datas, inputs))
        out = _combined(op, left, right)
        if out is None:
            return None
        datas = [_shaped(o.handle.data, half.handle.data.shape, d.dtype)
                 for o, half, d in zip(out, left, datas)]
    return datas


def _combined(op: Any, a: tuple, b: tuple) -> tuple | None:
    """The combine on two tuples of operands: its results, None where they are not tensors."""
    from triton import language as tl
    out = op.combine_fn.fn(*a, *b)
    out = out if isinstance(out, tuple) else (out,)
    return out if all(isinstance(o, tl.core.tensor) for o in out) else None


def _shaped(data: Any, shape: tuple, dtype: Any) -> np.ndarray:
    """The accumulator as the element-by-element fold stores it: the output's shape (a
    one-element array for a scalar), in the input's dtype."""
    return np.broadcast_to(np.asarray(data), shape or (1,)).reshape(shape).astype(dtype)
