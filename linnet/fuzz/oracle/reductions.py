"""Reductions (`sum prod max min any all`) and running sums (`cumsum`).

A reduction accumulates in its dtype (docs/language.md, "Index notation and reductions";
`sum<T>` only names the dtype the body already has). Integers wrap at that dtype's width.
`f16` and `bf16` sums and
products accumulate in f32 and round once at the end (section 8: f32 accumulation), `f32` in
f32 with NumPy's pairwise summation, `f64` in f64. Over an empty axis: `sum` is 0, `prod` 1,
`max` the lowest value (`-inf` for floats), `min` the highest, `any` false, `all` true.
`max` and `min` propagate NaN.
"""

from __future__ import annotations

import numpy as np

from .dtypes import FLOAT, HALF, INTEGER, Precision, int_range
from .errors import OracleError


def reduce(op: str, body: np.ndarray, axes: tuple[int, ...], dtype: str,
           prec: Precision) -> np.ndarray:
    """body reduced over `axes` with `op`, in `dtype`."""
    target = prec.np(dtype)
    with np.errstate(all="ignore"):
        if op in ("sum", "prod"):
            fn = np.sum if op == "sum" else np.prod
            if dtype in HALF and not prec.f64:
                return np.asarray(fn(body.astype(np.float32), axis=axes)).astype(target)
            return np.asarray(fn(body, axis=axes, dtype=target)).astype(target, copy=False)
        if op in ("any", "all"):
            return np.asarray((np.any if op == "any" else np.all)(body, axis=axes))
        if op in ("max", "min"):
            return _extreme(op, body, axes, dtype, target)
    raise OracleError(f"reduction `{op}`")


def _extreme(op: str, body: np.ndarray, axes: tuple[int, ...], dtype: str,
             target: np.dtype) -> np.ndarray:
    if all(body.shape[a] > 0 for a in axes) or not axes:
        fn = np.max if op == "max" else np.min
        return np.asarray(fn(body, axis=axes)).astype(target, copy=False)
    shape = tuple(n for k, n in enumerate(body.shape) if k not in axes)
    if dtype in FLOAT:
        empty = -np.inf if op == "max" else np.inf
    else:
        lo, hi = int_range(dtype)
        empty = lo if op == "max" else hi
    return np.full(shape, empty, dtype=target)


def cumsum(x: np.ndarray, axis: int, dtype: str, prec: Precision) -> np.ndarray:
    """Running sums along `axis` in the dtype (half dtypes accumulate in f32)."""
    target = prec.np(dtype)
    with np.errstate(all="ignore"):
        if dtype in HALF and not prec.f64:
            return np.cumsum(x.astype(np.float32), axis=axis).astype(target)
        if dtype in INTEGER or dtype in FLOAT:
            return np.cumsum(x, axis=axis, dtype=target)
    raise OracleError(f"cumsum of {dtype}")
