"""Compile-time integers are i64: arithmetic on them that leaves the range is an error.

Why: dimensions, loop bounds, grid sizes and integer constants are computed by the checker
with Python integers, which never overflow, while every backend holds them in 64 bits
(ONNX and StableHLO shapes, `torch.arange`, Triton's grid). Unchecked, `const B = A * A`
squared forty times grows until memory runs out, and a dimension of 10**30 is accepted
and then crashes or wraps in the exports. So a compile-time integer (every coefficient of
its normal form, for a symbolic one) must lie in the i64 range; a dimension or a loop
bound must be a non-negative one. Both are E2105, the code of values out of their range.
"""

from __future__ import annotations

from .dim_normal_form import Dim
from .unify import Problem

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


def outside_i64(d: Dim) -> int | None:
    """A number of `d`'s normal form outside the i64 range, or None when all fit."""
    value = d.as_int()  # most are constants (every literal dimension): no tuple to build
    if value is not None:
        return None if I64_MIN <= value <= I64_MAX else value
    return next((n for n in d.coefficients() if not I64_MIN <= n <= I64_MAX), None)


def overflow_problem(d: Dim, what: str) -> Problem | None:
    """E2105 when `d` holds a number outside i64; `what` names the value for the message
    (`compile-time arithmetic`, `a dimension`, ...)."""
    bad = outside_i64(d)
    if bad is None:
        return None
    return Problem("E2105", f"{what} overflows i64: {_short(bad)}",
                   "outside -2**63 .. 2**63 - 1",
                   help="dimensions and compile-time integers are i64; keep them below "
                        "2**63")


def _short(n: int) -> str:
    """A number as written, or its order of magnitude when it is long."""
    text = str(n)
    if len(text) <= 24:
        return text
    return f"{text[:6]}... ({len(text.lstrip('-'))} digits)"
