"""Quotients and remainders made exact under the facts (`Facts.simplify`), and products of
several names in goals.

`where L % 2 == 0` makes `(L + 1) / 2` equal to `L / 2`, `2*(L / 2)` equal to `L` and
`(L + 1) % 2` equal to 1; `L >= 0` alone makes `(2*L + 1) / 2` equal to `L`. The prover
uses the same rewriting, so these equalities are provable, and a factor common to every
term of a goal (`P*Q*A == P*Q*G*(A / G)`) no longer hides them. Hypothesis checks that
the rewriting never changes a value where the facts hold.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from linnet.check.dims import Dim, Facts

from budget import scaled

A, G, L, M, P, Q = (Dim.sym(name) for name in "AGLMPQ")


def facts(*clauses: tuple[Dim | int, str, Dim | int], symbols: str = "AGLMPQ") -> Facts:
    result = Facts(symbols)
    for left, op, right in clauses:
        result = result.assume(left, op, right)
    return result


EVEN_L = facts((L.mod(2), "==", 0))


def test_quotient_of_an_even_number_plus_one() -> None:
    assert EVEN_L.simplify((L + 1).floordiv(2)) == L.floordiv(2)
    assert EVEN_L.simplify((L + 1).mod(2)) == Dim.const(1)
    assert EVEN_L.prove((L + 1).floordiv(2), "==", L.floordiv(2))


def test_quotient_below_a_multiple() -> None:
    at_least_two = facts((L.mod(2), "==", 0), (L, ">=", 2))
    assert at_least_two.simplify((L - 1).floordiv(2)) == L.floordiv(2) - 1
    assert at_least_two.simplify((L - 1).mod(2)) == Dim.const(1)


def test_even_multiples_need_no_facts() -> None:
    assert Facts("L").simplify((2 * L + 1).floordiv(2)) == L
    assert Facts("L").simplify((6 * L + 7).floordiv(3)) == 2 * L + 2
    assert Facts("L").simplify((6 * L + 7).mod(3)) == Dim.const(1)


def test_products_with_an_exact_quotient_cancel() -> None:
    assert EVEN_L.simplify(2 * L.floordiv(2)) == L
    divisible = facts((G, ">", 0), (A.mod(G), "==", 0))
    assert divisible.simplify(P * Q * G * A.floordiv(G)) == P * Q * A
    assert divisible.prove(P * Q * A, "==", P * Q * G * A.floordiv(G))


def test_symbolic_divisor_with_a_small_rest() -> None:
    divisible = facts((G, ">", 0), (A.mod(G), "==", 0))
    assert divisible.simplify((A + G - 1).floordiv(G)) == A.floordiv(G)
    assert Facts("G").assume(G, ">", 0).simplify((G - 1).floordiv(G)) == Dim()


def test_nothing_changes_without_the_facts() -> None:
    assert Facts("L").simplify((L + 1).floordiv(2)) == (L + 1).floordiv(2)
    # (2*L - 1) / 2 is 0 at L = 0 but L - 1 is -1: no rewrite without `L >= 1`
    assert Facts("L").simplify((2 * L - 1).floordiv(2)) == (2 * L - 1).floordiv(2)
    # an unknown sign: L may be negative, where truncation is not the floor
    assert Facts().simplify((2 * L + 1).floordiv(2)) == (2 * L + 1).floordiv(2)
    assert not Facts("L").prove((L + 1).floordiv(2), "==", L.floordiv(2))


def test_common_factor_of_a_goal() -> None:
    assert facts((A, ">=", M)).prove(P * Q * A, ">=", P * Q * M)
    assert not facts((A, ">=", M)).prove(P * Q * A, ">", P * Q * M)


# --------------------------------------------------------------------------------------
# Soundness on random quotients under divisibility facts.

NAMES = ("A", "G", "L")
terms = st.tuples(st.integers(-3, 6), st.sampled_from(NAMES + ("",)))


def polynomial(parts: list[tuple[int, str]]) -> Dim:
    total = Dim()
    for coefficient, name in parts:
        total = total + (coefficient * Dim.sym(name) if name else Dim.const(coefficient))
    return total


@st.composite
def quotient_problems(draw: st.DrawFn) -> tuple[Facts, Dim]:
    """Facts `X % k == 0` and lower bounds, and a sum of quotients and remainders."""
    known = Facts(NAMES)
    for _ in range(draw(st.integers(0, 3))):
        name = Dim.sym(draw(st.sampled_from(NAMES)))
        divisor = draw(st.sampled_from([Dim.const(2), Dim.const(3), Dim.sym("G")]))
        known = known.assume(name.mod(divisor), "==", 0)
    for _ in range(draw(st.integers(0, 2))):
        known = known.assume(Dim.sym(draw(st.sampled_from(NAMES))), ">=", draw(st.integers(0, 3)))
    goal = Dim()
    for _ in range(draw(st.integers(1, 3))):
        numerator = polynomial(draw(st.lists(terms, min_size=1, max_size=3)))
        divisor = draw(st.sampled_from([Dim.const(2), Dim.const(3), Dim.sym("G")]))
        factor = polynomial(draw(st.lists(terms, min_size=1, max_size=2)))
        part = numerator.floordiv(divisor) if draw(st.booleans()) else numerator.mod(divisor)
        goal = goal + factor * part
    return known.assume(Dim.sym("G"), ">=", 1), goal


@settings(max_examples=scaled(50), deadline=None)
@given(quotient_problems())
def test_simplify_keeps_every_value(problem: tuple[Facts, Dim]) -> None:
    known, d = problem
    simpler = known.simplify(d)
    for values in itertools.product(range(0, 9), repeat=len(NAMES)):
        env = dict(zip(NAMES, values))
        if known.is_consistent_with(env):
            assert simpler.evaluate(env) == d.evaluate(env), (known, d, simpler, env)
