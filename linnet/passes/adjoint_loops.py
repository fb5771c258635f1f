"""Reverse mode through counted loops and scans.

Forward (`stash`): the loop runs as a scan that also stacks, at each trip, the values it
carries into that trip. A scan stacks one tensor, so the carried values (and the
loop's own yield, for a scan) are flattened and joined per dtype, one scan per dtype;
the loop's value is rebuilt from the first scan's final carried values and the yield's
columns of its scan. Each trip's values thus cost one row of a `[trips, width]` tensor.

Backward (`reverse`): a counted loop over the trips in reverse order. Its body reads
the trip's carried values back with `dyn_index`, recomputes the trip (the body under
fresh names) and differentiates it, seeded with the adjoints of the next carried values
and of the trip's slice of the stacked yields. It carries the adjoints of the active
carried values and accumulates those of the loop-invariant free variables the body
reads; after it, they are the adjoints of the initial values and of those variables.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import tensor as ir
from .adjoint_emit import I64, has_float, is_float, lit
from .adjoint_values import Adjoints, Ct, leaf_of, leaf_paths, leaf_type, with_leaf
from .inline_fns import rename
from .traverse import bound_vars, expr_free_vars

YIELD = -1  # the slot key of a scan's yield (carried values are keyed by position)


@dataclass
class Stash:
    """The stacked trips: per dtype, a `[trips, width]` tensor and the slots it holds
    as (key, offset, type), key a carried position or YIELD."""
    stacks: list[tuple[ir.Var, list[tuple[int, int, ir.TType]]]]


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
    """Emit the loop as scans stacking each trip's carried values; bind the loop's own
    variable to its usual value (final carried values, then the stacked yield)."""
    e: ir.Loop = bind.expr
    em = rev.em
    if any(not isinstance(c.type, ir.TType) for c in e.carried):
        raise ValueError("differentiate: a loop carrying a tuple")
    slots = [(k, c.type) for k, c in enumerate(e.carried)]
    trip_yield = None
    if e.yields:
        stacked = e.type.items[-1]
        trip_yield = ir.TType(stacked.shape[1:], stacked.dtype)
        slots.append((YIELD, trip_yield))
    groups: dict[str, list[tuple[int, ir.TType]]] = {}
    for key, ty in slots:
        groups.setdefault(ty.dtype, []).append((key, ty))
    stacks, scans = [], []
    for n, members in enumerate(groups.values()):
        loop = e if n == 0 else _renamed_loop(rev, e)
        scan, stack, layout = _scan(em, loop, members)
        scans.append(scan)
        stacks.append((stack, layout))
    finals = [em.emit(ir.GetItem(scans[0], k, c.type), c.name)
              for k, c in enumerate(e.carried)]
    if e.yields:
        finals.append(_unstack_yield(em, stacks, trip_yield))
    em.bind(ir.Bind(bind.var, ir.MakeTuple(tuple(finals), e.type)))
    return Stash(stacks)


def _renamed_loop(rev, e: ir.Loop) -> ir.Loop:
    """The loop under fresh names (index, carried values and everything its body binds)."""
    mapping = {v: rev.em.fresh(v.name, v.type)
               for v in (e.index,) + e.carried + tuple(bound_vars(e.body))}
    return rename(e, mapping)


def _scan(em, loop: ir.Loop, members: list[tuple[int, ir.TType]]):
    """The loop as a scan yielding, per trip, its `members` flattened into one row."""
    n = len(loop.carried)
    em.open()
    for b in loop.body.binds:
        em.bind(b)
    res = loop.body.result
    if isinstance(res.type, ir.TupleTy):
        nexts = [em.emit(ir.GetItem(res, k, t), "next") for k, t in enumerate(res.type.items)]
    else:
        nexts = [res]
    pieces, layout, offset = [], [], 0
    for key, ty in members:
        value = nexts[-1] if key == YIELD else loop.carried[key]
        size = _size(ty)
        pieces.append(em.reshape(value, (size,)))
        layout.append((key, offset, ty))
        offset += size
    row = em.concat(pieces, 0)
    items = tuple(nexts[:n]) + (row,)
    body = em.close(em.emit(ir.MakeTuple(items, ir.TupleTy(tuple(a.type for a in items))),
                            "next"))
    trips = loop.hi - loop.lo
    stacked = ir.TType((trips, offset), row.type.dtype)
    ty = ir.TupleTy(tuple(c.type for c in loop.carried) + (stacked,))
    scan = em.emit(ir.Loop(loop.index, loop.lo, loop.hi, loop.carried, loop.init, body, ty,
                           True), "stash")
    return scan, em.emit(ir.GetItem(scan, n, stacked), "trips"), layout


def _size(ty: ir.TType) -> int:
    size = 1
    for d in ty.shape:
        size *= d
    return size


def _unstack_yield(em, stacks, ty: ir.TType) -> ir.Atom:
    """The loop's stacked yield, cut out of the columns of its dtype's stack."""
    for stack, layout in stacks:
        for key, offset, t in layout:
            if key == YIELD:
                trips = stack.type.shape[0]
                items = (("slice", 0, trips, 1), ("slice", offset, offset + _size(t), 1))
                cols = em.index(stack, items, (trips, _size(t)))
                return em.reshape(cols, (trips,) + ty.shape)
    raise ValueError("differentiate: a scan's yield was not stacked")


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
    if e.yields:
        stack_ct = ct[n]
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
    """The values carried into trip t, read back from the stacks."""
    values: dict[int, ir.Atom] = {}
    for stack, layout in stash.stacks:
        width = stack.type.shape[1]
        row = em.prim("dyn_index", (stack, t), ir.TType((width,), stack.type.dtype),
                      hint="trip")
        for key, offset, ty in layout:
            if key == YIELD:
                continue
            piece = em.index(row, (("slice", offset, offset + _size(ty), 1),), (_size(ty),))
            values[key] = em.reshape(piece, ty.shape)
    return values
