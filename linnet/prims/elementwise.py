"""The elementwise primitives besides the math functions: arithmetic, bit operations and
logic, comparisons, `neg not abs`, `select` and `cast`.

Operands broadcast as numpy does (equal-rank or lower-rank operands). Their semantics are
the language's (docs/language.md, "Types and generics"; docs/ir.md): integers wrap,
integer `/` and `%` truncate toward zero and give 0 for a zero divisor, float `%` is
`fmod`, shifts of the width or more give 0 or the sign. Most targets spell these with a
case per dtype, so their rows name printer functions (`Via`): "binary" and "unary" of
each printer take the primitive's name.
"""

from __future__ import annotations

from .definition import Op, PrimDef, Text, Via
from .folds import FOLDS

ARITHMETIC = ("add", "sub", "mul", "div", "mod", "min", "max")
BITWISE = ("and", "or", "xor")
SHIFTS = ("shl", "shr")
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")

_STABLEHLO = {"add": "add", "sub": "subtract", "mul": "multiply", "min": "minimum",
              "max": "maximum", "and": "and", "or": "or", "xor": "xor"}
_STABLEHLO_SPECIAL = {"div": "div_mod", "mod": "div_mod", "shl": "shift", "shr": "shift"}


def _binary_row(name: str) -> PrimDef:
    shlo = (Op(f"stablehlo.{_STABLEHLO[name]}") if name in _STABLEHLO
            else Via(_STABLEHLO_SPECIAL[name]))
    return PrimDef(name, 2, "binary", prelude=name if name in ("min", "max") + SHIFTS else "",
                   fold=FOLDS[name], torch=Via("binary"), jax=Via("binary"),
                   onnx=Via("binary"), stablehlo=shlo, triton=Via("binary"))


def _compare_row(name: str) -> PrimDef:
    return PrimDef(name, 2, "compare", fold=FOLDS[name], torch=Via("binary"),
                   jax=Via("binary"), onnx=Via("binary"), stablehlo=Via("compare"),
                   triton=Via("binary"))


def _unary_row(name: str, stablehlo) -> PrimDef:
    return PrimDef(name, 1, "unary", prelude="abs" if name == "abs" else "",
                   fold=FOLDS[name], torch=Via("unary"), jax=Via("unary"),
                   onnx=Via("unary"), stablehlo=stablehlo, triton=Via("unary"))


OPERATORS = (
    *(_binary_row(op) for op in ARITHMETIC + BITWISE),
    *(_compare_row(op) for op in COMPARISONS),
    *(_binary_row(op) for op in SHIFTS),
)

UNARY = (
    _unary_row("neg", Op("stablehlo.negate")),
    _unary_row("not", Op("stablehlo.not")),
    _unary_row("abs", Via("abs")),
)

CHOICE = (
    PrimDef("select", 3, "select", prelude="select", fold=FOLDS["select"],
            torch=Text("torch.where({0}, {1}, {2})"), jax=Text("jnp.where({0}, {1}, {2})"),
            onnx=Via("select"), stablehlo=Via("select"), triton=Text("tl.where({0}, {1}, {2})"),
            doc="select(c, a, b): a where c, else b"),
    PrimDef("cast", 1, "cast", prelude="cast", fold=FOLDS["cast"], torch=Via("cast"),
            jax=Via("cast"), onnx=Via("cast"), stablehlo=Via("cast"), triton=Via("cast"),
            doc="to the result dtype"),
)
