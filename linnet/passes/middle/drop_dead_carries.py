"""drop-dead-carries: tensor-core -> tensor-core, loops stop carrying unused values.

`dce` removes bindings nobody reads, but a value a loop carries is read by the loop
itself: its next value is computed from it on every trip. A carried value is dead when
nothing after the loop reads its final value (no `loop.k`) and, inside the body,
nothing that is kept needs it: neither the next value of a live carry, nor one of a
scan's yields, nor an effect (a store or atomic). Dead carries leave the loop (with their
initial values and next values), the loop's items are renumbered, and `dce` then drops
the computations that only fed them.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import tensor as ir
from ...ir.walk import all_binds, expr_atoms
from .dce import dce, has_effect
from ..traverse import Rewriter, expr_free_vars


def drop_dead_carries(program: ir.Program) -> ir.Program:
    """Remove the carried values whose results and uses are dead from every loop."""
    return dce(_Drop().program(program))


class _Drop(Rewriter):
    def func(self, f: ir.Func) -> ir.Func:
        self.items = _items_read(f.body)
        self.moved: dict[ir.Var, tuple[ir.Var, dict[int, int]]] = {}
        return super().func(f)

    def loop(self, e: ir.Loop, bind: ir.Bind) -> ir.Expr | None:
        e = super().loop(e, bind)
        read = self.items.get(bind.var)
        result = {b.var: b.expr for b in e.body.binds}.get(e.body.result)
        if read is None or not isinstance(result, ir.MakeTuple):
            return e  # the whole tuple is used, or the body's result is not a literal tuple
        keep = _live(e, result, read)
        if len(keep) == len(e.carried):
            return e
        return self.rebuilt(e, bind, result, keep)

    def rebuilt(self, e: ir.Loop, bind: ir.Bind, result: ir.MakeTuple, keep: list[int]):
        extra = list(_yield_positions(e))
        picks = keep + extra
        items = tuple(result.items[k] for k in picks)
        ty = ir.TupleTy(tuple(e.type.items[k] for k in picks))
        next_ = ir.Var(e.body.result.name, ir.TupleTy(tuple(a.type for a in items)))
        binds = tuple(ir.Bind(next_, ir.MakeTuple(items, next_.type))
                      if b.var == e.body.result else b for b in e.body.binds)
        loop = replace(e, carried=tuple(e.carried[k] for k in keep),
                       init=tuple(e.init[k] for k in keep), type=ty,
                       body=ir.Block(binds, next_))
        var = ir.Var(bind.var.name, ty)
        self.moved[bind.var] = (var, {old: new for new, old in enumerate(picks)})
        self.emit(ir.Bind(var, loop))
        return None

    def get_item(self, e: ir.GetItem, bind: ir.Bind) -> ir.Expr | None:
        if e.tup in self.moved:
            var, index = self.moved[e.tup]
            return ir.GetItem(var, index[e.index], e.type)
        return super().get_item(e, bind)


def _items_read(block: ir.Block) -> dict[ir.Var, set[int]]:
    """For each tuple variable, the items read by `x.k`; absent when read whole."""
    items: dict[ir.Var, set[int]] = {}
    whole: set[ir.Var] = set()
    for b in all_binds(block):
        if isinstance(b.expr, ir.GetItem):
            items.setdefault(b.expr.tup, set()).add(b.expr.index)
        else:
            whole |= {a for a in expr_atoms(b.expr) if isinstance(a, ir.Var)}
    return {v: ks for v, ks in items.items() if v not in whole}


def _live(e: ir.Loop, result: ir.MakeTuple, read: set[int]) -> list[int]:
    """The carries to keep: read after the loop, or needed by something kept inside."""
    defs = {b.var: b for b in e.body.binds}
    live = {k for k in read if k < len(e.carried)}
    while True:
        roots = [result.items[k] for k in live]
        roots += [result.items[k] for k in _yield_positions(e)]
        roots += [a for b in e.body.binds if has_effect(b.expr) for a in expr_free_vars(b.expr)]
        needed = _needed(roots, defs)
        grown = live | {k for k, c in enumerate(e.carried) if c in needed}
        if grown == live:
            return sorted(live)
        live = grown


def _yield_positions(e: ir.Loop) -> range:
    """Where a scan's yields sit in its body's tuple and its value: after the carries."""
    return range(len(e.carried), len(e.carried) + e.yields)


def _needed(roots: list[ir.Atom], defs: dict[ir.Var, ir.Bind]) -> set[ir.Var]:
    """The variables the roots depend on through the body's bindings."""
    seen: set[ir.Var] = set()
    stack = [a for a in roots if isinstance(a, ir.Var)]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in defs:
            stack.extend(expr_free_vars(defs[v].expr))
    return seen
