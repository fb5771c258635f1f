"""Types and value facts that the generator tracks for everything it writes.

Why value facts: a random program is only useful when every backend must compute the same
thing, so the generator knows, for each value, an interval holding all its elements
(`Info.lo`, `Info.hi`: no overflow, no division by zero, no log of a non-positive) and
whether every backend computes it bit for bit (`Info.same`: integers always; floats when
they are dyadic numbers with few enough bits that no operation rounds, or a raw input
passed through operations that only select). Comparisons and casts to integers are only
written on values that are `same`, so no backend's rounding can flip a branch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...syntax import tree as t

MANTISSA = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}
FLOAT_CAP = {"f16": 1000.0, "bf16": 1000.0, "f32": 1e5, "f64": 1e6}
"""The largest magnitude a float value may reach: far below overflow, so sums of a few
dozen such values stay accurate."""
INT_RANGE = {
    "i8": (-128, 127), "i16": (-(1 << 15), (1 << 15) - 1), "i32": (-(1 << 31), (1 << 31) - 1),
    "i64": (-(1 << 63), (1 << 63) - 1), "u8": (0, 255), "u16": (0, (1 << 16) - 1),
    "u32": (0, (1 << 32) - 1), "u64": (0, (1 << 64) - 1),
}
INT_CAP = 1 << 40
"""64-bit values stay below this, so that a product of two of them is still checked
against the dtype's range before anything wraps."""
BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}


@dataclass(frozen=True)
class DType:
    """A dtype as written (`text`: `f32`, or a generic `T`) and what it stands for (`name`);
    `kind` is a generic's bound (`Integer`, `Numeric`, ...), empty for a concrete dtype."""
    text: str
    name: str
    kind: str = ""

    @property
    def bitwise(self) -> bool:
        """May `& | ^` and shifts apply? Integers, but not through a `Numeric` generic (whose
        values may be floats elsewhere)."""
        return self.is_int and self.kind != "Numeric"

    @property
    def is_float(self) -> bool:
        return self.name in MANTISSA

    @property
    def is_int(self) -> bool:
        return self.name in INT_RANGE

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def signed(self) -> bool:
        return self.name.startswith("i") or self.is_float

    def node(self) -> t.TypeName:
        return t.TypeName(self.text)

    def bounds(self) -> tuple[float, float]:
        """The range a value of this dtype may take without overflow (caps included)."""
        if self.is_float:
            cap = FLOAT_CAP[self.name]
            return -cap, cap
        if self.is_bool:
            return 0, 1
        lo, hi = INT_RANGE[self.name]
        return max(lo, -INT_CAP), min(hi, INT_CAP)


def dt(name: str) -> DType:
    return DType(name, name)


@dataclass(frozen=True)
class Dim:
    """A dimension: canonical `key` (equal keys are provably equal dims), its value at the
    entry's bindings, and how it is written."""
    key: str
    value: int
    node: t.Expr

    @property
    def literal(self) -> bool:
        return isinstance(self.node, t.IntLit)


def lit_dim(n: int) -> Dim:
    return Dim(str(n), n, t.IntLit(n))


def name_dim(name: str, value: int) -> Dim:
    return Dim(name, value, t.Name(name))


def dim_op(op: str, a: Dim, b: Dim) -> Dim:
    """`a op b` as a dimension (literals fold, as the checker folds them)."""
    value = {"+": a.value + b.value, "-": a.value - b.value, "*": a.value * b.value,
             "/": a.value // max(b.value, 1)}[op]
    if a.literal and b.literal:
        return lit_dim(value)
    return Dim(f"({a.key}{op}{b.key})", value, t.Binary(op, a.node, b.node))


@dataclass(frozen=True)
class Ty:
    """A tensor type (a scalar has no dims)."""
    dims: tuple[Dim, ...]
    dtype: DType

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def size(self) -> int:
        return math.prod(d.value for d in self.dims)

    def keys(self) -> tuple[str, ...]:
        return tuple(d.key for d in self.dims)

    def node(self) -> t.TypeExpr:
        if not self.dims:
            return self.dtype.node()
        return t.TensorType(tuple(d.node for d in self.dims), self.dtype.node())

    def with_dtype(self, dtype: DType) -> "Ty":
        return Ty(self.dims, dtype)

    def with_dims(self, dims) -> "Ty":
        return Ty(tuple(dims), self.dtype)


def broadcasts_into(small: tuple[Dim, ...], big: tuple[Dim, ...]) -> bool:
    """Whether `small` broadcasts (right-aligned) to exactly `big`."""
    if len(small) > len(big):
        return False
    for a, b in zip(reversed(small), reversed(big)):
        if a.key != b.key and a.key != "1":
            return False
    return True


def broadcast(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> tuple[Dim, ...] | None:
    """The right-aligned broadcast of two shapes, or None when it is not provable."""
    n = max(len(a), len(b))
    a = (lit_dim(1),) * (n - len(a)) + a
    b = (lit_dim(1),) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x.key == y.key or y.key == "1":
            out.append(x)
        elif x.key == "1":
            out.append(y)
        else:
            return None
    return tuple(out)


# ------------------------------------------------------------------------------ value facts

@dataclass(frozen=True)
class Info:
    """What is known of a value's elements: all lie in [lo, hi]; `frac` (floats): each is a
    multiple of 2**-frac (None: any real); `same`: every backend computes it bit for bit."""
    lo: float
    hi: float
    frac: int | None = 0
    same: bool = True

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    @property
    def finite(self) -> bool:
        return math.isfinite(self.lo) and math.isfinite(self.hi)

    def join(self, other: "Info") -> "Info":
        return Info(min(self.lo, other.lo), max(self.hi, other.hi),
                    _frac_join(self.frac, other.frac), self.same and other.same)


def _frac_join(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else max(a, b)


def exact_in(info: Info, dtype: DType) -> bool:
    """Whether a dyadic value of these facts is represented exactly in `dtype`."""
    if not dtype.is_float:
        return True
    if info.frac is None or not info.finite:
        return False
    if info.mag == 0:
        return True
    # in logarithms: the fraction bits of a product of many values overflow 2.0 ** frac
    return math.log2(info.mag) + info.frac < MANTISSA[dtype.name] + 1


def settle(info: Info, dtype: DType) -> Info:
    """Facts of an arithmetic result: `same` only if exact in the dtype."""
    if not dtype.is_float:
        return info
    if exact_in(info, dtype):
        return Info(info.lo, info.hi, info.frac, True)
    return Info(info.lo, info.hi, None, False)


def fits(info: Info, dtype: DType) -> bool:
    lo, hi = dtype.bounds()
    return info.finite and lo <= info.lo and info.hi <= hi


BOOL_INFO = Info(0, 1, 0, True)


def add_info(a: Info, b: Info, sign: int = 1) -> Info:
    lo = a.lo + (b.lo if sign > 0 else -b.hi)
    hi = a.hi + (b.hi if sign > 0 else -b.lo)
    return Info(lo, hi, _frac_join(a.frac, b.frac), a.same and b.same)


def mul_info(a: Info, b: Info) -> Info:
    corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    frac = None if a.frac is None or b.frac is None else a.frac + b.frac
    return Info(min(corners), max(corners), frac, a.same and b.same)


def abs_info(a: Info) -> Info:
    if a.lo >= 0:
        return a
    if a.hi <= 0:
        return Info(-a.hi, -a.lo, a.frac, a.same)
    return Info(0, a.mag, a.frac, a.same)


def neg_info(a: Info) -> Info:
    return Info(-a.hi, -a.lo, a.frac, a.same)


def scale_sum(a: Info, n: int) -> Info:
    """The facts of a sum of `n` values with facts `a`."""
    return Info(min(0, a.lo * n), max(0, a.hi * n), a.frac, a.same)


def power_info(a: Info, n: int) -> Info:
    """The facts of a product of `n` values with facts `a`."""
    mag = float(a.mag)
    m = math.inf if mag > 1 and n * math.log(mag) > 700 else mag ** n if n else 1.0
    frac = None if a.frac is None else a.frac * n
    lo = 0 if a.lo >= 0 else -m
    return Info(min(lo, 1), max(m, 1), frac, a.same)
