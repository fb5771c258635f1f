"""Tile products: a contraction of two 2-D tiles becomes a dot on the matrix units.

The products stage translates only contractions that the matrix units can take (every
side >= 16, float operands of one dtype) into `product(a, b)`, with `trans` around an
operand or the result where the einsum's axes are in another order. These rules move
transposes through products (`(a b)^T = b^T a^T`) and cancel pairs, so an operand
written transposed or the operands written swapped still reach `dot(a, b)` with the
fewest transposes; a product of widened half tiles is a dot of the half tiles
themselves (their products are exact in f32); a product added into an accumulator is
a `dot_acc`. Every rule is exact except `dot_acc`, which adds the products into the
accumulator one by one rather than summing them first (allowed by `equivalent`).
"""

from egglog import String, rewrite, ruleset, vars_

from .terms import Tile, dot, dot_acc, plus, product, trans, widen

a, b, c = vars_("a b c", Tile)
(d,) = vars_("d", String)

RULES = [
    rewrite(product(a, b)).to(dot(a, b)),                                 # matrix units
    rewrite(trans(trans(a))).to(a),                                       # (a^T)^T = a
    rewrite(trans(product(a, b))).to(product(trans(b), trans(a))),       # (a b)^T = b^T a^T
    rewrite(trans(widen(a, d))).to(widen(trans(a), d)),                   # transpose, then widen
    rewrite(dot(widen(a, d), widen(b, d))).to(dot(a, b)),                 # exact half products
    rewrite(plus(c, dot(a, b))).to(dot_acc(a, b, c)),                     # into an accumulator
    rewrite(plus(dot(a, b), c)).to(dot_acc(a, b, c)),                     # either side
]

STAGE = "egraph-products"  # the pass that runs this set by default
RULE_SET = ruleset(*RULES, name="tile-products")
