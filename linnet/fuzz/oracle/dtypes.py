"""Values and dtypes: how the oracle holds Linnet values in NumPy.

A tensor (a scalar too) is a NumPy array of its dtype's NumPy type (`bf16` is
`ml_dtypes.bfloat16`; a scalar is a 0-d array). A literal, or a compile-time integer such as
a `Dim` read as a value, stays a `Lit` holding the exact Python number until it meets a
dtype (docs/language.md, "Types and generics": literals are contextual). A shape literal
`[A, B]` is a `ShapeV`. In f64 precision every float dtype is held as float64.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .errors import OracleError, OracleUndefined

INTEGER = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOAT = ("f16", "bf16", "f32", "f64")
HALF = ("f16", "bf16")
_BUILT_IN = {
    "bool": np.dtype(np.bool_), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16), "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
}
_ORDER = ("bool", *INTEGER, *FLOAT)


@lru_cache(maxsize=1)
def _bfloat16() -> np.dtype:
    import ml_dtypes  # most of a second to import: only where a bf16 value is held
    return np.dtype(ml_dtypes.bfloat16)


class _Dtypes(Mapping):
    """The NumPy dtype of each Linnet dtype (bf16's is `ml_dtypes.bfloat16`, made when first
    asked for, so that a process that holds no bf16 value never imports ml_dtypes)."""

    def __getitem__(self, name: str) -> np.dtype:
        return _bfloat16() if name == "bf16" else _BUILT_IN[name]

    def __contains__(self, name: object) -> bool:
        return name == "bf16" or name in _BUILT_IN

    def __iter__(self) -> Iterator[str]:
        return iter(_ORDER)

    def __len__(self) -> int:
        return len(_ORDER)


NUMPY: Mapping[str, np.dtype] = _Dtypes()
WIDTH = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}


def int_range(dtype: str) -> tuple[int, int]:
    """The values an integer dtype holds."""
    bits = WIDTH[dtype]
    if dtype.startswith("u"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def is_float(dtype: str) -> bool:
    return dtype in FLOAT


def is_int(dtype: str) -> bool:
    return dtype in INTEGER


@dataclass(frozen=True)
class Lit:
    """A literal or compile-time number whose dtype comes from context."""
    value: int | float
    kind: str  # "int" or "float"

    @staticmethod
    def of(value: int | float) -> "Lit":
        return Lit(value, "int" if isinstance(value, int) else "float")


class ShapeV(tuple):
    """A shape literal `[A, B]` (a tuple of ints)."""


UNIT_ROUNDOFF = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f32": 2.0 ** -24, "f64": 2.0 ** -53}
"""Half an ulp of 1 in each float dtype: the relative error of one correct rounding."""


@dataclass(frozen=True)
class Precision:
    """How floats are held: each in its own dtype ("native"), or every one in f64.

    `tanh_skew` (ulps, signed; 0 for the language's values) makes every `tanh` return
    `t - 2 * skew * u * (x - t)`, u its dtype's unit roundoff: a function whose slope is
    `1 - t*t - 2 * skew * u * t*t`, the slope a backend reads off a `tanh` output `skew`
    ulps off (`oracle.grad.gradient_slack`)."""
    f64: bool = False
    tanh_skew: float = 0.0

    def np(self, dtype: str) -> np.dtype:
        """The NumPy dtype that holds values of `dtype`."""
        if dtype not in NUMPY:
            raise OracleError(f"unknown dtype {dtype!r}")
        if self.f64 and dtype in FLOAT:
            return NUMPY["f64"]
        return NUMPY[dtype]

    def compute(self, dtype: str) -> np.dtype:
        """The NumPy dtype float arithmetic of `dtype` runs in before rounding back: f32 for
        the half dtypes (exact enough that one rounding to the half dtype gives the
        correctly rounded result of `+ - * /` and `sqrt`), else the dtype itself."""
        if dtype in HALF and not self.f64:
            return NUMPY["f32"]
        return self.np(dtype)


def lit_array(lit: Lit, dtype: str, prec: Precision) -> np.ndarray:
    """A literal taking a dtype: exact for integers (which the checker proved fit), rounded
    to nearest for floats."""
    target = prec.np(dtype)
    if dtype == "bool":
        return np.array(bool(lit.value))
    if dtype in INTEGER:
        if isinstance(lit.value, float):
            raise OracleError(f"float literal {lit.value} where {dtype} is required")
        lo, hi = int_range(dtype)
        value = int(lit.value)
        if not lo <= value <= hi:  # wrap as the dtype does (two's complement)
            value = (value - lo) % (hi - lo + 1) + lo
        return np.array(value, dtype=target)
    with np.errstate(all="ignore"):
        return np.array(float(lit.value), dtype=np.float64).astype(target)


def to_dtype(value, dtype: str, prec: Precision):
    """value (a Lit or an array) held as `dtype`; arrays of that dtype pass unchanged."""
    if isinstance(value, Lit):
        return lit_array(value, dtype, prec)
    if isinstance(value, np.ndarray) or np.isscalar(value):
        arr = np.asarray(value)
        target = prec.np(dtype)
        return arr if arr.dtype == target else arr.astype(target)
    raise OracleError(f"expected a tensor of {dtype}, found {type(value).__name__}")


def dtype_name(arr: np.ndarray) -> str:
    for name, dt in _BUILT_IN.items():
        if arr.dtype == dt:
            return name
    if arr.dtype.name == "bfloat16":
        return "bf16"
    raise OracleError(f"no Linnet dtype for NumPy {arr.dtype}")


def cast(x: np.ndarray, src: str, dst: str, prec: Precision) -> np.ndarray:
    """`cast<dst>(x)` of an array of dtype src.

    Integers keep their low bits; a float becomes an integer by truncation toward zero, and
    one that is NaN, infinite or outside the target's range after truncation has no defined
    result (OracleUndefined); to `bool` is `!= 0`; floats round to nearest."""
    target = prec.np(dst)
    if src == dst:
        return x.astype(target, copy=False)
    if dst == "bool":
        return np.asarray(x != 0)
    if src in FLOAT and dst in INTEGER:
        return _float_to_int(x, dst, target)
    with np.errstate(all="ignore"):
        if src in INTEGER and dst in FLOAT and target.name == "bfloat16":
            return x.astype(np.float64).astype(target)
        return x.astype(target)


def _float_to_int(x: np.ndarray, dst: str, target: np.dtype) -> np.ndarray:
    wide = x.astype(np.float64)
    if not np.all(np.isfinite(wide)):
        raise OracleUndefined(f"cast<{dst}> of a NaN or infinity")
    truncated = np.trunc(wide)
    lo, hi = int_range(dst)
    if truncated.size and (truncated.min() < lo or truncated.max() > hi
                           or (dst in ("i64", "u64") and truncated.max() >= float(hi))):
        raise OracleUndefined(f"cast<{dst}> of a value outside its range "
                              f"[{truncated.min():g}, {truncated.max():g}]")
    return truncated.astype(target)


__all__ = ["INTEGER", "FLOAT", "HALF", "NUMPY", "WIDTH", "Lit", "ShapeV", "Precision",
           "int_range", "is_float", "is_int", "lit_array", "to_dtype", "dtype_name", "cast"]
