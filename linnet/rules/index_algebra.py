"""Index algebra: integer index arithmetic toward an affine normal form.

Oriented rules only (never full commutativity or associativity): fold constants,
drop `+ 0` and `* 1`, turn `* 0` into 0, subtract constants by adding their negation,
move constants right and outward (`(x + 2) + y -> (x + y) + 2`, `(x + 2) + 3 -> x + 5`),
and distribute a constant multiplication over a sum (`(x + y) * 4 -> x*4 + y*4`). A
folded constant must fit in i32 (the IR's offsets wrap at 32 bits), so every rule
here is exact in wrapping arithmetic. One rule per line; add a rule by adding a line.
"""

from egglog import i64, rewrite, ruleset, vars_

from .terms import I32_MAX, I32_MIN, Ix

x, y = vars_("x y", Ix)
a, b = vars_("a b", i64)


def _fits(v):
    return [v >= I32_MIN, v <= I32_MAX]


RULES = [
    rewrite(Ix(a) + Ix(b)).to(Ix(a + b), *_fits(a + b)),                   # fold +
    rewrite(Ix(a) - Ix(b)).to(Ix(a - b), *_fits(a - b)),                   # fold -
    rewrite(Ix(a) * Ix(b)).to(Ix(a * b), *_fits(a * b)),                   # fold *
    rewrite(x + Ix(0)).to(x),                                              # x + 0
    rewrite(x * Ix(1)).to(x),                                              # x * 1
    rewrite(x * Ix(0)).to(Ix(0)),                                          # x * 0
    rewrite(x - Ix(0)).to(x),                                              # x - 0
    rewrite(x - Ix(a)).to(x + Ix(i64(0) - a), a > I32_MIN),                # x - c -> x + (-c)
    rewrite(Ix(a) + x).to(x + Ix(a)),                                      # constants right
    rewrite(Ix(a) * x).to(x * Ix(a)),                                      # constants right
    rewrite((x + Ix(a)) + Ix(b)).to(x + Ix(a + b), *_fits(a + b)),         # collect constants
    rewrite((x + Ix(a)) + y).to((x + y) + Ix(a)),                          # constants outward
    rewrite(x + (y + Ix(a))).to((x + y) + Ix(a)),                          # constants outward
    rewrite((x * Ix(a)) * Ix(b)).to(x * Ix(a * b), *_fits(a * b)),         # collect factors
    rewrite((x + y) * Ix(a)).to(x * Ix(a) + y * Ix(a)),                    # distribute
]

STAGE = "egraph-tiles"  # the pass that runs this set by default
RULE_SET = ruleset(*RULES, name="index-algebra")
