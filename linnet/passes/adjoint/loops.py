"""Reverse mode through counted loops and scans.

Forward (`stash`): the loop runs as a scan that also stacks, at each trip, the values it
carries into that trip: one more yield per carried value, after the loop's own yields
(a scan stacks any number of tensors). The loop's value is rebuilt from the scan's
final carried values and its own stacks; each carried value costs a `[trips, ...]` stack.

Backward (`reverse`): a counted loop over the trips in reverse order. Its body reads
the trip's carried values back with `dyn_index`, recomputes the trip (the body under
fresh names) and differentiates it, seeded with the adjoints of the next carried values
and of the trip's row of each stacked yield. It carries the adjoints of the active
carried values and accumulates those of the loop-invariant free variables the body
reads; after it, they are the adjoints of the initial values and of those variables.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import tensor as ir
from .emit import I64, has_float, is_float, lit
from .values import Adjoints, Ct, leaf_of, leaf_paths, leaf_type, with_leaf
from ..traverse import expr_free_vars


@dataclass
class Stash:
    """The stacked trips: for each carried value (by position), the `[trips, ...]` stack
    of the values it held on entry to each trip."""
    stacks: list[ir.Var]


# ------------------------------------------------------------- activity

def active_carried(rev, carried: tuple[ir.Var, ...], init: tuple[ir.Atom, ...],
                   body: ir.Block) -> set[int]:
    """The positions of the floating carried values that depend on an active value: active
    on entry, or made so by a trip (iterated until nothing changes)."""
    found = {k for k, a in enumerate(init) if is_float(carried[k].type) and rev.is_active(a)}
    while True:
        act = set(rev.active) | {carried[k] for k in found}
        for bind in body.binds:
            if has_float(bind.var.type) and expr_free_vars(bind.expr) & act:
                act.add(bind.var)
        nexts = _next_atoms(body, len(carried))
        more = {k for k, a in enumerate(nexts)
                if is_float(carried[k].type) and isinstance(a, ir.Var) and a in act}
        if more <= found:
            return found
        found |= more


def _next_atoms(body: ir.Block, n: int) -> list[ir.Atom]:
    """The atoms a loop body returns as its next carried values (items of its tuple)."""
    if not isinstance(body.result.type, ir.TupleTy):
        return [body.result]
    made = next((b.expr for b in body.binds if b.var == body.result), None)
    if isinstance(made, ir.MakeTuple):
        return list(made.items[:n])
    return [body.result] * n  # a tuple from elsewhere: every item may depend on anything


# ---------------------------------------------------------------- forward

def stash(rev, bind: ir.Bind) -> Stash:
    """Emit the loop as a scan that also stacks each trip's carried values; bind the
    loop's own variable to its usual value (final carried values, then its stacks)."""
    e: ir.Loop = bind.expr
    em = rev.em
    if any(not isinstance(c.type, ir.TType) for c in e.carried):
        raise ValueError("differentiate: a loop carrying a tuple")
    n, trips = len(e.carried), e.hi - e.lo
    em.open()
    for b in e.body.binds:
        em.bind(b)
    nexts = _body_items(em, e)
    items = tuple(nexts) + e.carried
    body = em.close(em.emit(ir.MakeTuple(items, ir.TupleTy(tuple(a.type for a in items))),
                            "next"))
    stashed = tuple(ir.TType((trips,) + c.type.shape, c.type.dtype) for c in e.carried)
    ty = ir.TupleTy(e.type.items + stashed)
    scan = em.emit(ir.Loop(e.index, e.lo, e.hi, e.carried, e.init, body, ty,
                           e.yields + n), "stash")
    values = [em.emit(ir.GetItem(scan, k, t), "value") for k, t in enumerate(e.type.items)]
    em.bind(ir.Bind(bind.var, ir.MakeTuple(tuple(values), e.type)))
    start = len(e.type.items)
    return Stash([em.emit(ir.GetItem(scan, start + k, t), "trips")
                  for k, t in enumerate(stashed)])


def _body_items(em, e: ir.Loop) -> list[ir.Atom]:
    """What the loop body returns, item by item: the next carried values, then the yields
    (the body already emitted in the open block)."""
    res = e.body.result
    if len(e.carried) + e.yields == 1 and not isinstance(res.type, ir.TupleTy):
        return [res]
    return [em.emit(ir.GetItem(res, k, t), "next") for k, t in enumerate(res.type.items)]


# --------------------------------------------------------------- backward

def reverse(rev, step, ct: Ct, adj: Adjoints) -> None:
    """The loop's adjoint: a counted loop over its trips in reverse (module docstring)."""
    e: ir.Loop = step.bind.expr
    em = rev.em
    n = len(e.carried)
    active = sorted(active_carried(rev, e.carried, e.init, e.body))
    inner = set(e.carried) | {e.index}
    frees = [v for v in rev.active_frees(e.body) if v not in inner]
    leaves = [(v, p) for v in frees for p in leaf_paths(v.type)]
    if not active and not leaves:
        return
    ct = ct if isinstance(ct, tuple) else (None,) * len(e.type.items)
    init = [ct[k] or em.zeros(e.carried[k].type) for k in active]
    init += [em.zeros(leaf_type(v.type, p)) for v, p in leaves]
    dcs = [em.fresh("d_" + e.carried[k].name, e.carried[k].type) for k in active]
    accs = [em.fresh("d_" + v.name, leaf_type(v.type, p)) for v, p in leaves]
    trip = em.fresh("r", I64)
    em.open()
    t = em.i64("sub", lit(e.hi - e.lo - 1, "i64"), trip)
    values = _restore(em, step.stash, t, e)
    for k in active:
        rev.active.add(values[k])
    mapping = {c: values[k] for k, c in enumerate(e.carried)}
    mapping[e.index] = em.i64("add", t, lit(e.lo, "i64"))
    body = rev.renamed(e.body, mapping)
    seeds = [dcs[active.index(k)] if k in active else None for k in range(n)]
    for stack_ct in ct[n:n + e.yields]:  # each stack's adjoint: its row of this trip
        seeds.append(None if stack_ct is None else em.prim(
            "dyn_index", (stack_ct, t), ir.TType(stack_ct.type.shape[1:], stack_ct.type.dtype),
            hint="d_row"))
    sub = Adjoints(em, rev.active)
    rev.differentiate(body, tuple(seeds) if isinstance(body.result.type, ir.TupleTy)
                      else seeds[0], sub)
    nexts = [sub.get(values[k]) or em.zeros(e.carried[k].type) for k in active]
    for acc, (v, p) in zip(accs, leaves):
        g = leaf_of(sub.get(v), p)
        nexts.append(acc if g is None else em.add(acc, g))
    tup = ir.TupleTy(tuple(a.type for a in nexts))
    rbody = em.close(em.emit(ir.MakeTuple(tuple(nexts), tup), "d_next"))
    back = em.emit(ir.Loop(trip, 0, e.hi - e.lo, tuple(dcs + accs), tuple(init), rbody, tup),
                   "d_loop")
    for j, k in enumerate(active):
        adj.add(e.init[k], em.emit(ir.GetItem(back, j, tup.items[j]), "d_init"))
    for j, (v, p) in enumerate(leaves, len(active)):
        item = em.emit(ir.GetItem(back, j, tup.items[j]), "d_" + v.name)
        adj.add(v, with_leaf(v.type, p, item))


def _restore(em, stash: Stash, t: ir.Atom, e: ir.Loop) -> dict[int, ir.Atom]:
    """The values carried into trip t, read back from their stacks."""
    return {k: em.prim("dyn_index", (stack, t), c.type, hint="trip")
            for k, (stack, c) in enumerate(zip(stash.stacks, e.carried))}
