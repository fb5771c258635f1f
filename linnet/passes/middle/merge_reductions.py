"""merge-reductions: tensor-inlined -> tensor-inlined, `sum[i] sum[j] e` written as `sum[i, j] e`.

Directly nested reductions of one kind and one accumulator dtype, anywhere inside
index notation, become one reduction over all their axes (outer axes first). One
reduction over several axes lowers to one `reduce` (or one einsum for a sum of
products) instead of a chain of them, and a contraction written as nested sums, as in
`sum[k] sum[l] a[i, k, l] * b[k, l, j]`, is seen whole. The values are the same: a
reduction over several axes is defined as the nested ones.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import tensor as ir
from ..traverse import Rewriter


def merge_reductions(program: ir.Program) -> ir.Program:
    """Merge directly nested like reductions in every comprehension."""
    return _Merge().program(program)


class _Merge(Rewriter):
    def comprehension(self, e: ir.Comprehension, bind: ir.Bind) -> ir.Expr | None:
        e = super().comprehension(e, bind)
        body = merged(e.body)
        return e if body is e.body else replace(e, body=body)


def merged(e: ir.IxExpr) -> ir.IxExpr:
    """e with its nested like reductions merged, bottom up; unchanged nodes shared."""
    if isinstance(e, ir.IxPrim):
        args = tuple(merged(a) for a in e.args)
        return e if args == e.args else replace(e, args=args)
    if not isinstance(e, ir.IxReduce):
        return e
    body = merged(e.body)
    if isinstance(body, ir.IxReduce) and body.op == e.op and body.dtype == e.dtype:
        return replace(e, axes=e.axes + body.axes, body=body.body)
    return e if body is e.body else replace(e, body=body)
