"""The negative corpus: kernels whose load, store or atomic can leave its tensor, each with
the access that `linnet check` must reject (E2131) and its twin that stays in bounds.

Why: a kernel that writes out of bounds does not fail politely; it corrupts the memory of
the process it runs in (`free(): invalid pointer`, SIGABRT, or no sign at all). The
checker's proof that every access is inside its tensor is what keeps such kernels from
running, so it is fuzzed with programs that are wrong in the ways kernels go wrong: a tile
wider than the axis with no mask, a mask with the wrong bound (`cols <= C`), a mask on the
wrong axis (`cols < R`), offsets by `program_id` under a grid with more programs than rows,
negative offsets (`cols - 1`). Each program has exactly that one fault; its twin, the same
program with the fault mended, must check clean, which keeps the generator honest (and the
checker from rejecting what is safe). `linnet fuzz --negative N` runs them
(`linnet/fuzz/negative.py`).

A program is two templates' worth of text, not the generator's trees: one kernel, one
program per row, a tile of `B >= C` columns; its op stores an elementwise scale of the row
(`store`) or adds each row into column sums (`atomic_add`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterator

__all__ = ["OutOfBounds", "FAULTS", "ACCESSES", "out_of_bounds_kernels",
           "out_of_bounds_kernel"]

FAULTS = ("unmasked", "wrong bound", "wrong axis", "grid too large", "negative offset")
"""How an access leaves its tensor."""
ACCESSES = ("load", "store", "atomic_add")
"""Which access is made faulty (a grid too large moves every row-indexed access)."""


@dataclass(frozen=True)
class OutOfBounds:
    """A kernel program with one out-of-bounds fault: `text`; the accesses that leave their
    tensor, as written (`store(y[row, cols], v * 2.0)`) with their 1-based lines; `safe`,
    the same program with the fault mended."""
    label: str
    fault: str
    text: str
    accesses: tuple[tuple[int, str], ...]
    safe: str

    def describe(self) -> str:
        where = "; ".join(f"line {n}: {a}" for n, a in self.accesses)
        return f"{self.label}: {where}"


def out_of_bounds_kernels(seed: int, count: int) -> Iterator[OutOfBounds]:
    """`count` programs from `seed`, each fault and access in turn, the rest drawn."""
    rng = random.Random(seed)
    for k in range(count):
        yield out_of_bounds_kernel(rng, k, FAULTS[k % len(FAULTS)],
                                   ACCESSES[(k // len(FAULTS)) % len(ACCESSES)])


def out_of_bounds_kernel(rng: random.Random, k: int, fault: str, access: str) -> OutOfBounds:
    """Program `k`: `access` made to leave its tensor by `fault`."""
    atomic = access == "atomic_add"
    dtype = rng.choice(("f32", "i32") if atomic else ("f32", "f16", "i32", "f32"))
    tile = rng.choice((16, 32, 64, 128))
    parts = _Parts(rng, dtype)
    bad, good = _fault(rng, fault), _Access()
    grid = bad.grid if fault == "grid too large" else "R"
    load, write = (bad, good) if access == "load" else (good, bad)
    if fault == "grid too large":
        load = write = good  # the indices are right; the rows are not
    name = f"oob_{k}"
    lines = _program(name, dtype, tile, atomic, parts, load, write, grid)
    safe = _program(name, dtype, tile, atomic, parts, good, good, "R")
    wrong = [n for n, moved in ((_LOAD, load != good or grid != "R"),
                                (_WRITE, write != good or (grid != "R" and not atomic)))
             if moved]
    what = "the rows" if fault == "grid too large" else access
    label = f"{name} ({fault}: {what}, {dtype}, tile {tile})"
    return OutOfBounds(label, fault, "\n".join(lines) + "\n",
                       tuple((n + 1, lines[n].strip()) for n in wrong), "\n".join(safe) + "\n")


@dataclass(frozen=True)
class _Access:
    """How an access indexes its columns and masks them (None: no mask); `grid`, the grid
    the fault asks for."""
    cols: str = "cols"
    mask: str | None = "cols < C"
    grid: str = "R"


_LOAD, _WRITE = 6, 7  # the lines of the load and of the store or atomic (0-based)


class _Parts:
    """The values that do not decide the fault: a literal factor and the load's padding."""

    def __init__(self, rng: random.Random, dtype: str) -> None:
        self.factor = str(rng.randint(2, 5)) + ("" if dtype == "i32" else ".0")
        self.zero = "0" if dtype == "i32" else "0.0"
        self.good = _Access()


def _fault(rng: random.Random, fault: str) -> _Access:
    if fault == "unmasked":
        return _Access(mask=None)
    if fault == "wrong bound":
        return _Access(mask=rng.choice(("cols <= C", "cols < C + 1", "cols < B")))
    if fault == "wrong axis":
        return _Access(mask="cols < R")
    if fault == "grid too large":
        return _Access(grid=rng.choice(("R + 1", "R + 2", "2 * R")))
    shift = rng.choice((1, 1, 2))
    return _Access(cols=f"cols - {shift}")


def _program(name: str, dtype: str, tile: int, atomic: bool, parts: _Parts,
             load: _Access, write: _Access, grid: str) -> list[str]:
    """The program's lines: one kernel, one program per row (`grid`), and its op."""
    result = f"Tensor[C; {dtype}]" if atomic else f"Tensor[R, C; {dtype}]"
    load_mask = f", {load.mask}, {parts.zero}" if load.mask else ""
    write_mask = f", {write.mask}" if write.mask else ""
    if atomic:
        write_line = f"    atomic_add(y[{write.cols}], v{write_mask})"
        body = ["    let y[c] = sum[r] x[r, c]", "    return y"]
    else:
        write_line = f"    store(y[row, {write.cols}], v * {parts.factor}{write_mask})"
        body = [f"    return x * {parts.factor}"]
    lines = [
        f"module {name}",
        "",
        f"kernel {name}_rows<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; {dtype}]) -> "
        f"y: {result} grid({grid})",
        "where B >= C {",
        "    let row = program_id(0)",
        "    let cols = iota<i32>(B)",
        f"    let v = load(x[row, {load.cols}]{load_mask})",
        write_line,
        "}",
        "",
        f"op {name}<R: Dim, C: Dim>(x: Tensor[R, C; {dtype}]) -> {result} "
        f"kernel {name}_rows<R, C, {tile}> {{",
        *body,
        "}",
    ]
    assert lines[_LOAD].lstrip().startswith("let v = load") and "y[" in lines[_WRITE]
    return lines
