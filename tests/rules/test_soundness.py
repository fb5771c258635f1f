"""Every rule of `linnet/rules/` checked by itself (`linnet.testing.rule_soundness`), and the
checker catching deliberately wrong rules: swapped operands, a signed division as a shift,
off-by-one bounds, missing guards (constants that do not fit, empty intervals, a zero
divisor in an action), a rule that uses two occurrences of a symbol as one value, and wrong
tile and value-fact rules."""

from __future__ import annotations

import pytest
from egglog import String, function, i64, rewrite, rule, ruleset, set_, union, vars_

from linnet.rules import MODULES, RULE_SETS, index_algebra, mask_facts
from linnet.rules.terms import (I32_MAX, I32_MIN, TRUE, Ix, Mask, Tile, exp, hi, lo, log, lt,
                                 nonnegative, product, quot, rem, trans)
from linnet.testing.rule_samples import edges
from linnet.testing.rule_semantics import LIBRARY, bounds, wrap
from linnet.testing.rule_soundness import check, check_rules, rules_of

from egraph_frees import free_egraphs, older_objects_frozen  # noqa: F401 (autouse)

# Rules the checker may not interpret, each with the reason (none today: every rule of the
# library is interpreted, so a new kind of term fails the test until it has a meaning).
EXCUSED: dict[str, str] = {}

x, y, e = vars_("x y e", Ix)
a, b, lx, hx, ly, hy = vars_("a b lx hx ly hy", i64)
t, u = vars_("t u", Tile)
(n,) = vars_("n", String)


def _only(rules, **options):
    """The one finding for a rule set of one deliberately wrong rule."""
    found = check_rules(ruleset(*rules, name="mine"), **options)
    assert len(found) == 1, found
    return found[0]


# ------------------------------------------------------------- the library

def test_every_rule_of_the_library_is_sound_and_checked():
    report = check(RULE_SETS, excused=EXCUSED, samples=200)
    assert report.unsound == [], "\n".join(map(str, report.unsound))
    total = sum(len(m.RULES) for m in MODULES)
    assert len(report.checked) + len(report.excused) == total
    assert sorted(r.text for r, _ in report.excused) == sorted(EXCUSED)


def test_the_command_checks_a_module_of_rules(capsys):
    from linnet.testing.rule_soundness import main
    assert main(["--rules", "linnet.rules.value_facts", "--samples", "50"]) == 0
    assert "2 rules checked, 0 unsound" in capsys.readouterr().out


def test_rules_are_enumerated_from_sets_modules_rules_and_lists():
    assert len(rules_of(index_algebra)) == len(index_algebra.RULES)
    assert len(rules_of(RULE_SETS)) == sum(len(m.RULES) for m in MODULES)
    one = rules_of(mask_facts.RULES[0])
    assert [r.text for r in one] == ["bounds of a constant"]
    assert {r.rule_set for r in rules_of(RULE_SETS)} == {
        "index-algebra", "mask-facts", "tile-products", "value-facts"}


# ---------------------------------------------------------- wrong rewrites

def test_swapped_operands_are_caught():
    found = _only([rewrite(x - y).to(y - x)])
    assert "two sides differ" in found.reason
    ex = found.counterexample
    assert ex["left side"] != ex["right side"]
    assert wrap(ex["x"] - ex["y"], ex["width"]) == ex["left side"]


@function
def shr(v: Ix, k: Ix) -> Ix: ...  # arithmetic shift right


@function
def shl(v: Ix, k: Ix) -> Ix: ...


SHIFTS = LIBRARY.extended(ops={
    shr: lambda ctx, v, k: v >> k,
    shl: lambda ctx, v, k: wrap(v << k, ctx.width)})


def test_a_signed_division_by_two_is_not_a_shift():
    found = _only([rewrite(quot(x, Ix(2))).to(shr(x, Ix(1)))], semantics=SHIFTS)
    v = found.counterexample["x"]
    assert v < 0 and v % 2 == 1, found       # -1 / 2 == 0 but -1 >> 1 == -1
    # the sound one, multiplication by two as a shift, holds (wrapping at both widths)
    assert check_rules(ruleset(rewrite(x * Ix(2)).to(shl(x, Ix(1))), name="ok"),
                       semantics=SHIFTS) == []


def test_a_term_without_meaning_fails_unless_excused():
    rules = ruleset(rewrite(quot(x, Ix(2))).to(shr(x, Ix(1))), name="mine")
    (found,) = check_rules(rules)
    assert "cannot be interpreted" in found.reason and "shr" in found.reason
    text = rules_of(rules)[0].text
    report = check(rules, excused={text: "shifts have no meaning here"})
    assert report.unsound == [] and report.checked == []
    assert [reason for _, reason in report.excused] == ["shifts have no meaning here"]


def test_two_occurrences_of_a_symbol_are_not_one_value():
    """An index term describes one element; `x` may be broadcast differently at each
    occurrence (terms.py), so `x - x` is not 0."""
    found = _only([rewrite(x - x).to(Ix(0))])
    xs = found.counterexample["x"]
    assert isinstance(xs, list) and xs[0] != xs[1]


def test_a_folded_constant_must_fit():
    found = _only([rewrite(Ix(a) + Ix(b)).to(Ix(a + b))])
    # the sum leaves the width (or, at 64 bits, overflows egglog's i64 and panics)
    assert "does not fit" in found.reason or "i64 overflow" in found.reason
    low, high = bounds(found.counterexample["width"])
    assert not low <= found.counterexample["a"] + found.counterexample["b"] <= high
    found = _only([rewrite(x - Ix(a)).to(x + Ix(i64(0) - a))])    # -MIN does not fit
    low, high = bounds(found.counterexample["width"])
    assert found.counterexample["a"] == low and not low <= -low <= high, found


def test_a_wrong_tile_rule_and_a_conditional_one():
    found = _only([rewrite(trans(product(t, u))).to(product(trans(t), trans(u)))])
    assert "two sides differ" in found.reason
    found = _only([rewrite(exp(log(t))).to(t)])                  # NaN at t < 0
    assert "two sides differ" in found.reason
    assert check_rules(ruleset(rewrite(exp(log(t))).to(t, nonnegative(t)), name="ok")) == []


# -------------------------------------------------------------- wrong facts

def _counter_hi(offset: int):
    return rule(e == Ix.counter(n, x, y), hi(y) == hy, hy - offset >= I32_MIN,
                name="counter hi").then(
        set_(hi(e)).to(hy - offset))


def test_an_off_by_one_bound_is_caught():
    found = _only([_counter_hi(2)])                              # hi(counter) is hy - 1
    assert "upper bound" in found.reason
    ex = found.counterexample
    assert ex["e"] == ex["hy"] - 1
    assert check_rules(ruleset(_counter_hi(1), name="ok")) == []
    found = _only([rule(e == rem(x, y), lo(x) == lx, lo(y) == ly, hi(y) == hy, lx >= 0,
                        ly >= 1, ly <= hy, name="rem").then(set_(hi(e)).to(hy - 2))])
    assert found.counterexample["e"] == found.counterexample["hy"] - 1


def test_an_off_by_one_comparison_is_caught():
    facts = [lo(x) == lx, hi(x) == hx, lo(y) == ly, hi(y) == hy, lx <= hx, ly <= hy]
    (m,) = vars_("m", Mask)
    found = _only([rule(m == lt(x, y), *facts, hx <= ly, name="lt").then(union(m).with_(TRUE))])
    ex = found.counterexample
    assert ex["x"] == ex["y"] and "two sides differ" in found.reason


def test_a_bound_past_i32_is_caught():
    """Bounds of `x + y` checked against i64 overflow only (not against i32): at 32 bits
    `x + y` wraps and leaves them."""
    found = _only([rule(e == x + y, lo(x) == lx, hi(x) == hx, lo(y) == ly, hi(y) == hy,
                        lx + ly >= -(2**40), hx + hy <= 2**40, name="x + y").then(
        set_(lo(e)).to(lx + ly), set_(hi(e)).to(hx + hy))])
    ex = found.counterexample
    assert ex["width"] == 32 and abs(ex["x"] + ex["y"]) >= 2**31, found     # it wrapped


def test_deciding_from_an_empty_interval_is_caught():
    (m,) = vars_("m", Mask)
    found = _only([rule(m == lt(x, y), lo(x) == lx, hi(x) == hx, lo(y) == ly, hi(y) == hy,
                        hx < ly, name="lt, no emptiness test").then(union(m).with_(TRUE))])
    assert "no value satisfies" in found.reason
    ex = found.counterexample
    assert ex["lx"] > ex["hx"] or ex["ly"] > ex["hy"]


def test_the_old_division_bound_that_divided_by_zero():
    """Regression: `bounds of x / y` without `ly <= hy` divided by zero for a divisor whose
    interval is empty (a loop counter 1..0 that never runs) and stopped egglog."""
    old = rule(e == quot(x, y), lo(x) == lx, hi(x) == hx, lo(y) == ly, hi(y) == hy, lx >= 0,
               ly >= 1, name="bounds of x / y").then(set_(lo(e)).to(lx / hy),
                                                      set_(hi(e)).to(hx / ly))
    found = _only([old])
    assert "division by zero" in found.reason and found.counterexample["hy"] == 0


def test_a_wrong_value_fact_is_caught():
    found = _only([rule(t == log(u), name="log is nonnegative").then(nonnegative(t))])
    assert "nonnegative" in found.reason


def test_premises_nothing_satisfies_count_as_untested():
    found = _only([rewrite(Ix(a)).to(Ix(0), a > 0, a < 0)])
    assert found.reason.startswith("untested")


# -------------------------------------------------------------- edge values

def test_edge_values_are_drawn_on_purpose():
    e32 = set(edges(32))
    assert {0, 1, -1, I32_MIN, I32_MAX, I32_MIN + 1, I32_MAX - 1} <= e32
    assert {2**16 - 1, 2**16, 2**16 + 1, -(2**16) - 1, 2**30 + 1} <= e32
    assert max(e32) == I32_MAX and min(e32) == I32_MIN
    assert {-(2**63), 2**63 - 1, 2**40 + 1} <= set(edges(64))
    # a rule wrong at one value only (x == MIN: -MIN wraps to MIN) is found
    found = _only([rewrite(lt(x, Ix(0))).to(lt(Ix(0), Ix(0) - x))])
    assert found.counterexample["x"] == -(2 ** (found.counterexample["width"] - 1))
