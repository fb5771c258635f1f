"""What the terms of the rule sets mean, for checking rules by themselves (`rule_soundness.py`).

A rule is checked by evaluating its terms on sampled values, so every constructor, function
and primitive a rule uses needs a meaning here:

- `Ix` is a signed integer of the width the sample runs at (32 or 64 bits: the IR's i32 and
  i64 both become `Ix` terms), and `+ - *` wrap there (docs/language.md, "Types and
  generics"). A constant `Ix(c)` is a literal of that width: a pattern `Ix(a)` only matches
  such a `c`, and a rule
  that builds a constant that does not fit is wrong (its intervals would be wrong too).
  `quot`/`rem` truncate toward zero; a zero divisor has no value. `narrow` is an integer cast
  between i32 and i64: the value itself where it fits in i32, else kept (a cast to i64) or
  wrapped to 32 bits (a cast to i32), one choice per sample.
- Symbols (`Ix.sym`, `Ix.ranged`, `Ix.counter`, `Mask.sym`) are values the rules cannot see
  into: each occurrence is its own sampled value (a symbol may be broadcast differently at
  each occurrence, terms.py), in its range; an empty range has no value (code that never
  runs).
- `Mask` is a bool. `Tile` is a float64 square matrix (`product`, `dot` sum their products in
  one order, so `(a b)^T` and `b^T a^T` are equal bit for bit), `widen` is the exact cast of a
  half value to f32 (the same numbers), `dot_acc(a, b, c)` is `c + dot(a, b)` as terms.py
  defines it; tiles are compared up to rounding (relative 1e-9), NaN equal to NaN.
- egglog's `i64` primitives are 64-bit and fail on overflow or a zero divisor: in a premise
  a failure means no match, in an action egglog stops with a panic.
- Facts: `lo(x) == b` says every value of `x` is at least `b`, `hi` at most; the relation
  `nonnegative(t)` says every element of `t` is >= 0 or NaN.

`Semantics` holds these tables keyed by egglog's callable references; `LIBRARY` is the one
for `linnet/rules/terms.py`, and `LIBRARY.extended(ops={my_fn: meaning})` adds the meaning of
a term a user-supplied rule set declares.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np
from egglog.declarations import Ident, MethodRef

from ..rules.terms import (Ix, Mask, Tile, both, dot, dot_acc, either, exp, hi, larger, lo, log,
                           lt, narrow, negate, nonnegative, plus, product, quot, rem, smaller,
                           sqrt, trans, widen)

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


class PrimitiveFailed(Exception):
    """An egglog primitive failed (i64 overflow, a zero divisor)."""


class NoValue(Exception):
    """A term has no value: a symbol over an empty range, a division by zero."""


class NoMatch(Exception):
    """A pattern matches no term: a constant outside the width, an i64 primitive that fails."""


class Uninterpretable(Exception):
    """A rule uses something this semantics gives no meaning to."""


def bounds(width: int) -> tuple[int, int]:
    return -(2 ** (width - 1)), 2 ** (width - 1) - 1


def wrap(v: int, width: int) -> int:
    """Two's complement wrapping, as the IR's integer arithmetic."""
    half = 2 ** (width - 1)
    return (v + half) % (2 * half) - half


def trunc_div(a: int, b: int) -> int:
    """Division truncating toward zero (the IR's `/`, Rust's `i64::checked_div`)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@dataclass
class Context:
    """What evaluating one sample needs: the integer width, the random source, whether this
    is a pattern (premises, a rewrite's left side) or an action (a right side, a fact set),
    and the values each symbol occurrence took in the pattern."""

    width: int
    rng: Any
    sampler: Any
    pattern: bool = True
    cast_keeps: bool = True
    occurrences: dict = field(default_factory=dict)
    tiles: dict = field(default_factory=dict)

    def symbol(self, key: Any, low: int, high: int) -> int:
        """An occurrence of an integer symbol in low..high: a new value in a pattern; in an
        action, one the pattern's occurrences took (or a new one if none)."""
        wmin, wmax = bounds(self.width)
        low, high = max(low, wmin), min(high, wmax)
        if low > high:
            raise NoValue(f"{key} has an empty range")
        seen = self.occurrences.setdefault(key, [])
        if not self.pattern and seen:
            return self.rng.choice(seen)
        value = self.sampler.int_in(low, high)
        seen.append(value)
        return value

    def constant(self, c: int) -> int:
        wmin, wmax = bounds(self.width)
        if wmin <= c <= wmax:
            return c
        if self.pattern:
            raise NoMatch(f"no {self.width}-bit constant {c}")
        raise OutOfRange(f"the constant Ix({c}) does not fit in {self.width} bits")


class OutOfRange(Exception):
    """A rule built a constant that does not fit the integer width."""


def _checked(v: int) -> int:
    if not I64_MIN <= v <= I64_MAX:
        raise PrimitiveFailed(f"i64 overflow ({v})")
    return v


def _i64_div(a: int, b: int) -> int:
    if b == 0:
        raise PrimitiveFailed("i64 division by zero")
    return _checked(trunc_div(a, b))


def _i64_rem(a: int, b: int) -> int:
    if b == 0:
        raise PrimitiveFailed("i64 remainder by zero")
    return a - b * trunc_div(a, b)


def _i64_shift(a: int, b: int, left: bool) -> int:
    if not 0 <= b < 64:
        raise PrimitiveFailed(f"i64 shift by {b}")
    return _checked(a << b) if left else a >> b


_I64_OPS: dict[str, Callable] = {
    "__add__": lambda a, b: _checked(a + b), "__sub__": lambda a, b: _checked(a - b),
    "__mul__": lambda a, b: _checked(a * b), "__truediv__": _i64_div, "__mod__": _i64_rem,
    "__and__": lambda a, b: a & b, "__or__": lambda a, b: a | b, "__xor__": lambda a, b: a ^ b,
    "__lshift__": lambda a, b: _i64_shift(a, b, True),
    "__rshift__": lambda a, b: _i64_shift(a, b, False),
    "__invert__": lambda a: ~a, "__abs__": lambda a: _checked(abs(a)),
    "min": min, "max": max,
    "__lt__": lambda a, b: a < b, "__le__": lambda a, b: a <= b,
    "__gt__": lambda a, b: a > b, "__ge__": lambda a, b: a >= b,
}


def _i64_refs() -> dict:
    ident = Ident("i64", "egglog.builtins")
    return {MethodRef(ident, name): (lambda op: lambda ctx, *args: op(*args))(op)
            for name, op in _I64_OPS.items()}


# ---------------------------------------------------------------- integer terms

def _ix_binary(op: Callable[[int, int], int]) -> Callable:
    return lambda ctx, a, b: wrap(op(a, b), ctx.width)


def _quot(ctx: Context, a: int, b: int) -> int:
    if b == 0:
        raise NoValue("integer division by zero")
    return wrap(trunc_div(a, b), ctx.width)


def _rem(ctx: Context, a: int, b: int) -> int:
    if b == 0:
        raise NoValue("integer remainder by zero")
    return wrap(a - b * trunc_div(a, b), ctx.width)


def _narrow(ctx: Context, a: int) -> int:
    if I32_MIN <= a <= I32_MAX or ctx.cast_keeps:
        return a
    return wrap(a, 32)


# ------------------------------------------------------------------ tile terms

def _product(ctx: Context, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sum[k] a[i, k] * b[k, j], summed in order of k (so the order is the same for every
    arrangement of the same products)."""
    with np.errstate(all="ignore"):
        acc = np.zeros((a.shape[0], b.shape[1]))
        for k in range(a.shape[1]):
            acc = acc + np.outer(a[:, k], b[k, :])
    return acc


def _elementwise(fn: Callable) -> Callable:
    def apply(ctx: Context, *args):
        with np.errstate(all="ignore"):
            return fn(*args)
    return apply


def _tile_symbol(ctx: Context, name: str) -> np.ndarray:
    if name not in ctx.tiles:
        ctx.tiles[name] = ctx.sampler.tile()
    return ctx.tiles[name]


def ref_of(obj: Any) -> Any:
    """egglog's reference to a constructor, function or method (given as the Python object,
    or as an expression whose head it is)."""
    if hasattr(obj, "__egg_ref__"):
        return obj.__egg_ref__
    if hasattr(obj, "__egg_typed_expr__"):
        return obj.__egg_typed_expr__.expr.callable
    raise TypeError(f"not an egglog callable: {obj!r}")


def _library_ops() -> dict:
    ops = {
        ref_of(Ix(0)): lambda ctx, c: ctx.constant(c),
        ref_of(Ix.sym): lambda ctx, name: ctx.symbol(("sym", name), I64_MIN, I64_MAX),
        ref_of(Ix.ranged): lambda ctx, name, low, high: ctx.symbol(("ranged", name, low, high),
                                                                   low, high),
        ref_of(Ix.counter): lambda ctx, name, low, high: ctx.symbol(
            ("counter", name, low, high), low, high - 1),
        ref_of(Ix.__add__): _ix_binary(lambda a, b: a + b),
        ref_of(Ix.__sub__): _ix_binary(lambda a, b: a - b),
        ref_of(Ix.__mul__): _ix_binary(lambda a, b: a * b),
        ref_of(quot): _quot, ref_of(rem): _rem, ref_of(narrow): _narrow,
        ref_of(smaller): lambda ctx, a, b: min(a, b),
        ref_of(larger): lambda ctx, a, b: max(a, b),
        ref_of(Mask.const): lambda ctx, v: v != 0,
        ref_of(Mask.sym): lambda ctx, name: ctx.sampler.boolean(),
        ref_of(lt): lambda ctx, a, b: a < b,
        ref_of(both): lambda ctx, a, b: a and b,
        ref_of(either): lambda ctx, a, b: a or b,
        ref_of(negate): lambda ctx, a: not a,
        ref_of(Tile.sym): _tile_symbol,
        ref_of(trans): lambda ctx, a: a.T,
        ref_of(widen): lambda ctx, a, dtype: a,
        ref_of(product): _product, ref_of(dot): _product,
        ref_of(dot_acc): lambda ctx, a, b, c: _elementwise(np.add)(ctx, c, _product(ctx, a, b)),
        ref_of(plus): _elementwise(np.add), ref_of(exp): _elementwise(np.exp),
        ref_of(log): _elementwise(np.log), ref_of(sqrt): _elementwise(np.sqrt),
    }
    return {**_i64_refs(), **ops}


def _nonnegative(t: np.ndarray) -> bool:
    return bool(np.all((t >= 0) | np.isnan(t)))


TILE_RTOL = 1e-9  # tiles are equal up to rounding: a float rule holds in real arithmetic


def equal_values(a: Any, b: Any) -> bool:
    """Equality of two values of one sort. Tiles: the same shape, NaN where the other has
    NaN, the same infinities, finite elements equal to a relative 1e-9 (`exp(log(x))` is x
    up to rounding; a wrong rule is off by far more)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=TILE_RTOL, atol=0,
                                                       equal_nan=True))
    return a == b


@dataclass(frozen=True)
class Semantics:
    """Meanings keyed by egglog callable references.

    `ops`: constructor/function/primitive -> `fn(ctx, *argument values)`. `lower`/`upper`:
    the interval tables (`lo(x) == b`: every value of x is >= b). `relations`: relation ->
    predicate on the value. `per_occurrence`: sorts whose terms describe one element, so
    a variable may take another value at each of its occurrences in a pattern (terms.py).
    `sorts`: sort name -> what a variable of it is sampled as ("int", "i64", "bool",
    "tile", "string").
    """

    ops: Mapping[Any, Callable]
    lower: frozenset
    upper: frozenset
    relations: Mapping[Any, Callable]
    per_occurrence: frozenset
    sorts: Mapping[str, str]

    def extended(self, ops: Mapping[Any, Callable] = {}, relations: Mapping[Any, Callable] = {},
                 sorts: Mapping[str, str] = {}) -> "Semantics":
        """This semantics with more meanings (keys: the egglog callables themselves)."""
        return replace(self, ops={**self.ops, **{ref_of(k): v for k, v in ops.items()}},
                       relations={**self.relations,
                                  **{ref_of(k): v for k, v in relations.items()}},
                       sorts={**self.sorts, **sorts})


LIBRARY = Semantics(
    ops=_library_ops(),
    lower=frozenset({ref_of(lo)}),
    upper=frozenset({ref_of(hi)}),
    relations={ref_of(nonnegative): _nonnegative},
    per_occurrence=frozenset({"Ix", "Mask"}),
    sorts={"Ix": "int", "i64": "i64", "Mask": "bool", "Bool": "bool", "Tile": "tile",
           "String": "string"},
)
