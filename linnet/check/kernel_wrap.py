"""Kernel integer arithmetic that cannot wrap, at the bound sizes (E2133).

The memory-safety proofs (`kernel_bounds.py`, E2131) read `program_id(0) * B + iota(B)`
as the exact integer it denotes. The generated code computes it in the value's dtype:
an `i32` that passes 2^31 - 1 wraps to a negative number, which a mask such as
`offs < N` lets through, and the access lands before the tensor. So the proofs hold only
where no integer the kernel computes leaves its dtype's range, on any program, lane or
loop trip (masked lanes too: the mask is computed from these values).

That is a question of the bound sizes: `grid((N + B - 1) / B)` with `i32` offsets is
fine up to N = 2^31 - 1 and wraps past it. So it is asked of each kernel instance when
an op chooses its kernel (`choose-kernels`): every signed integer that arithmetic (`+`,
`-`, `*`, negation) or a `cast` computes, and that the memory checks follow, is bounded
with interval arithmetic over the ranges of the program ids, loop counters and tile
positions, and one that may leave its dtype's range is E2133, with the fix (compute it
in `i64`). The offsets the compiler builds from a multi-axis index (`x[rows, cols]`)
are no part of it: they are `i64` wherever the tensor has 2^31 elements or more
(`elaborate_kernel.py`).

Unsigned integers are left out: their arithmetic wraps by definition (hashes rely on
it). So are values the checks cannot bound (an integer loaded from memory, a scalar
parameter, a `var` changed in a loop): an index built from them is proved only by a
mask that compares it with the axis.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import Diagnostic
from ..syntax.printer import print_expr
from .dim_normal_form import Dim
from .kernel_domain import Computed, Symbol, position
from .types import INT_RANGES

SIGNED = ("i8", "i16", "i32", "i64")


class Unbounded(Exception):
    """A value with no finite bounds (a symbol of unknown range, a division by a range
    that holds zero)."""


@dataclass(frozen=True)
class Interval:
    """The integers `low .. high`, with the arithmetic `Dim.evaluate` uses."""
    low: int
    high: int

    def __add__(self, other: "Interval | int") -> "Interval":
        o = _interval(other)
        return Interval(self.low + o.low, self.high + o.high)

    __radd__ = __add__

    def __mul__(self, other: "Interval | int") -> "Interval":
        o = _interval(other)
        corners = [a * b for a in (self.low, self.high) for b in (o.low, o.high)]
        return Interval(min(corners), max(corners))

    __rmul__ = __mul__

    def __pow__(self, exponent: int) -> "Interval":
        corners = [self.low ** exponent, self.high ** exponent]
        low = 0 if exponent % 2 == 0 and self.low <= 0 <= self.high else min(corners)
        return Interval(low, max(corners))


def _interval(x: "Interval | int") -> Interval:
    return x if isinstance(x, Interval) else Interval(x, x)


def _truncating(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _divide(a: Interval, b: Interval) -> Interval:
    if b.low <= 0 <= b.high:
        raise Unbounded
    corners = [_truncating(x, y) for x in (a.low, a.high) for y in (b.low, b.high)]
    return Interval(min(corners), max(corners))


def _remainder(a: Interval, b: Interval) -> Interval:
    if b.low <= 0 <= b.high:
        raise Unbounded
    top = max(abs(b.low), abs(b.high)) - 1
    return Interval(0 if a.low >= 0 else -top, 0 if a.high <= 0 else top)


def _next_pow2(a: Interval) -> Interval:
    def up(n: int) -> int:
        return 1 if n <= 1 else 1 << (n - 1).bit_length()
    return Interval(up(a.low), up(a.high))


def _on_intervals(fn):
    """fn with its operands (intervals, or the ints of constant operands) as intervals."""
    return lambda *xs: fn(*map(_interval, xs))


OPS = {op: _on_intervals(fn) for op, fn in {
    "min": lambda a, b: Interval(min(a.low, b.low), min(a.high, b.high)),
    "max": lambda a, b: Interval(max(a.low, b.low), max(a.high, b.high)),
    "/": _divide, "%": _remainder, "next_pow2": _next_pow2}.items()}
"""`Dim.evaluate`'s atoms on intervals."""


def bounds(value: Dim, ranges: dict[str, Interval]) -> Interval | None:
    """The lowest and highest `value` may take when each symbol lies in its range; None
    when a symbol has no known range."""
    try:
        return _interval(value.evaluate(ranges, OPS))
    except (KeyError, Unbounded):
        return None


def symbol_ranges(context: tuple[Symbol, ...], tile: tuple) -> dict[str, Interval]:
    """Each run-time symbol's range, in order (a counter's bounds may name an earlier
    symbol: `0..diagonal`), and each tile position's `0 .. size - 1`."""
    ranges: dict[str, Interval] = {}
    for s in context:
        low = bounds(s.low, ranges) if s.low is not None else None
        high = bounds(s.high, ranges) if s.high is not None else None
        if low is not None and high is not None:
            ranges[s.name] = Interval(low.low, high.high)
    for k, size in enumerate(tile):
        n = size.as_int() if isinstance(size, Dim) else size
        if isinstance(n, int):
            ranges[position(k)] = Interval(0, max(n - 1, 0))
    return ranges


def wrapping(computed: list[Computed]) -> tuple[Computed, Interval] | None:
    """The first signed integer whose bounds leave its dtype's range, with its bounds."""
    for c in computed:
        if c.dtype not in SIGNED:
            continue
        found = bounds(c.value, symbol_ranges(c.context, c.tile))
        low, high = INT_RANGES[c.dtype]
        if found is not None and (found.low < low or found.high > high):
            return c, found
    return None


def wrap_problem(kernel_name: str, computed: list[Computed],
                 sizes: dict[str, int]) -> Diagnostic | None:
    """E2133 at the first integer of the kernel instance that may wrap at `sizes`."""
    found = wrapping(computed)
    if found is None:
        return None
    c, span = found
    low, high = INT_RANGES[c.dtype]
    text = print_expr(c.node)
    reach = span.high if span.high > high else span.low
    at = ", ".join(f"{k} = {v}" for k, v in sizes.items())
    message = (f"`{text}` may wrap in kernel `{kernel_name}` at the bound sizes ({at}): "
               f"it reaches {reach}, outside {c.dtype}'s {low} .. {high}")
    return Diagnostic("E2133", message, c.node.span, f"computed in {c.dtype}",
                      help="compute it in i64, from a widened operand: "
                           "`cast<i64>(program_id(0)) * B + iota<i64>(B)`")
