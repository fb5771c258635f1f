"""Comparing a backend's output with the oracle's.

Integers and bools must be equal. Floats must have NaN at the same positions and infinities
of the same sign at the same positions; elsewhere `|actual - expected| <= atol * scale +
rtol * |expected|`, where `scale` is the largest finite magnitude of the expected output (1
when it is 0), so `atol` is relative to the output as a whole. `(rtol, atol)` per dtype:
f64 1e-10, f32 1e-5, f16 1e-2, bf16 2e-2, each multiplied by `max(1, sqrt(n) / 4)` for a
reduction over n elements (summation orders differ between backends).
"""

from __future__ import annotations

import math

import numpy as np

TOLERANCE = {"f64": (1e-10, 1e-10), "f32": (1e-5, 1e-5), "f16": (1e-2, 1e-2),
             "bf16": (2e-2, 2e-2)}


def tolerance(dtype: str, reduction_length: int = 1) -> tuple[float, float]:
    """(rtol, atol) for an output of dtype computed through reductions of that length."""
    rtol, atol = TOLERANCE[dtype]
    factor = max(1.0, math.sqrt(max(1, reduction_length)) / 4.0)
    return rtol * factor, atol * factor


def compare(expected, actual, dtype: str, reduction_length: int = 1, *,
            slack: np.ndarray | None = None, scale_floor: float = 0.0,
            tolerances: tuple[float, float] | None = None) -> str | None:
    """None when actual matches expected for an output of `dtype`, else what differs.

    `slack` (broadcast against the output) is added to each element's allowance: the
    fuzzer gives twice the oracle's own rounding error there (its native value against the
    same computation in f64), which two half-precision evaluations may each make.
    `scale_floor` bounds the output's scale from below: an output that is all rounding
    noise (`x - log(exp(x))`, about 1e-16) is not its own scale when the values it was
    computed from are of magnitude 1. `tolerances` replaces `tolerance(dtype,
    reduction_length)`'s (rtol, atol): the cross-check holds targets to one another with
    the kernel-against-body tolerances."""
    e, a = np.asarray(expected), np.asarray(actual)
    if e.shape != a.shape:
        return f"shape {list(a.shape)}, expected {list(e.shape)}"
    if e.size == 0:
        return None
    if dtype not in TOLERANCE:
        return _exact(e, a)
    e, a = e.astype(np.float64), a.astype(np.float64)
    e_nan, a_nan = np.isnan(e), np.isnan(a)
    e_inf, a_inf = np.isinf(e), np.isinf(a)
    special = e_nan | a_nan | e_inf | a_inf
    agree = (e_nan & a_nan) | (e_inf & a_inf & (e == a))
    if np.any(special & ~agree):
        pos = tuple(int(i) for i in np.argwhere(special & ~agree)[0])
        count = int(np.sum(special & ~agree))
        return (f"NaN or infinity at {count} position(s) that differ, first at {list(pos)} "
                f"(expected {e[pos]}, got {a[pos]})")
    finite = ~special
    e, a = np.where(finite, e, 0.0), np.where(finite, a, 0.0)
    rtol, atol = tolerances or tolerance(dtype, reduction_length)
    scale = max(float(np.max(np.abs(e))), scale_floor) or 1.0
    allowed = atol * scale + rtol * np.abs(e)
    if slack is not None:
        allowed = allowed + np.where(finite, np.nan_to_num(slack, posinf=0.0), 0.0)
    diff = np.abs(a - e)
    if np.all(diff <= allowed):
        return None
    ratio = diff / allowed
    pos = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratio)), e.shape))
    count = int(np.sum(diff > allowed))
    return (f"{count} of {e.size} elements beyond rtol {rtol:.1e}, atol {atol:.1e} "
            f"(x{scale:.3g}); worst at {list(pos)}: expected {e[pos]!r}, got {a[pos]!r}")


def _exact(e: np.ndarray, a: np.ndarray) -> str | None:
    differ = e != a
    if not np.any(differ):
        return None
    pos = tuple(int(i) for i in np.argwhere(differ)[0])
    return (f"{int(np.sum(differ))} of {e.size} elements differ, first at {list(pos)}: "
            f"expected {e[pos]!r}, got {a[pos]!r}")
