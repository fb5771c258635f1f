"""Kernel memory safety: every access proved inside its tensor (E2131).

A kernel's `load`, `store` and atomics compute addresses from their indices; one past
the end reads garbage or, for a store, corrupts memory that belongs to someone else. So
`check` proves, for each access and each axis, that wherever the access happens (its
mask holds, its loop counters and branch conditions allow it) the index lies in
`0 .. extent - 1`. The proof is the checker's own prover (`dims.Facts`) over the values
`kernel_values.py` abstracts: the kernel's `where`, each program id in `0 .. grid - 1`,
each loop counter in its bounds, each tile position in `0 .. size - 1`, and the
comparisons of the mask (`cols < C`). An access the prover cannot show safe is E2131,
with the range the index may take and the mask that would make it safe.

What the proof assumes: index arithmetic does not wrap (the values stay in the range of
their dtype: `kernel_wrap.py` proves it of each kernel instance at its bound sizes, E2133),
and an integer loaded from memory (a gather's ids) is any value at all:
such an index is proved only by a mask that compares it with the axis.
"""

from __future__ import annotations

import operator
from itertools import product

from ..diagnostics import DiagnosticBag
from ..syntax import tree as t
from ..syntax.printer import print_expr
from .dim_normal_form import Dim
from .dims import Facts
from .kernel_domain import NEGATE, NEVER, Access, Chosen, Index, Symbol, position
from .kernel_values import KernelValues
from .types import INTEGER, TensorT

COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
           "==": operator.eq, "!=": operator.ne}
VERBS = {"load": "read", "store": "write", "atomic_add": "update", "atomic_max": "update",
         "atomic_min": "update"}


def access_facts(base: Facts, access: Access, grid: tuple) -> Facts:
    """What holds where `access` happens: the kernel's facts, every run-time symbol in its
    range, the branch conditions around it and the clauses of its mask."""
    symbols = list(access.context) + [
        Symbol(position(k), Dim.const(0), size - 1) for k, size in enumerate(access.tile)]
    facts = _with_symbols(base, _nonnegative(base, symbols))
    for size in grid:
        for factor in _factors(size, facts):
            facts = facts.assume(factor, ">=", 1)  # the body runs only where programs do
    for s in symbols:
        if s.low is not None:
            facts = facts.assume(Dim.sym(s.name), ">=", s.low)
        if s.high is not None:
            facts = facts.assume(Dim.sym(s.name), "<=", s.high)
    for left, op, right in access.conditions + access.mask:
        facts = facts.assume(left, op, right)
    return facts


def _with_symbols(base: Facts, names: set[str]) -> Facts:
    """`base` with more symbols known to be non-negative."""
    facts = Facts(base.symbols | names)
    for left, op, right in base.assumptions:
        facts = facts.assume(left, op, right)
    return facts


def _nonnegative(base: Facts, symbols: list[Symbol]) -> set[str]:
    """The run-time symbols whose lower bound is non-negative, in order: a counter from
    `program_id(0) * S` is, once the program id is known to be."""
    names: set[str] = set()
    for s in symbols:
        if s.low is not None and _with_symbols(base, names).prove_nonnegative(s.low):
            names.add(s.name)
    return names


def _factors(size: Dim | None, facts: Facts) -> list[Dim]:
    """A grid size, and each factor of it when it is a product of non-negative factors
    (`tiles_m * tiles_n >= 1` makes each at least 1)."""
    if size is None:
        return []
    parts = size.product_factors() or ()
    if all(facts.prove_nonnegative(p) for p in parts):
        return [size, *parts]
    return [size]


def check_accesses(accesses: list[Access], base: Facts, grid: tuple,
                   bag: DiagnosticBag) -> None:
    """E2131 at each access that is not provably inside its tensor (one per access)."""
    for access in accesses:
        if NEVER in access.mask:
            continue  # a mask that never holds touches nothing
        facts = access_facts(base, access, grid)
        for axis, (index, extent) in enumerate(zip(access.indices, access.extents)):
            side = _unsafe_side(facts, index, extent)
            if side is not None:
                _report(access, axis, side, base, bag)
                break


def _unsafe_side(facts: Facts, index: Index, extent: Dim) -> str | None:
    """'below' or 'above' when the index may leave `0 .. extent - 1`; None when safe.

    A `select` is proved on each side: where its condition holds, with the condition's
    clauses, and elsewhere with the condition's negation when it is one comparison. The
    other side is never reached when the condition is part of what holds (the mask)."""
    if index is None:
        return "unknown"
    if isinstance(index, Chosen):
        cond = index.cond
        side = _unsafe_side(_assuming(facts, cond.clauses), index.then.expr, extent)
        if side is not None:
            return side
        if cond.exact and cond.clauses and set(cond.clauses) <= set(facts.assumptions):
            return None
        negated = _negation(cond)
        return _unsafe_side(_assuming(facts, negated), index.orelse.expr, extent)
    if not facts.prove(index, ">=", 0):
        return "below"
    if not facts.prove(index, "<", extent):
        return "above"
    return None


def _assuming(facts: Facts, clauses) -> Facts:
    for left, op, right in clauses:
        facts = facts.assume(left, op, right)
    return facts


def _negation(cond) -> tuple:
    """The clauses that hold where an exact condition of one comparison is false."""
    if cond.exact and len(cond.clauses) == 1:
        left, op, right = cond.clauses[0]
        return ((left, NEGATE[op], right),)
    return ()


def _report(access: Access, axis: int, side: str, base: Facts, bag: DiagnosticBag) -> None:
    target = access.node.args[0].value if isinstance(access.node, (t.Call, t.Effect)) else None
    item = access.index_nodes[axis]
    text, extent = print_expr(item), access.extents[axis]
    verb = VERBS.get(access.kind, "touch")
    message = (f"`{access.kind}` may {verb} outside `{access.tensor}`: its index `{text}` "
               f"on axis {axis} is not provably in 0 .. {extent} - 1")
    low, high = _range(access, access.indices[axis], base)
    if side == "unknown":
        label = "an index the checker cannot follow (a loaded value or one changed in a loop)"
    elif side == "below":
        label = f"`{text}` may be negative" + (f" (down to {low})" if low is not None else "")
    else:
        label = f"`{text}` may reach {extent} or more" + _reached(high, extent, base)
    bag.error("E2131", message, (target or access.node).span, label,
              help=_help(access, axis, side, text, extent))


TRIED = (64, 100, 128, 16, 7, 3, 2, 1)
"""Sizes tried, every combination, for a counterexample the prover's samples miss."""


def sizes_where_fails(base: Facts, left: Dim, op: str, right: Dim) -> dict[str, int] | None:
    """Sizes that satisfy the facts where `left op right` fails, or None if none is found
    (among the prover's samples, then every combination of `TRIED` for up to 3 names)."""
    found = base.counterexample(left, op, right)
    names = sorted(left.symbols() | right.symbols())
    if found is not None or len(names) > 3:
        return found
    names += sorted({n for l, _, r in base.assumptions for n in l.symbols() | r.symbols()}
                    - set(names))
    if len(names) > 3:
        return None
    for values in product(TRIED, repeat=len(names)):
        env = dict(zip(names, values))
        try:
            fails = not COMPARE[op](left.evaluate(env), right.evaluate(env))
        except ZeroDivisionError:
            continue
        if fails and base.is_consistent_with({**{n: 0 for n in base.symbols}, **env}):
            return env
    return None


def _reached(high: Dim | None, extent: Dim, base: Facts) -> str:
    """`: it goes up to B - 1, which is 127 at B = 128, C = 100`, when sizes show it."""
    if high is None:
        return ""
    where = sizes_where_fails(base, high, "<", extent)
    if where is None:
        return f" (it goes up to {high})"
    at = ", ".join(f"{k} = {v}" for k, v in sorted(where.items()))
    return f" (it goes up to {high}: {high.evaluate(where)} at {at})"


def _help(access: Access, axis: int, side: str, text: str, extent: Dim) -> str:
    """The mask that would make the access safe, written for this access."""
    if side == "unknown":
        return (f"compare the index with the axis in the mask: `{text} >= 0 && {text} < "
                f"{extent}` (where the mask is false nothing is {VERBS[access.kind]} "
                "there)") if access.kind in VERBS else ""
    condition = f"{text} >= 0" if side == "below" else f"{text} < {extent}"
    tiles = [k for k, axes in enumerate(access.index_axes) if axes]
    if len(tiles) > 1 and access.index_axes[axis]:
        letters = "ijklmn"
        names = {k: letters[n] for n, k in enumerate(tiles)}
        outs = ", ".join(names[k] for k in tiles)
        element = f"{text}[{names[axis]}]"
        condition = f"{element} >= 0" if side == "below" else f"{element} < {extent}"
        return (f"mask it, in index notation: `let inside[{outs}] = {condition}` (and the "
                "other axes' conditions), then pass `inside` as the mask")
    if access.mask:
        return f"add `&& {condition}` to its mask"
    return f"mask it: pass `{condition}` as the access's mask"


def _range(access: Access, index: Index, base: Facts) -> tuple[Dim | None, Dim | None]:
    """The lowest and highest value of a linear index over its symbols' ranges, each
    None when not known (a coefficient of unknown sign, a non-linear index)."""
    if not isinstance(index, Dim):
        return None, None
    symbols = {s.name: s for s in access.context}
    for k, size in enumerate(access.tile):
        symbols[position(k)] = Symbol(position(k), Dim.const(0), size - 1)
    names = sorted(index.symbols() & symbols.keys())
    zero = {n: 0 for n in names}
    constant = index.substitute(zero)
    low, high = constant, constant
    rebuilt = constant
    for name in names:
        coefficient = index.substitute({**zero, name: 1}) - constant
        rebuilt = rebuilt + coefficient * Dim.sym(name)
        s = symbols[name]
        if s.low is None or s.high is None:
            return None, None
        if base.prove_nonnegative(coefficient):
            low, high = low + coefficient * s.low, high + coefficient * s.high
        elif base.prove_nonnegative(-coefficient):
            low, high = low + coefficient * s.high, high + coefficient * s.low
        else:
            return None, None
    if rebuilt != index:
        return None, None
    return low, high


def check_kernel_memory(kernel: t.Kernel, params: list, results: list, types: dict,
                        facts: Facts, bag: DiagnosticBag) -> tuple[list[Access], tuple]:
    """Read the kernel's accesses (`kernel_values.py`) and prove each inside its tensor;
    returns the accesses and the grid's sizes, for the coverage check of the results."""
    accesses, grid = read_accesses(kernel, params, results, types, facts)
    check_accesses(accesses, facts, grid, bag)
    return accesses, grid


def read_accesses(kernel: t.Kernel, params: list, results: list, types: dict,
                  facts: Facts) -> tuple[list[Access], tuple]:
    """The kernel's accesses and its grid's sizes, from a checked body's `types` (of the
    kernel's own check, or of an instance's at bound sizes)."""
    values = walk_kernel(kernel, params, results, types, facts)
    return values.accesses, values.grid


def walk_kernel(kernel: t.Kernel, params: list, results: list, types: dict,
                facts: Facts) -> KernelValues:
    """The kernel body read once (`kernel_values.py`): its accesses, the integers it
    computes and its grid's sizes."""
    memory = {p.name: tuple(ty.dims) for p, ty in zip(kernel.params + kernel.results,
                                                      params + results)
              if isinstance(ty, TensorT) and (ty.rank or p in kernel.results)}
    grid = tuple(_grid_size(types, g) for g in kernel.grid)
    scalars = tuple(p.name for p, ty in zip(kernel.params, params)
                    if isinstance(ty, TensorT) and not ty.rank and ty.dtype in INTEGER)
    values = KernelValues(types, grid, memory, facts, scalars)
    values.run(kernel.body)
    return values


def _grid_size(types: dict, g: t.Expr) -> Dim | None:
    v = types.get(id(g))
    return v.const if v is not None else None
