"""exact-division: tensor-dots -> tensor-dots, `x / 2^k` as `x * 2^-k` in kernels, under
every numerics.

Why: in a kernel an f32 division is IEEE (`tl.div_rn` in Triton), a sequence of a dozen
instructions, while a multiplication is one. Dividing by a power of two is exact as
multiplying by its reciprocal, also a power of two: both give the one correctly rounded
value of x * 2^-k, for every x (zeros, infinities, NaN and subnormal results included),
as long as 2^-k is itself a normal number of the dtype. So the rewrite changes no bit of
any result, and applies under `exact` and `equivalent` numerics too. Row statistics
divided by a bound width (`sum / cast<f32>(C)` at C = 4096) are the common case.

Only kernels are rewritten: op bodies print as written (`x / 4096.0` and `x * 0.000244140625`
are the same computation in every runtime, so nothing is gained there).
"""

from __future__ import annotations

import math

from ...ir import tensor as ir
from ..traverse import Rewriter

_MIN_NORMAL_EXPONENT = {"f16": -14, "bf16": -126, "f32": -126, "f64": -1022}


def exact_division(program: ir.Program) -> ir.Program:
    """Divisions of kernel values by float literals that are powers of two, as products."""
    return _Exact().program(program)


def reciprocal_power_of_two(value: float, dtype: str) -> float | None:
    """1 / value when value is ±2^k with 1 / value a normal number of `dtype`, else None."""
    if dtype not in _MIN_NORMAL_EXPONENT or not math.isfinite(value) or value == 0:
        return None
    mantissa, exponent = math.frexp(abs(value))  # value = mantissa * 2^exponent
    if mantissa != 0.5:
        return None
    k = exponent - 1  # |value| = 2^k
    if not _MIN_NORMAL_EXPONENT[dtype] <= -k <= -_MIN_NORMAL_EXPONENT[dtype] - 1:
        return None
    return math.copysign(2.0 ** -k, value)


class _Exact(Rewriter):
    def func(self, f: ir.Func) -> ir.Func:
        return super().func(f) if f.kind == "kernel" else f

    def prim(self, e: ir.Prim, bind: ir.Bind) -> ir.Expr | None:
        e = super().prim(e, bind)
        if not isinstance(e, ir.Prim) or e.op != "div":
            return e
        x, s = e.args
        if not isinstance(s, ir.Lit) or isinstance(s.value, bool):
            return e
        r = reciprocal_power_of_two(float(s.value), s.type.dtype)
        if r is None:
            return e
        return ir.Prim("mul", (x, ir.Lit(r, s.type)), e.type)
