"""The dimension algebra and prover in `linnet.check.dims`.

Two promises are tested: the normal form means what the expression means (a normalized
dimension evaluates like the expression tree it came from, with truncating `/` and `%`),
and the prover is sound (whatever it proves holds at every assignment satisfying the
facts). Hand-written cases pin down what it must and must not prove; hypothesis checks
both promises on random expressions.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linnet.check.dims import Dim, Facts

from budget import scaled

A, B, C, D, K, M, N = (Dim.sym(name) for name in "ABCDKMN")


def facts(
    *clauses: tuple[Dim | int, str, Dim | int], symbols: str = "ABCDKMN"
) -> Facts:
    """Facts over non-negative `symbols`, assuming each `(left, op, right)` clause."""
    result = Facts(symbols)
    for left, op, right in clauses:
        result = result.assume(left, op, right)
    return result


# --------------------------------------------------------------------------------------
# Normal form


def test_equal_polynomials_compare_equal() -> None:
    assert (N + 1) * (N - 1) == N * N - 1
    assert A * B + 2 == 2 + B * A
    assert (A + B) * (A + B) == A * A + 2 * A * B + B * B
    assert N - N == Dim.const(0)
    assert 3 - N + N == Dim.const(3)


def test_equal_dims_hash_alike() -> None:
    assert hash((N + 1) * (N - 1)) == hash(N * N - 1)
    assert len({A + B, B + A, Dim.minimum(A, B), Dim.minimum(B, A)}) == 2


def test_int_operands_on_either_side() -> None:
    assert 2 * N == N * 2 == N + N
    assert 1 + N == N + 1
    assert 5 - N == -(N - 5)
    assert (-N).evaluate({"N": 4}) == -4


def test_as_int_and_symbols() -> None:
    assert Dim.const(7).as_int() == 7
    assert (N - N).as_int() == 0
    assert (N + 1).as_int() is None
    assert (A * B + Dim.minimum(C, 3).floordiv(D)).symbols() == frozenset("ABCD")
    assert Dim.const(4).symbols() == frozenset()


@pytest.mark.parametrize(
    ("dim", "text"),
    [
        (2 * N + M - 1, "M + 2*N - 1"),
        (Dim.minimum(B, A), "min(A, B)"),
        (Dim.maximum(A, B), "max(A, B)"),
        (N.floordiv(2), "N / 2"),
        (N.mod(16), "N % 16"),
        ((N + 1).floordiv(2), "(N + 1) / 2"),
        (N.floordiv(2 * M), "N / (2*M)"),
        (3 * N.floordiv(2), "3*(N / 2)"),
        (Dim.const(0), "0"),
        (Dim.const(-3), "-3"),
        (1 - N, "-N + 1"),
        (N * N * M, "M*N*N"),
    ],
)
def test_printing(dim: Dim, text: str) -> None:
    assert str(dim) == text


def test_floordiv_folds_constants_and_exact_quotients() -> None:
    assert Dim.const(7).floordiv(2) == Dim.const(3)
    assert Dim.const(-7).floordiv(2) == Dim.const(-3)  # toward zero, not -4
    assert (6 * N).floordiv(3) == 2 * N
    assert (N * 4).floordiv(4) == N
    assert (6 * N * M).floordiv(3 * N) == 2 * M
    assert (2 * N + 2).floordiv(N + 1) == Dim.const(2)
    assert N.floordiv(1) == N


def test_floordiv_keeps_inexact_quotients_opaque() -> None:
    half = N.floordiv(2)
    assert half.as_int() is None
    assert half != N
    assert half.evaluate({"N": 7}) == 3
    assert (N + 1).floordiv(2) != N.floordiv(2)


def test_mod_folds() -> None:
    assert Dim.const(7).mod(3) == Dim.const(1)
    assert Dim.const(-7).mod(3) == Dim.const(-1)  # the sign of the dividend
    assert (6 * N).mod(3) == Dim.const(0)
    assert N.mod(1) == Dim.const(0)
    assert N.mod(16).evaluate({"N": 35}) == 3


def test_min_max_fold() -> None:
    assert Dim.minimum(3, 5) == Dim.const(3)
    assert Dim.maximum(3, 5) == Dim.const(5)
    assert Dim.minimum(N, N) == N
    assert Dim.minimum(N + 1, N) == N
    assert Dim.maximum(N + 1, N) == N + 1
    assert Dim.minimum(A, B) == Dim.minimum(B, A)
    assert Dim.minimum(A, B) != Dim.maximum(A, B)


def test_evaluate_errors() -> None:
    with pytest.raises(KeyError):
        (N + M).evaluate({"N": 1})
    with pytest.raises(ZeroDivisionError):
        N.floordiv(M).evaluate({"N": 1, "M": 0})
    with pytest.raises(ZeroDivisionError):
        Dim.const(1).floordiv(0).evaluate({})


def test_substitute_normalizes_again() -> None:
    assert (N * M).substitute({"N": M + 1}) == M * M + M
    assert N.floordiv(2).substitute({"N": 2 * K}) == K
    assert N.mod(4).substitute({"N": 8}) == Dim.const(0)
    assert Dim.minimum(A, B).substitute({"A": B}) == B
    assert (N + 1).substitute({}) == N + 1


# --------------------------------------------------------------------------------------
# The prover: what it must prove


@pytest.mark.parametrize(
    ("left", "op", "right"),
    [
        (B, ">=", C),
        (B + 1, ">", C),
        (2 * B, ">=", C),
        (B + A, ">=", C),
        (C, "<=", B),
    ],
)
def test_proves_under_b_at_least_c(left: Dim, op: str, right: Dim) -> None:
    assert facts((B, ">=", C)).prove(left, op, right)


def test_proves_under_divisibility() -> None:
    divisible = facts((M.mod(16), "==", 0))
    assert divisible.prove(M.mod(16), "==", 0)
    assert divisible.prove(16 * M.floordiv(16), "==", M)


def test_proves_under_positive_n() -> None:
    positive = facts((N, ">=", 1))
    assert positive.prove(N, ">", 0)
    assert positive.prove_positive(N)
    assert positive.prove(N * N, ">=", 1)
    assert positive.prove(N * N, ">=", N)
    assert positive.prove(N + M, "!=", 0)


@pytest.mark.parametrize(
    ("left", "op", "right"),
    [
        (N + 1, ">", 0),
        (N, ">=", 0),
        (Dim.minimum(A, B), "<=", A),
        (Dim.minimum(A, B), "<=", B),
        (Dim.maximum(A, B), ">=", B),
        (Dim.maximum(A, B), ">=", A),
        ((N * 4).floordiv(4), "==", N),
        (N - N, "==", 0),
        (N.mod(16), "<", 16),
        (N.mod(16), ">=", 0),
        (16 * N.floordiv(16), "<=", N),
        (N.floordiv(4), "<=", N),
        ((N + 3).floordiv(4) * 4, ">=", N),  # the padding of spec example 09
        (N * M, ">=", 0),
        (Dim.minimum(A, B), "<=", Dim.maximum(A, B)),
    ],
)
def test_proves_without_where_clauses(left: Dim, op: str, right: Dim) -> None:
    assert facts().prove(left, op, right)


def test_proves_a_callers_where_clause() -> None:
    """Spec example 08: `forward` calls `constrained` with A = B = N and C = M."""
    caller = facts((M, "<", N), (M, ">=", 1), (N, ">=", 2))
    callee = [(N, "==", N), (N, "!=", M), (M, "<", N), (M, "<=", N), (N, ">", 1)]
    assert all(caller.prove(left, op, right) for left, op, right in callee)
    assert caller.prove(N, ">=", 2)


def test_proves_through_chains_of_facts() -> None:
    chain = facts((A, "<=", B), (B, "<=", C), (C, "<=", D))
    assert chain.prove(A, "<=", D)
    assert chain.prove(A, "<", D + 1)
    assert not chain.prove(A, "<", D)


def test_equalities_become_substitutions() -> None:
    assert facts((B, "==", C)).prove(A * B, "==", A * C)
    double = facts((N, "==", 2 * M))
    assert double.prove(N.mod(2), "==", 0)
    assert double.prove(N.floordiv(2), "==", M)
    assert double.prove(N, ">=", M)
    both = facts((N.mod(16), "==", 0), (N, "==", 2 * M))
    assert both.prove(N.mod(16), "==", 0)


def test_eliminated_symbols_keep_their_sign() -> None:
    """`N := M - 1` must not forget that `N >= 0`, i.e. that `M >= 1`."""
    assert facts((N, "==", M - 1)).prove_positive(M)


def test_uses_nonzero_facts() -> None:
    distinct = facts((A, "!=", B))
    assert distinct.prove(A, "!=", B)
    assert distinct.prove(B, "!=", A)
    assert not distinct.prove(A, "!=", B + 1)


def test_proves_facts_about_divisors() -> None:
    blocked = facts((B, ">=", 1))
    assert blocked.prove_positive(B)
    assert blocked.prove(N.mod(B), "<", B)
    assert blocked.prove(N.floordiv(B) * B, "<=", N)
    assert blocked.prove_nonnegative(N.floordiv(B))


# --------------------------------------------------------------------------------------
# The prover: what it must not prove


@pytest.mark.parametrize(
    ("left", "op", "right"),
    [
        (N, ">", 0),
        (A, ">=", B),
        (N - 1, ">=", 0),
        (N, "==", M),
        (N, "!=", M),
        (N.floordiv(2) * 2, "==", N),
        (Dim.minimum(A, B), "==", A),
        (N * N, ">=", N + 1),
    ],
)
def test_does_not_prove_without_where_clauses(left: Dim, op: str, right: Dim) -> None:
    assert not facts().prove(left, op, right)


def test_undeclared_symbols_have_unknown_sign() -> None:
    assert Facts(["N"]).prove_nonnegative(N)
    assert not Facts().prove_nonnegative(N)
    assert not Facts().prove(N + 1, ">", 0)
    loop = Facts().assume(K, ">=", -2).assume(K, "<", 3)
    assert loop.prove(K + 2, ">=", 0)
    assert not loop.prove_nonnegative(K)


def test_assume_returns_a_new_facts() -> None:
    empty = facts()
    positive = empty.assume(N, ">=", 1)
    assert positive.prove_positive(N)
    assert not empty.prove_positive(N)
    assert positive.assumptions == ((N, ">=", Dim.const(1)),)


def test_rejects_unknown_comparisons() -> None:
    with pytest.raises(ValueError):
        facts().assume(N, "=<", M)
    with pytest.raises(ValueError):
        facts().prove(N, "<>", M)


def test_is_consistent_with() -> None:
    clauses = facts((B, ">=", C), (M.mod(16), "==", 0), (A, "!=", 3))
    good = {name: 0 for name in "ABCDKMN"} | {"B": 5, "C": 4, "M": 32}
    assert clauses.is_consistent_with(good)
    assert not clauses.is_consistent_with(good | {"C": 6})
    assert not clauses.is_consistent_with(good | {"M": 33})
    assert not clauses.is_consistent_with(good | {"A": 3})
    assert not clauses.is_consistent_with(good | {"D": -1})  # declared, so >= 0
    undefined = facts((N.mod(M), "==", 0))
    assert not undefined.is_consistent_with({name: 0 for name in "ABCDKMN"})
    with pytest.raises(KeyError):
        clauses.is_consistent_with({"B": 1})


# --------------------------------------------------------------------------------------
# Random expressions. A tree is ("const", n), ("sym", name), ("neg", x),
# ("next_pow2", x) or (op, x, y).

NAMES = ("A", "B", "C")
BINARY = ("+", "-", "*", "/", "%", "min", "max")


def trees(max_leaves: int = 8) -> st.SearchStrategy:
    leaves = st.one_of(
        st.integers(-3, 8).map(lambda n: ("const", n)),
        st.sampled_from(NAMES).map(lambda name: ("sym", name)),
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.tuples(st.sampled_from(BINARY), children, children),
            st.tuples(st.sampled_from(["neg", "next_pow2"]), children),
        ),
        max_leaves=max_leaves,
    )


def truncating(op: str, a: int, b: int) -> int:
    """`/` and `%` rounding toward zero, written independently of the module."""
    if b == 0:
        raise ZeroDivisionError
    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return quotient if op == "/" else a - b * quotient


def power_of_two_at_least(a: int) -> int:
    """`next_pow2`, written independently of the module: 1, 2, 4, ... until `>= a`."""
    power = 1
    while power < a:
        power *= 2
    return power


def evaluate_tree(tree: tuple, env: dict[str, int]) -> int:
    kind = tree[0]
    if kind == "const":
        return tree[1]
    if kind == "sym":
        return env[tree[1]]
    if kind == "neg":
        return -evaluate_tree(tree[1], env)
    if kind == "next_pow2":
        return power_of_two_at_least(evaluate_tree(tree[1], env))
    a, b = evaluate_tree(tree[1], env), evaluate_tree(tree[2], env)
    if kind in ("/", "%"):
        return truncating(kind, a, b)
    return {"+": a + b, "-": a - b, "*": a * b, "min": min(a, b), "max": max(a, b)}[
        kind
    ]


def to_dim(tree: tuple) -> Dim:
    kind = tree[0]
    if kind == "const":
        return Dim.const(tree[1])
    if kind == "sym":
        return Dim.sym(tree[1])
    if kind == "neg":
        return -to_dim(tree[1])
    if kind == "next_pow2":
        return Dim.next_pow2(to_dim(tree[1]))
    a, b = to_dim(tree[1]), to_dim(tree[2])
    build = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "*": lambda: a * b,
        "/": lambda: a.floordiv(b),
        "%": lambda: a.mod(b),
        "min": lambda: Dim.minimum(a, b),
        "max": lambda: Dim.maximum(a, b),
    }
    return build[kind]()


class Truncating:
    """An integer whose `/` and `%` truncate, to read printed dimensions back with
    Python's parser (same precedence and grouping for `+ - * / %` and unary minus)."""

    def __init__(self, value: int) -> None:
        self.value = value

    @staticmethod
    def of(x: Truncating | int) -> int:
        return x.value if isinstance(x, Truncating) else x

    def __add__(self, other):
        return Truncating(self.value + self.of(other))

    def __radd__(self, other):
        return Truncating(self.of(other) + self.value)

    def __sub__(self, other):
        return Truncating(self.value - self.of(other))

    def __rsub__(self, other):
        return Truncating(self.of(other) - self.value)

    def __mul__(self, other):
        return Truncating(self.value * self.of(other))

    def __rmul__(self, other):
        return Truncating(self.of(other) * self.value)

    def __truediv__(self, other):
        return Truncating(truncating("/", self.value, self.of(other)))

    def __rtruediv__(self, other):
        return Truncating(truncating("/", self.of(other), self.value))

    def __mod__(self, other):
        return Truncating(truncating("%", self.value, self.of(other)))

    def __rmod__(self, other):
        return Truncating(truncating("%", self.of(other), self.value))

    def __neg__(self):
        return Truncating(-self.value)


def read_back(text: str, env: dict[str, int]) -> int:
    scope = {name: Truncating(value) for name, value in env.items()}
    scope["min"] = lambda a, b: Truncating(min(Truncating.of(a), Truncating.of(b)))
    scope["max"] = lambda a, b: Truncating(max(Truncating.of(a), Truncating.of(b)))
    scope["next_pow2"] = lambda a: Truncating(power_of_two_at_least(Truncating.of(a)))
    return Truncating.of(eval(text, {"__builtins__": {}}, scope))


envs = st.fixed_dictionaries({name: st.integers(0, 30) for name in NAMES})


@settings(max_examples=scaled(50), deadline=None)
@given(trees(), envs)
def test_normal_form_evaluates_like_the_tree(tree: tuple, env: dict[str, int]) -> None:
    try:
        expected = evaluate_tree(tree, env)
    except ZeroDivisionError:
        return  # undefined; simplification may only make it defined
    dim = to_dim(tree)
    assert dim.evaluate(env) == expected
    assert read_back(str(dim), env) == expected


@settings(max_examples=scaled(50), deadline=None)
@given(trees(5), trees(5), trees(5))
def test_ring_laws(x: tuple, y: tuple, z: tuple) -> None:
    a, b, c = to_dim(x), to_dim(y), to_dim(z)
    assert a + b == b + a
    assert a * b == b * a
    assert (a + b) * c == a * c + b * c
    assert (a - a).as_int() == 0
    assert (a + b) - b == a


# --------------------------------------------------------------------------------------
# Soundness: whatever is proved holds at every assignment consistent with the facts.

COMPARISON = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
clauses = st.tuples(trees(4), COMPARISON, trees(4))


@st.composite
def problems(draw: st.DrawFn) -> tuple:
    """Facts and a goal; goals are often a facts' clause, loosened, so proofs happen."""
    declared = draw(st.sets(st.sampled_from(NAMES)))
    assumed = draw(st.lists(clauses, max_size=3))
    goal = draw(clauses)
    if assumed and draw(st.booleans()):
        left, _, right = draw(st.sampled_from(assumed))
        extra = draw(st.sampled_from([("const", 0), ("const", 1), ("sym", "A")]))
        goal = (("+", left, extra), draw(COMPARISON), right)
    return declared, assumed, goal


def assignments(declared: set[str]) -> list[dict[str, int]]:
    """A grid: declared names from 0, others also negative."""
    ranges = [range(0, 7) if name in declared else range(-3, 5) for name in NAMES]
    return [dict(zip(NAMES, values)) for values in itertools.product(*ranges)]


def holds(left: Dim, op: str, right: Dim, env: dict[str, int]) -> bool | None:
    """Whether the comparison holds at `env`, or None where it is undefined."""
    try:
        a, b = left.evaluate(env), right.evaluate(env)
    except ZeroDivisionError:
        return None
    outcomes = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b}
    return (outcomes | {">": a > b, ">=": a >= b})[op]


@settings(max_examples=scaled(50), deadline=None)
@given(problems())
def test_proofs_are_sound(problem: tuple) -> None:
    declared, assumed, (goal_left, op, goal_right) = problem
    known = Facts(declared)
    for left, relation, right in assumed:
        known = known.assume(to_dim(left), relation, to_dim(right))
    left, right = to_dim(goal_left), to_dim(goal_right)
    if not known.prove(left, op, right):
        return
    for env in assignments(declared):
        if known.is_consistent_with(env):
            assert holds(left, op, right, env) is not False, (known, env)


def test_sample_candidates_are_those_of_a_generator_seeded_for_each_set_of_names() -> None:
    """`_candidates` draws from one shared sequence: the assignments are those a
    `random.Random(0)` made for each set of names would give, whatever was drawn before."""
    import random

    from linnet.check.dims import _SAMPLE_TRIES, _SAMPLE_VALUES, _candidates

    for names in (["BK", "M", "N", "x"], ["a", "b"], ["a", "b", "c", "d", "e", "f"]):
        chooser = random.Random(0)
        want = [dict.fromkeys(names, v) for v in _SAMPLE_VALUES]
        want += [{n: chooser.choice(_SAMPLE_VALUES) for n in names}
                 for _ in range(_SAMPLE_TRIES - len(_SAMPLE_VALUES))]
        assert list(_candidates(names)) == want
