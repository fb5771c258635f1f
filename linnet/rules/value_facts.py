"""Value facts: what is known about the elements of a tile, for rules to test.

`nonnegative(x)`: every element of x is >= 0 or NaN. The rules here only record facts;
a rule that needs one names it as a condition, e.g. `exp(log(x)) -> x` holds for
nonnegative x (docs/rules.md adds that rule as the worked example).
"""

from egglog import rule, ruleset, vars_

from .terms import Tile, exp, nonnegative, sqrt

e, x = vars_("e x", Tile)

RULES = [
    rule(e == exp(x), name="exp is nonnegative").then(nonnegative(e)),
    rule(e == sqrt(x), name="sqrt is nonnegative").then(nonnegative(e)),
]

STAGE = "egraph-products"  # the pass that runs this set by default
RULE_SET = ruleset(*RULES, name="value-facts")
