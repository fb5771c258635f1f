"""The vocabulary every part of `elaborate` shares: its error, its tables, its literals.

`ElaborationError` is what every part raises; `Const` is a compile-time number
bound to a name, and `Value` everything a name can stand for while a body is
translated. The operator tables name the prim each surface operator becomes,
and the literal helpers give a number the dtype its context asks for. They sit
below every other `elaborate_*` module, so that none of those needs another
to say what a value or an error is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from ... import prims
from ...check.types import INT_RANGES, INTEGER, LitT, TensorT, Val
from ...diagnostics import CompileError, Diagnostic, NO_SPAN, Span
from ...ir import tensor as ir

BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "&": "and", "|": "or",
          "^": "xor", "&&": "and", "||": "or", "==": "eq", "!=": "ne", "<": "lt", "<=": "le",
          ">": "gt", ">=": "ge"}
COMPARE = {"==", "!=", "<", "<=", ">", ">="}
MATH = set(prims.MATH)
ELEMENTWISE = MATH | {"abs", "min", "max", "select", "shl", "shr", "cast"}
IX_NODES = (ir.IxAccess, ir.IxScalar, ir.IxPrim, ir.IxReduce, ir.IxGather)
I64 = ir.TType((), "i64")


class ElaborationError(CompileError):
    """A construct this pass cannot translate (E2190), or an instance that fails to check
    (its diagnostics): a user-facing error, rendered like the front end's."""

    def __init__(self, message: str, span: Span = NO_SPAN, code: str = "E2190",
                 diagnostics: list[Diagnostic] | None = None) -> None:
        super().__init__(diagnostics or [Diagnostic(code, message, span)])
        self.code, self.message, self.span = code, message, span


@dataclass(frozen=True)
class Const:
    """A compile-time number bound to a name (`let n = 4`, a `static for` counter)."""
    value: int | float


Value = Union[ir.Var, ir.Lit, Const, ir.IxAccess, ir.IxScalar, ir.IxPrim, ir.IxReduce,
              ir.IxGather]


def default_dtype(lit: LitT) -> str:
    """The dtype a literal takes when its context gives none: i64 for an integer, else f64."""
    return "i64" if lit.kind == "int" else "f64"


def value_dtype(v: Val) -> str | None:
    """The dtype a value has, or None for a literal whose dtype is still open."""
    return v.type.dtype if isinstance(v.type, TensorT) else None


def tensor_dtype(ty) -> str | None:
    """The dtype a checker type asks of a value (a parameter's, an annotation's), or None
    when it is not a tensor: what a literal argument or initial value is typed by."""
    return ty.dtype if isinstance(ty, TensorT) else None


def typed_literal(value, dtype: str) -> ir.Lit:
    """A literal of dtype; typed integers wrap (two's complement), as arithmetic does."""
    if dtype in INTEGER and isinstance(value, int) and not isinstance(value, bool):
        lo, hi = INT_RANGES[dtype]
        value = (value - lo) % (hi - lo + 1) + lo
    if dtype == "bool":
        value = bool(value)
    return ir.Lit(value, ir.TType((), dtype))
