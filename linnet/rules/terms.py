"""The term language of the rule sets: integer index arithmetic, boolean masks, tiles.

`Ix` is a signed integer value, scalar or tile (a tile's terms describe one element:
reshape and broadcast are transparent). `Mask` is a boolean value. Symbols stand for
values the rules cannot see into: program ids, loop counters, iota tiles, opaque
bindings; their known ranges are set as facts of the interval tables `lo`/`hi`. A loop
counter whose bounds are run-time values is `Ix.counter(name, lo, hi)`: its range is
what the intervals of its bound terms say (at least min lo, at most max hi - 1).

An interval may come out empty (lo > hi): a counter of a loop that no program runs,
`0..pid0` in a grid of one program. Such a value is never computed, so any claim about
it is vacuously true; a rule that decides a mask must therefore require the intervals
it reads to be non-empty, or it could prove one mask both true and false, which would
merge TRUE and FALSE for every mask of the e-graph.

Soundness rule for every rule set: a symbol may stand for differently broadcast
tiles at its occurrences (an iota read along axis 0 in one place and axis 1 in
another), so no rule may use that two occurrences of a symbol are the same value
(no `x - x -> 0`, no collecting `x + x`). Integer arithmetic wraps at 32 bits in the
IR; constants are folded and intervals computed only while they fit in i32.

`Tile` is a floating tensor or tile value, for the products stage: a symbol is a whole
IR value (so here two occurrences of a symbol ARE the same value), `product(a, b)` is
`sum[k] a[i, k] * b[k, j]` as written (a broadcast product and a sum), `dot(a, b)` the
same contraction on the matrix units with f32 (or wider) accumulation, `dot_acc(a, b,
c)` is `c + dot(a, b)`, `trans` swaps two axes and `widen(x, "bf16")` is a half value
cast to f32 (exact). Costs make extraction prefer dots, then fewer transposes.
"""

from __future__ import annotations

from egglog import Expr, StringLike, function, i64, i64Like, relation

I32_MIN = -(2**31)
I32_MAX = 2**31 - 1


class Ix(Expr):
    """A signed integer (scalar or tile element)."""

    def __init__(self, value: i64Like) -> None: ...

    @classmethod
    def sym(cls, name: StringLike) -> Ix: ...

    @classmethod
    def ranged(cls, name: StringLike, low: i64Like, high: i64Like) -> Ix: ...  # in low..high

    @classmethod
    def counter(cls, name: StringLike, low: Ix, high: Ix) -> Ix: ...  # a loop's in low..high-1

    def __add__(self, other: Ix) -> Ix: ...

    def __sub__(self, other: Ix) -> Ix: ...

    def __mul__(self, other: Ix) -> Ix: ...


class Mask(Expr):
    """A boolean (scalar or tile element)."""

    @classmethod
    def const(cls, value: i64Like) -> Mask: ...  # 1 true, 0 false

    @classmethod
    def sym(cls, name: StringLike) -> Mask: ...


@function
def lt(a: Ix, b: Ix) -> Mask: ...


@function
def both(a: Mask, b: Mask) -> Mask: ...  # logical and


@function
def either(a: Mask, b: Mask) -> Mask: ...  # logical or


@function
def negate(a: Mask) -> Mask: ...  # logical not


@function
def narrow(a: Ix) -> Ix: ...  # a cast between integer dtypes: the value where it fits


# Opaque to the algebra (no rule rewrites them), known only through their intervals: they
# let bounds flow through a program id split into tile row and column (`pid / n`, `pid % n`).
@function
def quot(a: Ix, b: Ix) -> Ix: ...  # integer division, truncating toward zero


@function
def rem(a: Ix, b: Ix) -> Ix: ...  # integer remainder, the sign of `a`


@function
def smaller(a: Ix, b: Ix) -> Ix: ...  # min(a, b)


@function
def larger(a: Ix, b: Ix) -> Ix: ...  # max(a, b)


# The interval analysis: lattice tables, merged by keeping the tighter bound.
@function(merge=lambda old, new: old.max(new))
def lo(x: Ix) -> i64: ...


@function(merge=lambda old, new: old.min(new))
def hi(x: Ix) -> i64: ...


TRUE = Mask.const(1)
FALSE = Mask.const(0)


class Tile(Expr):
    """A floating tensor or tile (its shape and dtype are known outside the e-graph)."""

    @classmethod
    def sym(cls, name: StringLike) -> Tile: ...


@function(cost=4)
def trans(x: Tile) -> Tile: ...  # a 2-D value with its axes swapped


@function(cost=2)
def widen(x: Tile, dtype: StringLike) -> Tile: ...  # x (of the half dtype) cast to f32


@function(cost=1000)
def product(a: Tile, b: Tile) -> Tile: ...  # sum[k] a[i, k] * b[k, j], broadcast and summed


@function(cost=10)
def dot(a: Tile, b: Tile) -> Tile: ...  # the same on the matrix units


@function(cost=9)
def dot_acc(a: Tile, b: Tile, acc: Tile) -> Tile: ...  # acc + dot(a, b)


@function(cost=2)
def plus(a: Tile, b: Tile) -> Tile: ...  # elementwise a + b, one type


@function(cost=2)
def exp(x: Tile) -> Tile: ...


@function(cost=2)
def log(x: Tile) -> Tile: ...


@function(cost=2)
def sqrt(x: Tile) -> Tile: ...


nonnegative = relation("nonnegative", Tile)  # every element >= 0 (or NaN)
