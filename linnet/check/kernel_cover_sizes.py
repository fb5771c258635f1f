"""Kernel results written everywhere, at the sizes an op instance binds (E2132).

`kernel_cover.py` proves, for every size the kernel's `where` admits, that stores of the
shape `s*B + p` cover their result. A store of another shape (matmul's grouped tile
order, `pid % group` and `min(...)` of program ids) is undecided there. At an op
instance every size is a number, so each store's indices and mask can be evaluated at
every program, loop step and tile position (NumPy arrays, one axis per symbol) and the
elements written marked: axis by axis where each index follows its own tile axis (the
usual `c[rows, cols]`: programs x the sum of the tile's sides), else point by point.
When the stores that always run (no `if` or `while` around them, exact masks) leave an
element unwritten, and every store of the result is one of them, the instance is E2132:
its result would come back partly uninitialized. Anything the evaluation cannot follow
(an index loaded from memory, a store under an `if`) or past the limits below stays
undecided and is accepted, as in `check`.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ..diagnostics import Diagnostic
from ..syntax import tree as t
from .dim_normal_form import Dim, next_power_of_two
from .dims import Facts
from .kernel_cover import proved_covered
from .kernel_domain import Access, Symbol, position

LIMIT = 1 << 22
"""Most points (programs x loop steps x tile elements) evaluated at once for one store."""
RESULT_LIMIT = 1 << 26
"""Most elements of a result marked (a bool each)."""
GROUP_LIMIT = 1 << 17
"""Most programs x loop steps whose tiles are marked one by one (`_mark_by_axes`)."""


def _div(a, b):
    """Truncating division on arrays, as the language divides integers."""
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) >= 0) == (np.asarray(b) > 0), q, -q)


ARRAY_OPS = {"min": np.minimum, "max": np.maximum, "/": _div,
             "%": lambda a, b: a - b * _div(a, b),
             "next_pow2": np.vectorize(next_power_of_two)}
EVAL_ERRORS = (KeyError, ZeroDivisionError, TypeError, ValueError)
"""A symbol the evaluation does not know (a loaded value, a scalar parameter), and the like."""


def unwritten_result(kernel: t.Kernel, accesses: list[Access], stored: Iterable[str],
                     grid: tuple, sizes: dict[str, int]) -> Diagnostic | None:
    """E2132 for the first stored result that the bound sizes leave partly unwritten."""
    for name in stored:
        stores = [a for a in accesses if a.kind == "store" and a.tensor == name]
        if not stores or proved_covered(stores, Facts(), grid):
            continue
        extents = tuple(d.as_int() for d in stores[0].extents)
        if None in extents or math.prod(extents) > RESULT_LIMIT:
            continue
        written = np.zeros(extents, dtype=bool)
        if not all(_mark(store, written) for store in stores):
            continue  # a store the evaluation cannot follow may write the rest
        if not written.all():
            return _report(kernel, name, stores[0], written, sizes)
    return None


def _mark(store: Access, written: np.ndarray) -> bool:
    """Mark the elements the store writes; False when it cannot be evaluated."""
    if not store.plain or store.conditions or not store.exact_mask:
        return False
    if any(not isinstance(i, Dim) for i in store.indices):
        return False
    try:
        return _mark_by_axes(store, written) or _mark_by_points(store, written)
    except EVAL_ERRORS:
        return False


def _mark_by_axes(store: Access, written: np.ndarray) -> bool:
    """Where each index reads the positions of its own tile axis only, and each mask
    clause those of one index (`c[rows, cols]` masked `rows[i] < M && cols[j] < N`), a
    program's store writes the product of what each axis writes: evaluate each axis over
    all programs and steps at once, then mark the products one group at a time. This
    costs programs x the sum of the tile's sides, not their product."""
    axis_of = _axis_of_positions(store)
    if axis_of is None:
        return False
    outer = _used(store)
    env, valid = _enumerate(outer, len(outer) + 1)
    if env is None:
        return False
    lead = tuple(np.shape(env[s.name])[k] for k, s in enumerate(outer))
    groups = math.prod(lead)
    sides = sum(_side(store, k) for k in range(len(store.indices)))
    if groups > GROUP_LIMIT or groups * sides > LIMIT:
        return False

    def rows(array, side: int) -> np.ndarray:  # one row per program and step
        return np.broadcast_to(np.asarray(array), lead + (side,)).reshape(groups, side)

    keep = rows(valid, 1)[:, 0]
    for clause in _clauses_of(store, axis_of, None):
        keep = keep & rows(_holds(clause, env), 1)[:, 0]
    coords = []
    for k, index in enumerate(store.indices):
        side, env_k = _side(store, k), {**env, **_positions(store, axis_of, k, len(outer))}
        values = rows(index.evaluate(env_k, ARRAY_OPS), side)
        inside = (values >= 0) & (values < written.shape[k])
        for clause in _clauses_of(store, axis_of, k):
            inside = inside & rows(_holds(clause, env_k), side)
        coords.append((values, inside))
    ranges = [_ranges(values, inside) for values, inside in coords]
    for g in np.flatnonzero(keep):
        if all(contiguous[g] for contiguous, _, _ in ranges):
            written[tuple(slice(start[g], stop[g]) for _, start, stop in ranges)] = True
        else:
            written[np.ix_(*(values[g][inside[g]] for values, inside in coords))] = True
    return True


def _ranges(values: np.ndarray, inside: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per row (program and step): whether the values inside are one run of consecutive
    ascending numbers, and that run's start and stop. Such a tile marks by slices, a
    memset, where the general product of index arrays costs a write per element: matmul's
    4096 x 4096 tiles, 81 candidates of `tune --list`, took seconds."""
    side = values.shape[1]
    count = inside.sum(axis=1)
    first = np.argmax(inside, axis=1)
    last = side - 1 - np.argmax(inside[:, ::-1], axis=1)
    ascending = np.all(np.diff(values, axis=1) == 1, axis=1)  # a side of 1: True
    start = np.take_along_axis(values, first[:, None], axis=1)[:, 0]
    contiguous = ascending & (count == last - first + 1) & (count > 0)
    return contiguous, start, start + count


def _axis_of_positions(store: Access) -> dict[str, int | None] | None:
    """Each tile position's index (the index whose tile axes hold it), when every index
    reads only its own axes' positions; else None."""
    axis_of: dict[str, int | None] = {}
    for k, axes in enumerate(store.index_axes):
        if len(axes) > 1:
            return None
        axis_of.update({position(a): k for a in axes})
    for k, index in enumerate(store.indices):
        if any(axis_of.get(n, k) != k for n in index.symbols() if n.startswith("@")):
            return None
    for left, _, right in store.mask:
        owners = {axis_of.get(n, -1) for n in _positions_read(left, right)}
        if -1 in owners or len(owners) > 1:
            return None
    return axis_of


def _positions_read(*dims: Dim) -> set[str]:
    return {n for d in dims for n in d.symbols() if n.startswith("@")}


def _clauses_of(store: Access, axis_of: dict, k: int | None) -> list:
    """The mask clauses about index k's positions (None: those about no position)."""
    return [c for c in store.mask
            if {axis_of.get(n) for n in _positions_read(c[0], c[2])} == ({k} if k is not None
                                                                          else set())]


def _positions(store: Access, axis_of: dict, k: int, rank: int) -> dict:
    """Index k's tile positions, along the last of `rank + 1` axes."""
    shape = [1] * rank + [_side(store, k)]
    return {n: np.arange(_side(store, k), dtype=np.int64).reshape(shape)
            for n, owner in axis_of.items() if owner == k}


def _side(store: Access, k: int) -> int:
    axes = store.index_axes[k]
    return int(store.tile[axes[0]].as_int()) if axes else 1


def _holds(clause, env: dict) -> np.ndarray:
    left, op, right = clause
    return _compare(left.evaluate(env, ARRAY_OPS), op, right.evaluate(env, ARRAY_OPS))


def _mark_by_points(store: Access, written: np.ndarray) -> bool:
    """Evaluate every index at every program, step and tile position at once."""
    symbols = _used(store) + [
        Symbol(position(k), Dim.const(0), size - 1) for k, size in enumerate(store.tile)]
    env, valid = _enumerate(symbols, len(symbols))
    if env is None:
        return False
    indices = [np.asarray(i.evaluate(env, ARRAY_OPS)) for i in store.indices]
    for clause in store.mask:
        valid = valid & _holds(clause, env)
    arrays = np.broadcast_arrays(valid, *indices)
    valid, indices = arrays[0], arrays[1:]
    for index, extent in zip(indices, written.shape):
        valid = valid & (index >= 0) & (index < extent)
    written[tuple(index[valid] for index in indices)] = True
    return True


def _enumerate(symbols: list[Symbol], rank: int) -> tuple[dict | None, np.ndarray]:
    """Each symbol as an array along an axis of its own (of `rank`), over the range its
    bounds allow, and where each lies inside its bounds (a loop's may depend on the
    program); None past `LIMIT` points or for a bound it cannot evaluate."""
    env: dict[str, np.ndarray] = {}
    valid, count = np.ones((1,) * rank, dtype=bool), 1
    for axis, symbol in enumerate(symbols):
        if symbol.low is None or symbol.high is None:
            return None, valid
        low = np.asarray(symbol.low.evaluate(env, ARRAY_OPS))
        high = np.asarray(symbol.high.evaluate(env, ARRAY_OPS))
        start, stop = int(low.min(initial=0)), int(high.max(initial=-1)) + 1
        count *= max(stop - start, 0)
        if count > LIMIT:
            return None, valid
        shape = [1] * rank
        shape[axis] = max(stop - start, 0)
        values = np.arange(start, max(stop, start), dtype=np.int64).reshape(shape)
        valid = valid & (values >= low) & (values <= high)
        env[symbol.name] = values
    return env, valid


def _used(store: Access) -> list[Symbol]:
    """The symbols in scope that the indices and mask read, with those their bounds read
    (a counter of `0..diagonal`), in scope order."""
    names: set[str] = set()
    for d in [*store.indices, *(side for left, _, right in store.mask for side in (left, right))]:
        names |= d.symbols()
    for symbol in reversed(store.context):
        if symbol.name in names:
            for bound in (symbol.low, symbol.high):
                names |= bound.symbols() if bound is not None else set()
    return [s for s in store.context if s.name in names]


def _compare(left, op: str, right) -> np.ndarray:
    return {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}[op](left, right)


def _report(kernel: t.Kernel, name: str, store: Access, written: np.ndarray,
            sizes: dict[str, int]) -> Diagnostic:
    missing = tuple(int(i) for i in np.argwhere(~written)[0])
    at = ", ".join(f"{k} = {v}" for k, v in sizes.items())
    count, total = int(written.sum()), written.size
    span = (store.node.args[0].value if isinstance(store.node, t.Effect) else store.node).span
    return Diagnostic(
        "E2132", f"at the bound sizes ({at}) kernel `{kernel.name}` writes {count} of the "
        f"{total} elements of result `{name}`; the rest would come back uninitialized",
        span, f"never writes {name}{list(missing)}",
        help="make the grid, the tiles or the loop cover the result at these sizes, or add a "
             "`where` clause that these sizes fail (then the op's body runs)")
