"""Elementwise arithmetic with the language's rules (docs/language.md, "Types and generics" and
"Statements and expressions").

Integers wrap (two's complement, NumPy's own integer arithmetic), `/` and `%` truncate toward
zero (`MIN / -1` wraps to `MIN`, `MIN % -1` is 0), and `/` or `%` by zero gives 0. Floats
follow IEEE 754 in their own dtype: `f16` and `bf16` operations run in f32 and round once,
which gives the correctly rounded result of each operation; math functions are computed in
f64 and rounded once to the dtype. Both operands of a binary operator already hold the one
dtype of the operation (literals were converted by the caller).
"""

from __future__ import annotations

import operator

import numpy as np

from ...prims import MATH as MATH_NAMES, PRIMS
from .dtypes import FLOAT, INTEGER, UNIT_ROUNDOFF, WIDTH, Lit, Precision
from .errors import OracleError, OracleUndefined

COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
           ">": np.greater, ">=": np.greater_equal}
BITWISE = {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}
_FLOAT_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
                "%": np.fmod}
#: The float functions, each a function of f64 arrays (their rows in linnet.prims).
MATH = {name: PRIMS[name].numpy for name in MATH_NAMES}


def binary(op: str, a: np.ndarray, b: np.ndarray, dtype: str, prec: Precision) -> np.ndarray:
    """`a op b` for two arrays of `dtype` (broadcasting right-aligned)."""
    with np.errstate(all="ignore"):
        if op in COMPARE:
            return np.asarray(COMPARE[op](a, b))
        if op in BITWISE:
            return np.asarray(BITWISE[op](a, b))
        if op in ("&&", "||"):
            return np.asarray(np.logical_and(a, b) if op == "&&" else np.logical_or(a, b))
        if dtype in FLOAT:
            return float_op(_FLOAT_ARITH[op], dtype, prec, a, b)
        if dtype in INTEGER:
            return _int_arith(op, a, b, dtype)
    raise OracleError(f"operator `{op}` on {dtype}")


def float_op(fn, dtype: str, prec: Precision, *args: np.ndarray) -> np.ndarray:
    """fn computed in the dtype's compute type, rounded once to the dtype."""
    work = prec.compute(dtype)
    with np.errstate(all="ignore"):
        out = fn(*(np.asarray(x).astype(work, copy=False) for x in args))
        return np.asarray(out).astype(prec.np(dtype))


def _int_arith(op: str, a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    if op in ("+", "-", "*"):
        fn = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
        return np.asarray(fn(a, b)).astype(a.dtype, copy=False)
    zero = np.asarray(b == 0)
    safe = np.where(zero, np.ones_like(b), b)  # `x / 0` and `x % 0` are 0 (x % 1 == 0)
    quotient = truncating_div(a, safe, dtype)
    if op == "/":
        return np.asarray(np.where(zero, 0, quotient)).astype(a.dtype, copy=False)
    return np.asarray(a - quotient * safe).astype(a.dtype, copy=False)


def truncating_div(a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    """Integer division truncating toward zero, wrapping `MIN / -1` to `MIN`."""
    q = np.asarray(np.floor_divide(a, b))
    if dtype.startswith("i"):
        inexact = (a - q * b) != 0
        q = np.where(inexact & ((a < 0) != (b < 0)), q + 1, q)
    return np.asarray(q).astype(a.dtype, copy=False)


def negate(x: np.ndarray, dtype: str, prec: Precision) -> np.ndarray:
    with np.errstate(all="ignore"):
        if dtype in FLOAT:
            return float_op(np.negative, dtype, prec, x)
        return np.asarray(np.negative(x)).astype(x.dtype, copy=False)


def absolute(x: np.ndarray, dtype: str, prec: Precision) -> np.ndarray:
    """`abs`, wrapping for integers (`abs(MIN) == MIN`)."""
    with np.errstate(all="ignore"):
        if dtype in FLOAT:
            return float_op(np.abs, dtype, prec, x)
        return np.asarray(np.abs(x)).astype(x.dtype, copy=False)


def minmax(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise `min`/`max`; a NaN on either side gives NaN."""
    return np.asarray((np.minimum if name == "min" else np.maximum)(a, b))


def math_fn(name: str, x: np.ndarray, dtype: str, prec: Precision) -> np.ndarray:
    """`exp log sqrt rsqrt sin cos tanh` computed in f64 and rounded once to the dtype
    (`tanh` skewed as `prec.tanh_skew` says)."""
    with np.errstate(all="ignore"):
        wide = np.asarray(x).astype(np.float64)
        out = MATH[name](wide)
        if name == "tanh" and prec.tanh_skew:
            out = out - 2 * prec.tanh_skew * UNIT_ROUNDOFF[dtype] * (wide - out)
        return np.asarray(out).astype(prec.np(dtype))


def shift(name: str, x: np.ndarray, n: np.ndarray, dtype: str) -> np.ndarray:
    """`shl`/`shr` on integers: `shr` arithmetic on signed, logical on unsigned dtypes.

    A count of the dtype's width or more shifts every bit out: 0, or for a signed `shr` the
    sign (-1 or 0), as the project documents it for every backend (docs/exports.md);
    a negative count is undefined."""
    n = np.asarray(n)
    if np.any(n < 0):
        raise OracleUndefined(f"`{name}` by a negative count")
    width = WIDTH[dtype]
    big = n >= width
    count = np.where(big, 0, n).astype(x.dtype)
    with np.errstate(all="ignore"):
        if name == "shl":
            out = np.where(big, np.zeros((), x.dtype), np.left_shift(x, count))
        else:
            shifted = np.right_shift(x, count)  # arithmetic for signed, logical for unsigned
            gone = np.where(x < 0, np.array(-1, x.dtype), np.zeros((), x.dtype)) \
                if dtype.startswith("i") else np.zeros((), x.dtype)
            out = np.where(big, gone, shifted)
    return np.asarray(out).astype(x.dtype, copy=False)


# ------------------------------------------------------------------ literals

_INT_FOLD = {"+": operator.add, "-": operator.sub, "*": operator.mul,
             "&": operator.and_, "|": operator.or_, "^": operator.xor}


def fold(op: str, a: Lit, b: Lit):
    """An operator on two literals, exactly (integers) or in f64 (floats): a Lit, or a
    bool array for a comparison."""
    kind = "float" if "float" in (a.kind, b.kind) else "int"
    x, y = a.value, b.value
    if op in COMPARE:
        return np.array(bool(COMPARE[op](x, y)))
    if kind == "int":
        return Lit(_fold_int(op, int(x), int(y)), "int")
    x, y = float(x), float(y)
    with np.errstate(all="ignore"):
        value = float(_FLOAT_ARITH[op](np.float64(x), np.float64(y)))
    return Lit(value, "float")


def _fold_int(op: str, x: int, y: int) -> int:
    if op in _INT_FOLD:
        return _INT_FOLD[op](x, y)
    if y == 0:
        return 0  # `x / 0` and `x % 0` are 0
    q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
    return q if op == "/" else x - q * y


def fold_shift(name: str, a: Lit, b: Lit) -> Lit:
    if b.value < 0:
        raise OracleUndefined(f"`{name}` by a negative count")
    return Lit(int(a.value) << int(b.value) if name == "shl" else int(a.value) >> int(b.value),
               "int")


def fold_math(name: str, a: Lit) -> Lit:
    with np.errstate(all="ignore"):
        out = MATH[name](np.float64(a.value))
    return Lit(float(out), "float")
