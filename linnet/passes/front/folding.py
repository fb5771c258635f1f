"""Compile-time folding for `elaborate`: the value of an expression, when it is known.

The mixin `Folding` of the body translator (`elaborator.BodyTranslator`), and the
operator arithmetic it uses. Integers fold exactly (division truncates, as
the language defines it), float literal arithmetic in f64 as the checker
folds it, typed floats never. (Names fold in `BodyTranslator.fold_Name`, since a
module `const` is folded by a body translator of its own.)
"""

from __future__ import annotations

from ...check.dim_normal_form import next_power_of_two
from ...check.types import FLOAT, TensorT
from ...syntax import tree as t
from .vocabulary import COMPARE


class Folding:
    """Folds expressions whose value is known at compile time."""

    def fold(self, e: t.Expr):
        """The value of e when it is known at compile time (int, float or bool), else None.

        Integers fold exactly (division truncates, as the language defines it); float
        literal arithmetic folds in f64, as the checker folds it; arithmetic on typed
        floats never folds (rounding belongs to the dtype, at run time).
        """
        method = getattr(self, "fold_" + type(e).__name__, None)
        return method(e) if method is not None else None

    def fold_IntLit(self, e: t.IntLit):
        return e.value

    def fold_FloatLit(self, e: t.FloatLit):
        return e.value

    def fold_BoolLit(self, e: t.BoolLit):
        return e.value

    def typed_float(self, e: t.Expr) -> bool:
        """Is e a float of a definite dtype? Such arithmetic is left to run time."""
        v = self.inst.types.get(id(e))
        return v is not None and isinstance(v.type, TensorT) and v.type.dtype in FLOAT

    def fold_Unary(self, e: t.Unary):
        x = self.fold(e.operand)
        if x is None or (e.op != "-" and self.typed_float(e.operand)):
            return None
        if e.op == "!":
            return (not x) if isinstance(x, bool) else None
        return -x if e.op == "-" and not isinstance(x, bool) else x

    def fold_Binary(self, e: t.Binary):
        if self.typed_float(e.left) or self.typed_float(e.right):
            return None
        a = self.fold(e.left)
        b = self.fold(e.right) if a is not None else None
        return None if b is None else _fold_binary(e.op, a, b)

    def fold_Call(self, e: t.Call):
        if e.callee in self.globals.items:
            return None
        if e.callee == "prod":
            return self.fold_pack_product(e)
        if e.callee not in _FOLDED_CALLS:
            return None
        args = self.args(e)
        if any(self.typed_float(a) for a in args):
            return None
        values = [self.fold(a) for a in args]
        if any(v is None or isinstance(v, bool) for v in values):
            return None
        return _FOLDED_CALLS[e.callee](*values)

    def fold_pack_product(self, e: t.Call):
        """`prod(S)`: in an instance every pack is bound, and the checker has recorded the
        product of its sizes as the call's value."""
        v = self.inst.types.get(id(e))
        return None if v is None or v.const is None else v.const.as_int()

    def fold_If(self, e: t.If):
        cond = self.fold(e.cond)
        if not isinstance(cond, bool):
            return None
        branch = e.then if cond else e.orelse
        return None if branch.stmts else self.fold(branch.value)


_FOLDED_CALLS = {"min": min, "max": max, "abs": abs, "next_pow2": next_power_of_two}
"""Prelude calls that fold on compile-time values (`next_pow2` always does: its argument
must be a compile-time integer)."""


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _fold_binary(op: str, a, b):
    """One operator on compile-time values, or None when it does not fold."""
    if op in ("&&", "||"):
        if isinstance(a, bool) and isinstance(b, bool):
            return (a and b) if op == "&&" else (a or b)
        return None
    if op in COMPARE:
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                ">=": a >= b}[op]
    ints = all(isinstance(x, int) for x in (a, b))
    if op in ("&", "|", "^"):
        return {"&": a & b, "|": a | b, "^": a ^ b}[op] if ints else None
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    if op in ("/", "%") and b == 0:
        return None
    if op == "/":
        return _trunc_div(a, b) if ints else a / b
    if op == "%":
        return a - b * _trunc_div(a, b) if ints else None
    return {"+": a + b, "-": a - b, "*": a * b}[op]
