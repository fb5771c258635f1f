"""How `fold-constants` evaluates each elementwise primitive on literals: the `fold` of
its row (`Fold`, docs/prims.md).

The functions are the language's meaning on exact values (docs/language.md, "Types and
generics"): integers unbounded here (the folder wraps them at the width), integer `/`
and `%` truncating toward zero, floats in f64 (the folder rounds once to the dtype,
which is exact for `+ - * /` and `sqrt` of narrower floats). What the language leaves
open, or backends compute differently, returns None and is not folded: a zero divisor,
float `%`, a shift by a negative count or by the width or more, `min`/`max` of +0.0 and
-0.0, and the transcendental functions (exp, log, ...; their last bit differs between
math libraries), which have no fold.
"""

from __future__ import annotations

import math

from .definition import Fold


def trunc_div(a: int, b: int) -> int:
    """a / b rounded toward zero (b nonzero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_div(a: int, b: int, _bits: int) -> int | None:
    return None if b == 0 else trunc_div(a, b)


def _int_mod(a: int, b: int, _bits: int) -> int | None:
    return None if b == 0 else a - b * trunc_div(a, b)


def _float_div(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


def _shift(a: int, n: int, bits: int, left: bool) -> int | None:
    if not 0 <= n < bits:
        return None
    return a << n if left else a >> n  # arithmetic if signed


def _float_min_max(pick):
    """NaN propagates; a tie of +0.0 and -0.0 is left alone (backends differ)."""
    def fold(a: float, b: float) -> float | None:
        if math.isnan(a) or math.isnan(b):
            return math.nan
        if a == b and math.copysign(1.0, a) != math.copysign(1.0, b):
            return None
        return pick(a, b)
    return fold


def _sqrt(a: float) -> float:
    return math.sqrt(a) if a >= 0 or math.isnan(a) else math.nan


#: The identities `x + 0` and `0 + x`: "add_zero" is the folder's test (-0.0 for floats).
FOLDS: dict[str, Fold] = {
    "add": Fold(ints=lambda a, b, _: a + b, floats=lambda a, b: a + b,
                right="add_zero", left="add_zero"),
    "sub": Fold(ints=lambda a, b, _: a - b, floats=lambda a, b: a - b, right="sub_zero"),
    "mul": Fold(ints=lambda a, b, _: a * b, floats=lambda a, b: a * b,
                right="one", left="one"),
    "div": Fold(ints=_int_div, floats=_float_div, right="one"),
    "mod": Fold(ints=_int_mod),
    "min": Fold(ints=lambda a, b, _: min(a, b), floats=_float_min_max(min)),
    "max": Fold(ints=lambda a, b, _: max(a, b), floats=_float_min_max(max)),
    "and": Fold(ints=lambda a, b, _: a & b, bools=lambda a, b: a and b,
                right="true", left="true"),
    "or": Fold(ints=lambda a, b, _: a | b, bools=lambda a, b: a or b,
               right="false", left="false"),
    "xor": Fold(ints=lambda a, b, _: a ^ b, bools=lambda a, b: a != b),
    "shl": Fold(ints=lambda a, n, bits: _shift(a, n, bits, True)),
    "shr": Fold(ints=lambda a, n, bits: _shift(a, n, bits, False)),
    "neg": Fold(ints=lambda a, _: -a, floats=lambda a: -a),
    "not": Fold(bools=lambda a: not a),
    "abs": Fold(ints=lambda a, _: abs(a), floats=abs),
    "sqrt": Fold(floats=_sqrt),
    "select": Fold(bools=lambda c, a, b: a if c else b, unchanged="literal_condition"),
    "cast": Fold(via="cast", unchanged="same_type"),
}


def _compare(test) -> Fold:
    return Fold(ints=lambda a, b, _: test(a, b), floats=test, bools=test)


FOLDS.update({
    "eq": _compare(lambda a, b: a == b), "ne": _compare(lambda a, b: a != b),
    "lt": _compare(lambda a, b: a < b), "le": _compare(lambda a, b: a <= b),
    "gt": _compare(lambda a, b: a > b), "ge": _compare(lambda a, b: a >= b),
    # a shape or construction of x's own type changes nothing; an identity permute (a
    # square tile transposed keeps its type, not its values)
    **{op: Fold(unchanged="same_type") for op in ("reshape", "broadcast_to", "fill")},
    "permute": Fold(unchanged="identity_perm"),
})
