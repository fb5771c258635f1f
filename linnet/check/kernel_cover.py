"""Kernel results written everywhere: the stores over the grid cover each result (E2132).

A result written by `store` starts as uninitialized memory: an element no program
writes comes back as whatever was there (`grid(N / B)` at N = 100, B = 64 leaves 36
elements of garbage; Pallas returns NaN). An atomic's result starts from a defined value
(0, the lowest, the highest), so it needs no proof.

`check` proves coverage from the shape of a store's indices (`kernel_values.py`): along
each axis of the result the index must be `s*B + p`, `s` or `p`, where `s` is a program
id or a loop counter that takes every value of `0 .. S - 1` (a grid axis, or a loop with
known bounds outside any `if` or `while`) and `p` the position along a tile of `B` or
more elements, each symbol serving one axis. Those programs write `0 .. S*B - 1` of the
axis, so the axis is covered when `S*B >= extent`, and the store's mask may only leave
out what lies outside the result. A store of that shape whose sizes fail (the grid is
too small at sizes the kernel's `where` admits) is E2132 at the kernel. A store of any
other shape (matmul's grouped ordering of its tiles, a store in a run-time loop, a mask
that is not a conjunction of comparisons) is undecided here, and decided where every size
is a number, at each op instance that runs the kernel (`kernel_cover_sizes.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import permutations

from ..diagnostics import DiagnosticBag
from ..syntax import tree as t
from .dim_normal_form import Dim
from .dims import Facts
from .kernel_bounds import access_facts, sizes_where_fails
from .kernel_domain import Access

COVERED, UNDECIDED = "covered", "undecided"


@dataclass(frozen=True)
class Part:
    """One term of an index that walks an axis: `symbol*step`, the symbol taking every
    value of `0 .. count - 1` (a tile position's count is the tile's length)."""
    symbol: str
    count: Dim
    step: Dim


@dataclass(frozen=True)
class Axis:
    """How one store's index walks one axis of the result: a sum of parts, finest first,
    that together take every value of `0 .. written - 1` (each part's step is at most
    what the finer parts span, so they leave no gap)."""
    parts: tuple[Part, ...]

    def written(self) -> Dim:
        """How many leading elements of the axis the programs write: one past the largest
        index, `1 + sum((count - 1) * step)` (`S*B` for `s*B + p`; parts may overlap, as
        `2*pid + iota(4)` does, so the coarsest part alone is not the answer)."""
        return sum(((p.count - 1) * p.step for p in self.parts), Dim.const(1))

    @property
    def symbols(self) -> set[str]:
        return {p.symbol for p in self.parts}


def check_coverage(kernel: t.Kernel, accesses: list[Access], writes: dict,
                   base: Facts, grid: tuple, bag: DiagnosticBag) -> dict[str, str]:
    """Each stored result's verdict: covered, undecided, or reported (E2132)."""
    verdicts: dict[str, str] = {}
    for result in kernel.results:
        if writes.get(result.name, "store") != "store":
            continue
        stores = [a for a in accesses if a.kind == "store" and a.tensor == result.name]
        verdicts[result.name] = _verdict(result, stores, base, grid, bag)
    return verdicts


def proved_covered(stores: list[Access], base: Facts, grid: tuple) -> bool:
    """Does one of the stores provably write every element of its result?"""
    return any(_covers(store, axes, base) for store, axes in _shaped(stores, base, grid))


def _shaped(stores: list[Access], base: Facts, grid: tuple) -> list[tuple[Access, list]]:
    return [(s, axes) for s in stores if (axes := walk(s, base, grid)) is not None]


def _covers(store: Access, axes: list["Axis"], base: Facts) -> bool:
    return all(base.prove(a.written(), ">=", n) for a, n in zip(axes, store.extents))


def _verdict(result: t.Param, stores: list[Access], base: Facts, grid: tuple,
             bag: DiagnosticBag) -> str:
    shaped = _shaped(stores, base, grid)
    if not shaped:
        return UNDECIDED
    if any(_covers(store, axes, base) for store, axes in shaped):
        return COVERED
    if len(stores) == 1:
        store, axes = shaped[0]
        for k, (axis, extent) in enumerate(zip(axes, store.extents)):
            sizes = sizes_where_fails(base, axis.written(), ">=", extent)
            if sizes is not None:
                _report(result, store, k, axis, sizes, bag)
                return "reported"
    return UNDECIDED


def walk(store: Access, base: Facts, grid: tuple) -> list[Axis] | None:
    """Each axis's `Axis` when the store has the shape coverage can be proved of, with a
    mask that leaves out nothing inside the result; else None."""
    if not store.plain or store.conditions or not store.exact_mask:
        return None
    ranges = {s.name: (s.low, s.high) for s in store.context}
    ranges.update({f"@{k}": (Dim.const(0), size - 1) for k, size in enumerate(store.tile)})
    axes, used = [], set()
    for index in store.indices:
        axis = _axis(index, ranges, base)
        if axis is None or axis.symbols & used:
            return None
        used |= axis.symbols
        axes.append(axis)
    return axes if _mask_keeps_inside(store, base, grid) else None


def _axis(index, ranges: dict, base: Facts) -> Axis | None:
    """The index as a sum of `symbol*step` parts with no gap between them (an exact match
    of its normal form), else None."""
    if not isinstance(index, Dim):
        return None
    names = sorted(index.symbols() - base.symbols)
    if not names or any(n not in ranges for n in names):
        return None
    parts, zero = [], {n: 0 for n in names}
    for name in names:
        low, high = ranges[name]
        if low is None or high is None or not base.prove(low, "==", 0):
            return None
        parts.append(Part(name, high + 1, index.substitute({**zero, name: 1})))
    if sum((Dim.sym(p.symbol) * p.step for p in parts), Dim()) != index:
        return None
    return _gapless(parts, base)


def _gapless(parts: list[Part], base: Facts) -> Axis | None:
    """The parts in an order where each step is at most what the finer parts span
    (`count*step` of the one before, 1 for the first), if there is one."""
    for order in permutations(parts):
        spanned, ok = Dim.const(1), True
        for part in order:
            if not (base.prove(part.step, ">=", 1) and base.prove(part.step, "<=", spanned)):
                ok = False
                break
            spanned = part.count * part.step
        if ok:
            return Axis(tuple(order))
    return None


def _mask_keeps_inside(store: Access, base: Facts, grid: tuple) -> bool:
    """Does every clause of the mask hold wherever the indices are inside the result?"""
    if not store.mask:
        return True
    inside = _without_mask(store)
    facts = access_facts(base, inside, grid)
    for index, extent in zip(store.indices, store.extents):
        facts = facts.assume(index, ">=", 0).assume(index, "<", extent)
    return all(facts.prove(left, op, right) for left, op, right in store.mask)


def _without_mask(store: Access) -> Access:
    return replace(store, mask=())


def _report(result: t.Param, store: Access, k: int, axis: Axis, sizes: dict,
            bag: DiagnosticBag) -> None:
    at = ", ".join(f"{name} = {v}" for name, v in sorted(sizes.items()))
    written, extent = axis.written(), store.extents[k]
    message = (f"the grid does not write all of result `{result.name}`: along axis {k} its "
               f"programs store {written} of its {extent} elements")
    label = (f"{written.evaluate(sizes)} of {extent.evaluate(sizes)} at {at}; the rest is "
             "left uninitialized")
    span = (store.node.args[0].value if isinstance(store.node, t.Effect) else store.node).span
    bag.error("E2132", message, span, label, help=_help(axis, extent))


def _help(axis: Axis, extent: Dim) -> str:
    last = axis.parts[-1]
    if len(axis.parts) == 1:
        return (f"give the grid (or the tile, or the loop) at least {extent} steps along "
                "this axis")
    step = last.step
    return (f"cover the axis with `({extent} + {step} - 1) / {step}` programs (or loop steps) "
            f"and mask the store with the index `< {extent}`; or add `where {extent} % {step} "
            "== 0` (at sizes that fail it the op's body runs)")
