"""fast-math: tensor-dots -> tensor-dots, cheaper float arithmetic in kernels under
`--numerics fast` (under `exact` and `equivalent` it changes nothing).

* `x / s`, where the divisor has fewer elements than the quotient (a row sum divided
  into a whole row, say), becomes `x * (1 / s)`: one division per divisor element and
  a multiplication per quotient element, instead of a division per quotient element.
* `x / sqrt(y)` becomes `x * rsqrt(y)` (when nothing else reads the square root).

Both round differently from the IEEE division they replace (by an ulp or two), which
is what `fast` allows; op bodies are left exact, as the definitions they are.
"""

from __future__ import annotations

import math

from ...ir import tensor as ir
from ...ir.numerics import numerics_of
from ...ir.walk import all_binds
from ..traverse import Rewriter, uses

FLOATS = ("f16", "bf16", "f32", "f64")


def fast_math(program: ir.Program, options=None) -> ir.Program:
    """Reciprocal multiplications and rsqrt in kernels, under fast numerics only."""
    numerics = numerics_of(options)
    return _Fast().program(program) if numerics == "fast" else program


class _Fast(Rewriter):
    def func(self, f: ir.Func) -> ir.Func:
        if f.kind != "kernel":
            return f
        self.defs = {b.var: b.expr for b in all_binds(f.body)}
        self.counts = uses(f.body)
        return super().func(f)

    def prim(self, e: ir.Prim, bind: ir.Bind) -> ir.Expr | None:
        e = super().prim(e, bind)
        if not isinstance(e, ir.Prim) or e.op != "div" or e.type.dtype not in FLOATS:
            return e
        x, s = e.args
        root = self.defs.get(s)
        if isinstance(root, ir.Prim) and root.op == "sqrt" and self.counts.get(s.name) == 1:
            r = self.emit_expr(ir.Prim("rsqrt", root.args, s.type), "rsqrt")
            return ir.Prim("mul", (x, r), e.type)
        if math.prod(s.type.shape) < math.prod(e.type.shape):
            one = ir.Lit(1.0, ir.TType((), s.type.dtype))
            r = self.emit_expr(ir.Prim("div", (one, s), s.type), "recip")
            return ir.Prim("mul", (x, r), e.type)
        return e
