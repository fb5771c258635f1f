"""Kernel results written everywhere, at the sizes an op instance binds (E2132).

`kernel_cover.py` proves, for every size the kernel's `where` admits, that stores of the
shape `s*B + p` cover their result. A store of another shape (matmul's grouped tile
order, `pid % group` and `min(...)` of program ids) is undecided there. At an op
instance every size is a number, so each store's indices and mask can be evaluated at
every program, loop step and tile position at once (NumPy arrays, one axis per symbol)
and the elements written marked. When the stores that always run (no `if` or `while`
around them, exact masks) leave an element unwritten, and every store of the result is
one of them, the instance is E2132: its result would come back partly uninitialized.
Anything the evaluation cannot follow (an index loaded from memory, a store under an
`if`) or more than `LIMIT` points stays undecided and is accepted, as in `check`.
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
"""Most points (programs x loop steps x tile elements) evaluated for one store."""


def _div(a, b):
    """Truncating division on arrays, as the language divides integers."""
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) >= 0) == (np.asarray(b) > 0), q, -q)


ARRAY_OPS = {"min": np.minimum, "max": np.maximum, "/": _div,
             "%": lambda a, b: a - b * _div(a, b),
             "next_pow2": np.vectorize(next_power_of_two)}


def unwritten_result(kernel: t.Kernel, accesses: list[Access], stored: Iterable[str],
                     grid: tuple, sizes: dict[str, int]) -> Diagnostic | None:
    """E2132 for the first stored result that the bound sizes leave partly unwritten."""
    for name in stored:
        stores = [a for a in accesses if a.kind == "store" and a.tensor == name]
        if not stores or proved_covered(stores, Facts(), grid):
            continue
        extents = tuple(d.as_int() for d in stores[0].extents)
        if None in extents or math.prod(extents) > LIMIT:
            continue
        written = np.zeros(extents, dtype=bool)
        if not all(_mark(store, grid, written) for store in stores):
            continue  # a store the evaluation cannot follow may write the rest
        if not written.all():
            return _report(kernel, name, stores[0], written, sizes)
    return None


def _mark(store: Access, grid: tuple, written: np.ndarray) -> bool:
    """Mark the elements the store writes; False when it cannot be evaluated."""
    if not store.plain or store.conditions or not store.exact_mask:
        return False
    if any(not isinstance(i, Dim) for i in store.indices):
        return False
    env, valid = _points(store, grid)
    if env is None:
        return False
    try:
        indices = [np.asarray(i.evaluate(env, ARRAY_OPS)) for i in store.indices]
        for left, op, right in store.mask:
            valid = valid & _compare(left.evaluate(env, ARRAY_OPS), op,
                                     right.evaluate(env, ARRAY_OPS))
    except (KeyError, ZeroDivisionError, TypeError, ValueError):
        return False
    arrays = np.broadcast_arrays(valid, *indices)
    valid, indices = arrays[0], arrays[1:]
    for index, extent in zip(indices, written.shape):
        valid = valid & (index >= 0) & (index < extent)
    written[tuple(index[valid] for index in indices)] = True
    return True


def _points(store: Access, grid: tuple) -> tuple[dict | None, np.ndarray]:
    """Each symbol of the store as an array along an axis of its own (program ids, loop
    counters, then tile positions), and where the counters are inside their bounds."""
    symbols = _used(store) + [
        Symbol(position(k), Dim.const(0), size - 1) for k, size in enumerate(store.tile)]
    rank, env, valid, count = len(symbols), {}, np.bool_(True), 1
    for axis, symbol in enumerate(symbols):
        if symbol.low is None or symbol.high is None:
            return None, valid
        try:
            low = np.asarray(symbol.low.evaluate(env, ARRAY_OPS))
            high = np.asarray(symbol.high.evaluate(env, ARRAY_OPS))
        except (KeyError, ZeroDivisionError, TypeError, ValueError):
            return None, valid
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
