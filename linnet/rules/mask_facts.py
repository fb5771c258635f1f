"""Mask facts: prove comparisons from the interval analysis of their operands.

`lo(e)`/`hi(e)` are lattice tables (merge keeps the tighter bound): constants are their
own bounds, so are ranged symbols `Ix.ranged(name, lo, hi)` (an iota of length n is
0..n-1, `program_id(a)` is 0..grid[a]-1, a loop counter with compile-time bounds lo..hi-1),
a counter with run-time bounds `Ix.counter(name, lo, hi)` is at least min(lo) and at most
max(hi) - 1 (each side only where that bound's interval is known), and bounds flow
through `+`, `-`, `*`, `min`, `max` and integer casts while they fit in i32 (so no wrap
can happen), and through `/` and `%` of a non-negative value by a positive one (whose
interval is non-empty: `lx / hy` with an empty 1..0 would divide by zero, and a failing
primitive in an action stops egglog with a panic).
Then `lt(e, c)` is true when max(e) < min(c) and false when min(e) >= max(c), both only
from non-empty intervals (an empty one belongs to a value never computed, terms.py), and
the boolean connectives simplify around proved masks. One rule per line.
"""

from egglog import String, i64, rewrite, rule, ruleset, set_, union, vars_

from .terms import (FALSE, I32_MAX, I32_MIN, TRUE, Ix, Mask, both, either, hi, larger, lo, lt,
                    narrow, negate, quot, rem, smaller)

e, x, y = vars_("e x y", Ix)
m, k = vars_("m k", Mask)
c, lx, hx, ly, hy = vars_("c lx hx ly hy", i64)
(n,) = vars_("n", String)


def _bounds(x, y):
    return [lo(x) == lx, hi(x) == hx, lo(y) == ly, hi(y) == hy]


def _nonempty():
    return [lx <= hx, ly <= hy]


def _fits(low, high):
    return [low >= I32_MIN, high <= I32_MAX]


def _products():
    return (lx * ly, lx * hy, hx * ly, hx * hy)


def _min4(p):
    return p[0].min(p[1]).min(p[2].min(p[3]))


def _max4(p):
    return p[0].max(p[1]).max(p[2].max(p[3]))


RULES = [
    # intervals
    rule(e == Ix(c), name="bounds of a constant").then(set_(lo(e)).to(c), set_(hi(e)).to(c)),
    rule(e == Ix.ranged(n, lx, hx), name="bounds of a ranged symbol").then(
        set_(lo(e)).to(lx), set_(hi(e)).to(hx)),
    rule(e == x + y, *_bounds(x, y), *_fits(lx + ly, hx + hy), name="bounds of x + y").then(
        set_(lo(e)).to(lx + ly), set_(hi(e)).to(hx + hy)),
    rule(e == x - y, *_bounds(x, y), *_fits(lx - hy, hx - ly), name="bounds of x - y").then(
        set_(lo(e)).to(lx - hy), set_(hi(e)).to(hx - ly)),
    rule(e == x * y, *_bounds(x, y), *_fits(_min4(_products()), _max4(_products())),
         name="bounds of x * y").then(
        set_(lo(e)).to(_min4(_products())), set_(hi(e)).to(_max4(_products()))),
    rule(e == narrow(x), lo(x) == lx, hi(x) == hx, *_fits(lx, hx), name="bounds of a cast").then(
        set_(lo(e)).to(lx), set_(hi(e)).to(hx)),
    rule(e == quot(x, y), *_bounds(x, y), lx >= 0, ly >= 1, ly <= hy,
         name="bounds of x / y").then(
        set_(lo(e)).to(lx / hy), set_(hi(e)).to(hx / ly)),
    rule(e == rem(x, y), *_bounds(x, y), lx >= 0, ly >= 1, ly <= hy,
         name="bounds of x % y").then(
        set_(lo(e)).to(i64(0)), set_(hi(e)).to(hx.min(hy - 1))),
    rule(e == smaller(x, y), *_bounds(x, y), name="bounds of min(x, y)").then(
        set_(lo(e)).to(lx.min(ly)), set_(hi(e)).to(hx.min(hy))),
    rule(e == larger(x, y), *_bounds(x, y), name="bounds of max(x, y)").then(
        set_(lo(e)).to(lx.max(ly)), set_(hi(e)).to(hx.max(hy))),
    rule(e == Ix.counter(n, x, y), lo(x) == lx, name="lower bound of a loop counter").then(
        set_(lo(e)).to(lx)),
    rule(e == Ix.counter(n, x, y), hi(y) == hy, hy - 1 >= I32_MIN,
         name="upper bound of a loop counter").then(set_(hi(e)).to(hy - 1)),
    # comparisons, from non-empty intervals only (see terms.py)
    rule(m == lt(x, y), *_bounds(x, y), hx < ly, *_nonempty(),
         name="lt proved true").then(union(m).with_(TRUE)),
    rule(m == lt(x, y), *_bounds(x, y), lx >= hy, *_nonempty(),
         name="lt proved false").then(union(m).with_(FALSE)),
    # connectives around proved masks
    rewrite(both(TRUE, m)).to(m),
    rewrite(both(m, TRUE)).to(m),
    rewrite(both(FALSE, m)).to(FALSE),
    rewrite(both(m, FALSE)).to(FALSE),
    rewrite(either(TRUE, m)).to(TRUE),
    rewrite(either(m, TRUE)).to(TRUE),
    rewrite(either(FALSE, m)).to(m),
    rewrite(either(m, FALSE)).to(m),
    rewrite(negate(TRUE)).to(FALSE),
    rewrite(negate(FALSE)).to(TRUE),
]

STAGE = "egraph-tiles"  # the pass that runs this set by default
RULE_SET = ruleset(*RULES, name="mask-facts")
