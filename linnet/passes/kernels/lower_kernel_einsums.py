"""lower-kernel-einsums: tensor-kernel-loops -> tensor-kernel-tiles, kernel contractions
as tile prims.

Kernels have no einsum: a contraction the matrix units take is already a `dot`
(`egraph-products`); every other einsum in a kernel becomes a broadcast product and a
sum, written in prims the Triton printer prints one by one. Each operand is cast to the
working dtype (the einsum's accumulator; f32 for a half accumulator, so products and
sums round once at the end, as the language's half arithmetic does), permuted to the
order (output axes, then summed axes), and given size-1 axes for the axes it lacks;
the operands are multiplied, the summed axes reduced, and the result cast back.
Op bodies keep their einsums: torch and jax have them.
"""

from __future__ import annotations

from ...ir import tensor as ir
from ..traverse import Rewriter

HALF = ("f16", "bf16")


def lower_kernel_einsums(program: ir.Program) -> ir.Program:
    """Replace every einsum in a kernel by products and a sum."""
    return _Lower().program(program)


class _Lower(Rewriter):
    def einsum(self, e: ir.Einsum, bind: ir.Bind) -> ir.Expr | None:
        if self.func_now is None or self.func_now.kind != "kernel":
            return super().einsum(e, bind)
        ins, out = e.spec.split("->")
        subs = ins.split(",")
        if len(subs) != len(e.args) or any(len(set(s)) != len(s) for s in subs):
            raise ValueError(f"einsum {e.spec!r}: no diagonals in kernels")
        summed = [c for s in subs for c in s if c not in out]
        full = list(out) + list(dict.fromkeys(summed))
        extent = {c: n for s, a in zip(subs, e.args) for c, n in zip(s, a.type.shape)}
        acc = e.acc or e.type.dtype
        work = "f32" if acc in HALF else acc
        product = None
        for s, a in zip(subs, e.args):
            x = self.aligned(self.atom(a), s, full, extent, work)
            product = x if product is None else self.emit_expr(
                ir.Prim("mul", (product, x), self.broadcast_type(product, x, work)), "prod")
        if product is None:  # no operands: an empty product is 1
            product = ir.Lit(1, ir.TType((), work))
        value = product
        if len(full) > len(out):
            axes = tuple(range(len(out), len(full)))
            shape = tuple(extent[c] for c in out)
            value = self.emit_expr(ir.Prim("reduce_sum", (value,), ir.TType(shape, work),
                                           (("axes", axes),)), "sum")
        if work != e.type.dtype:
            return ir.Prim("cast", (value,), e.type)
        if value.type != e.type:
            return ir.Prim("broadcast_to", (value,), e.type)
        return value

    def aligned(self, x: ir.Atom, labels: str, full: list[str], extent: dict, work: str
                ) -> ir.Atom:
        """x cast to `work`, its axes in the order of `full`, size 1 where it has none."""
        if x.type.dtype != work:
            x = self.emit_expr(ir.Prim("cast", (x,), ir.TType(x.type.shape, work)), "wide")
        order = [c for c in full if c in labels]
        if list(labels) != order:
            perm = tuple(labels.index(c) for c in order)
            ty = ir.TType(tuple(extent[c] for c in order), work)
            x = self.emit_expr(ir.Prim("permute", (x,), ty, (("perm", perm),)), "perm")
        shape = tuple(extent[c] if c in labels else 1 for c in full)
        if shape != x.type.shape:
            x = self.emit_expr(ir.Prim("reshape", (x,), ir.TType(shape, work)), "axes")
        return x

    @staticmethod
    def broadcast_type(a: ir.Atom, b: ir.Atom, dtype: str) -> ir.TType:
        return ir.TType(tuple(max(m, n) for m, n in zip(a.type.shape, b.type.shape)), dtype)
