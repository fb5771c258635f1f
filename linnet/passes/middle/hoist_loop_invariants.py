"""hoist-loop-invariants: tensor-core -> tensor-core, loop-invariant work done once.

A binding in the body of a `for` or `while` loop moves out, just before the loop,
when it computes the same value on every trip: a pure expression (a prim other than
memory and `program_id`, an einsum, a tuple or a tuple item) none of whose operands is
the loop index, a carried variable, or a binding that stays in the loop. Inner loops
are hoisted first, so a value invariant in two nested loops leaves both. A loop of
no trips now computes the hoisted values once for nothing: they are pure, so only the
work is lost. The PyTorch bodies gain the most (eager torch recomputes whatever a loop
body says); in kernels the offsets of a tile loop become plain `+` of a hoisted base.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import tensor as ir
from ..traverse import Rewriter, expr_free_vars

STAYS = frozenset({"load", "store", "atomic_add", "atomic_max", "atomic_min", "program_id"})


def hoist_loop_invariants(program: ir.Program) -> ir.Program:
    """Move loop-invariant pure bindings out of every loop."""
    return _Hoist().program(program)


class _Hoist(Rewriter):
    def loop(self, e: ir.Loop, bind: ir.Bind) -> ir.Expr | None:
        e = super().loop(e, bind)
        body = self.hoisted(e.body, {e.index, *e.carried})
        return e if body is e.body else replace(e, body=body)

    def while_(self, e: ir.While, bind: ir.Bind) -> ir.Expr | None:
        e = super().while_(e, bind)
        body = self.hoisted(e.body, set(e.carried))
        return e if body is e.body else replace(e, body=body)

    def hoisted(self, body: ir.Block, varying: set[ir.Var]) -> ir.Block:
        """The body without its invariant bindings, which are emitted before the loop."""
        kept: list[ir.Bind] = []
        for b in body.binds:
            if _pure(b.expr) and not (expr_free_vars(b.expr) & varying):
                self.emit(b)
            else:
                kept.append(b)
                varying.add(b.var)
        if len(kept) == len(body.binds):
            return body
        return ir.Block(tuple(kept), body.result)


def _pure(e: ir.Expr) -> bool:
    if isinstance(e, ir.Prim):
        return e.op not in STAYS
    return isinstance(e, (ir.Einsum, ir.MakeTuple, ir.GetItem))
