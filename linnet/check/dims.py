"""A small prover for facts about symbolic dimensions: `Facts`.

Why this module exists: shapes are part of Linnet types (docs/language.md, "Types and generics"), so
the checker must answer questions such as "is the divisor of `K / 16` positive" or "does
the caller's `where` clause imply the callee's". The dimensions are `Dim`s
(`dim_normal_form.py`); this module re-exports `Dim` and `COMPARISONS`, so that
`from .dims import Dim, Facts` keeps working.

The prover is sound (it says yes only when the claim holds for every integer assignment
the facts allow) and deliberately incomplete (it may say no to a true claim), because it
runs thousands of times per module and must stay fast:

  1. The assumptions become a substitution from the solvable equalities, facts `p >= 0`
     and facts `p != 0` (`dim_knowledge.py`).
  2. A goal `p >= 0` holds if `p` minus a non-negative combination of facts is
     *plainly* non-negative: a non-negative constant plus non-negative multiples of
     products of things known to be non-negative. A bounded depth-first search
     (`_Search`) picks the facts, each step cancelling one offending term. Atoms bring
     their own facts (`min(a, b) <= a`, `a % b < b`, ...).
  3. Before searching, the goal is evaluated at a few sample points that satisfy the
     facts: a goal that fails at one has no proof, and the search is skipped.

`_Search` calls back into its `Facts` for the signs of terms, so the two stay together.
"""

from __future__ import annotations

import math
import random
from functools import cached_property
from itertools import islice
from typing import Iterable, Mapping

from .dim_knowledge import (COMPARE, COMPARISONS, Knowledge, apply_substitution,
                            check_comparison, derive_knowledge, holds, nonnegative_form,
                            unconditional_atom_facts)
from .dim_normal_form import Atom, Dim, coerce_or_raise, exact_quotient
from .dim_polynomials import (Factor, Monomial, Polynomial, cancel, monomial_quotient,
                              primitive_part, sorted_monomial)

__all__ = ["Dim", "Facts", "COMPARISONS"]

# --------------------------------------------------------------------------------------
# The prover.

_SEARCH_DEPTH = 4
"""Most facts combined in one proof (a chain `A <= B <= C <= D` takes three)."""

_SEARCH_NODES = 300
"""Most residuals visited for one goal: keeps a hopeless goal cheap."""

_SAMPLE_VALUES = (0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 64, 100, 128, 1024, 4096)
"""Values tried for sample points: small numbers and typical tile sizes."""

_SAMPLE_TRIES = 40
_SAMPLES_KEPT = 8


class Facts:
    """What `where` clauses and generic declarations let the checker assume.

    Immutable in style: `assume` returns a new `Facts`. Each symbol given to the
    constructor is known to be `>= 0` (a generic `Dim` is never negative); any other
    symbol has an unknown sign. `prove` is sound and incomplete: it says True only when
    the claim holds for every integer assignment that satisfies the facts (and defines
    the claim's divisions).
    """

    def __init__(self, symbols: Iterable[str] = ()) -> None:
        self._symbols = frozenset(symbols)
        self._assumptions: tuple[tuple[Dim, str, Dim], ...] = ()
        # Caches: the same shapes come up again and again while checking a module.
        self._reduced: dict[Dim, Dim] = {}
        self._normalized: dict[Dim, Dim] = {}
        self._proved: dict[tuple[Dim, float], bool] = {}
        self._monomial_signs: dict[tuple[Monomial, float], bool] = {}
        self._atom_signs: dict[Atom, bool] = {}
        self._atom_facts: dict[Atom, tuple[Dim, ...]] = {}

    # ---- building

    def assume(self, left: Dim | int, op: str, right: Dim | int) -> Facts:
        """A new `Facts` that also assumes `left op right`."""
        return self.assume_all([(left, op, right)])

    def assume_all(self, clauses: Iterable[tuple[Dim | int, str, Dim | int]]) -> Facts:
        """A new `Facts` that also assumes each `left op right`, in order: one copy of the
        assumptions, where a loop of `assume` copies them once per clause."""
        added = []
        for left, op, right in clauses:
            check_comparison(op)
            added.append((coerce_or_raise(left), op, coerce_or_raise(right)))
        return self._with(self._assumptions + tuple(added))

    def omitting(self, index: int) -> Facts:
        """A new `Facts` without the assumption at index (`where` clauses are each checked
        under all the others): a slice, where building it anew would check every clause."""
        return self._with(self._assumptions[:index] + self._assumptions[index + 1:])

    def _with(self, assumptions: tuple[tuple[Dim, str, Dim], ...]) -> Facts:
        facts = Facts(self._symbols)
        facts._assumptions = assumptions
        return facts

    @property
    def symbols(self) -> frozenset[str]:
        """The symbols known to be non-negative."""
        return self._symbols

    @property
    def assumptions(self) -> tuple[tuple[Dim, str, Dim], ...]:
        """The assumed comparisons, as given, in order."""
        return self._assumptions

    def __repr__(self) -> str:
        clauses = ", ".join(f"{l} {op} {r}" for l, op, r in self._assumptions)
        return f"Facts(symbols={sorted(self._symbols)}, where=[{clauses}])"

    @cached_property
    def _knowledge(self) -> Knowledge:
        return derive_knowledge(self._symbols, self._assumptions)

    # ---- questions

    def prove(self, left: Dim | int, op: str, right: Dim | int) -> bool:
        """Does `left op right` hold for every assignment satisfying the facts?"""
        check_comparison(op)
        left, right = coerce_or_raise(left), coerce_or_raise(right)
        if op == "==":
            return self._prove_zero(self._reduce(left - right))
        if op == "!=":
            return self._prove_nonzero(self._reduce(left - right))
        goal = nonnegative_form(left, op, right)
        return self._prove_nonnegative(self._reduce(goal))

    def prove_positive(self, d: Dim | int) -> bool:
        """Is `d >= 1` always (as a divisor must be)?"""
        return self._prove_nonnegative(self._reduce(coerce_or_raise(d) - 1))

    def prove_nonnegative(self, d: Dim | int) -> bool:
        """Is `d >= 0` always (as a dimension must be)?"""
        return self._prove_nonnegative(self._reduce(coerce_or_raise(d)))

    def counterexample(self, left: Dim | int, op: str, right: Dim | int
                       ) -> dict[str, int] | None:
        """An assignment that satisfies the facts where `left op right` fails, found
        among the prover's sample points; None when none of them refutes it (which proves
        nothing). A claim left undefined by a division by zero is not refuted there."""
        check_comparison(op)
        left, right = coerce_or_raise(left), coerce_or_raise(right)
        for sample in self._samples:
            env = {n: sample.get(n, 0) for n in left.symbols() | right.symbols()}
            try:
                fails = not COMPARE[op](left.evaluate(env), right.evaluate(env))
            except ZeroDivisionError:
                continue
            if fails and self.is_consistent_with({**sample, **env}):
                return env
        return None

    def is_consistent_with(self, env: Mapping[str, int]) -> bool:
        """Do the assumptions, and `s >= 0` for each declared symbol, hold at `env`?

        A symbol missing from `env` raises KeyError. An assumption left undefined by a
        division by zero does not hold.
        """
        if any(env[name] < 0 for name in sorted(self._symbols)):
            return False
        return all(holds(l, op, r, env) for l, op, r in self._assumptions)

    # ---- reasoning

    def simplify(self, d: Dim | int) -> Dim:
        """`d` with its quotients and remainders made exact where the facts allow, equal
        to `d` at every assignment that satisfies the facts.

        Under `where L % 2 == 0`, `(L + 1) / 2` is `L / 2` and `2*(L / 2)` is `L`;
        `(2*L + 1) / 2` is `L` with no facts at all, since `L >= 0`. The substitution
        that equalities give is not applied, so names stay as the user wrote them.
        """
        return self._normalize(coerce_or_raise(d))

    def _reduce(self, d: Dim) -> Dim:
        """Apply the substitution that the equalities gave, then simplify."""
        if d not in self._reduced:
            substituted = apply_substitution(d, self._knowledge.substitution)
            self._reduced[d] = self._normalize(substituted)
        return self._reduced[d]

    # ---- exact quotients under the facts

    def _normalize(self, d: Dim) -> Dim:
        """Each top-level quotient or remainder simplified (`_simplified_atom`), then each
        product `b*(a / b)` with `a % b == 0` replaced by `a`."""
        if d not in self._normalized:
            self._normalized[d] = d  # a guard: a question about d met again inside
            mapping = {}
            for atom in d._atoms():
                simpler = self._simplified_atom(atom)
                if simpler._single_factor() != atom:
                    mapping[atom] = simpler
            self._normalized[d] = self._cancel_quotients(d._replace(mapping))
        return self._normalized[d]

    def _simplified_atom(self, atom: Atom) -> Dim:
        """The atom on simplified operands; for `a / b` and `a % b` with `a >= 0` and
        `b >= 1`, `a` split into `b*E + F + R` with `F` a multiple of `b` by the facts:
        then `a / b` is `E + F / b + R / b` and `a % b` is `R % b`, where `R / b` is
        known (a constant, or 0 when `0 <= R < b`, or -1 when `-b <= R < 0`)."""
        rebuilt = atom.rebuild(*(self._normalize(o) for o in atom.operands))
        inner = rebuilt._single_factor()
        if not isinstance(inner, Atom) or inner.op not in ("/", "%"):
            return rebuilt
        a, b = inner.left, inner.right
        if not (self.prove_positive(b) and self.prove_nonnegative(a)):
            return rebuilt
        exact, multiple, rest = self._split_multiples(a, b)
        floor = self._floor_quotient(rest, b)
        if floor is None:
            return rebuilt
        if inner.op == "%":
            return rest - b * floor
        return exact + multiple.floordiv(b) + floor

    def _split_multiples(self, a: Dim, b: Dim) -> tuple[Dim, Dim, Dim]:
        """`(E, F, R)` with `a == b*E + F + R`: `b*E` the terms that `b` divides as a
        polynomial, `F` those that the facts make multiples of `b`, `R` the rest."""
        exact, multiple, rest = Dim(), Dim(), Dim()
        for monomial, coefficient in a._terms:
            term = Dim({monomial: coefficient})
            quotient = exact_quotient(term, b)
            if quotient is not None:
                exact = exact + quotient
            elif self._divides(b, monomial, coefficient):
                multiple = multiple + term
            else:
                rest = rest + term
        return exact, multiple, rest

    def _divides(self, b: Dim, monomial: Monomial, coefficient: int) -> bool:
        """Is the term `coefficient*monomial` a multiple of `b` at every assignment, by
        the facts? So it is when a remainder of `monomial` (or of one of its factors) by
        `b / gcd(b, coefficient)` is 0 by the facts (`where L % 2 == 0`)."""
        divisor = b
        k = b.as_int()
        if k is not None:
            divisor = Dim.const(k // math.gcd(k, coefficient))
        factors = [Dim({monomial: 1})] + [Dim._of_factor(f) for f, _ in monomial]
        substitution = self._knowledge.substitution
        return any(apply_substitution(f.mod(divisor), substitution).as_int() == 0 for f in factors)

    def _floor_quotient(self, r: Dim, b: Dim) -> Dim | None:
        """`floor(r / b)` for a positive `b`, when the facts settle it; else None."""
        r_value, b_value = r.as_int(), b.as_int()
        if r_value is not None and b_value is not None:
            return Dim.const(r_value // b_value)
        if r_value == 0:
            return Dim()
        if self.prove_nonnegative(r) and self.prove(r, "<", b):
            return Dim()
        if self.prove(r, "<", 0) and self.prove(r, ">=", -b):
            return Dim.const(-1)
        return None

    def _cancel_quotients(self, d: Dim) -> Dim:
        """Each term `c*b*(a / b)*m` with `a % b == 0` by the facts becomes `c*a*m`
        (truncating division gives `b*(a / b) == a - a % b`)."""
        for _ in range(8):  # each round removes one quotient from one term
            rewritten = self._cancel_one_quotient(d)
            if rewritten is None:
                return d
            d = rewritten
        return d

    def _cancel_one_quotient(self, d: Dim) -> Dim | None:
        substitution = self._knowledge.substitution
        for monomial, coefficient in d._terms:
            for factor, _ in monomial:
                if not (isinstance(factor, Atom) and factor.op == "/"):
                    continue
                a, b = factor.left, factor.right
                if apply_substitution(a.mod(b), substitution).as_int() != 0:
                    continue
                rest = monomial_quotient(monomial, ((factor, 1),))
                cofactor = exact_quotient(Dim({rest: coefficient}), b)
                if cofactor is not None:
                    return d - Dim({monomial: coefficient}) + cofactor * a
        return None

    def _prove_zero(self, d: Dim) -> bool:
        if d.as_int() == 0:
            return True
        return self._prove_nonnegative(d) and self._prove_nonnegative(-d)

    def _prove_nonzero(self, d: Dim) -> bool:
        nonzero = self._knowledge.nonzero
        if d._primitive() in nonzero or (-d)._primitive() in nonzero:
            return True
        return self._prove_nonnegative(d - 1) or self._prove_nonnegative(-d - 1)

    def _prove_nonnegative(self, p: Dim, below: float = math.inf) -> bool:
        """Is `p >= 0`, reasoning only about atoms of size less than `below`?

        Proving something about an atom (its sign, the facts its operator gives) needs
        proofs about its operands, and the facts in sight may mention the atom again.
        Those inner proofs treat atoms as large as the atom itself as opaque, so the
        recursion always shrinks, and ends.
        """
        p = p._primitive()
        key = (p, below)
        if key not in self._proved:
            self._proved[key] = self._find_proof(p, below)
        return self._proved[key]

    def _find_proof(self, p: Dim, below: float) -> bool:
        """Cheapest first: plainly non-negative; refuted at a sample point; a proof
        from the facts; and for a non-linear goal, also from products of facts."""
        if self._plainly_nonnegative(p, below):
            return True
        if self._refuted(p):
            return False
        if self._proved_without_common_factor(p, below):
            return True
        facts = self._facts_for(p, below)
        if _Search(self, facts, below).run(p):
            return True
        if p._total_degree < 2:
            return False
        return _Search(self, facts + self._products(p), below).run(p)

    def _proved_without_common_factor(self, p: Dim, below: float) -> bool:
        """`g*r >= 0` when the monomial `g`, common to every term, is non-negative and
        `r >= 0`: so `P*Q*A >= P*Q*B` follows from `A >= B` as `A >= B` does."""
        common = _common_monomial(p)
        if not common or not self._monomial_is_nonnegative(common, below):
            return False
        quotient = {monomial_quotient(m, common): c for m, c in p._terms}
        return self._prove_nonnegative(Dim(quotient), below)

    def _plainly_nonnegative(self, p: Dim, below: float) -> bool:
        """Non-negative coefficients on products of non-negative factors."""
        return not self._offending_terms(p._coefficients, below)

    def _offending_terms(
        self, p: Polynomial, below: float
    ) -> list[tuple[Monomial, int]]:
        """The terms that keep `p` from being plainly non-negative."""
        return [
            (monomial, coefficient)
            for monomial, coefficient in p.items()
            if coefficient < 0 or not self._monomial_is_nonnegative(monomial, below)
        ]

    def _refuted(self, p: Dim) -> bool:
        """Is `p` negative at a sample point satisfying the facts? Then no proof exists,
        and the search, costly for a false goal, can be skipped."""
        for index, sample in enumerate(self._samples):
            # Names outside the facts may take any value: the sample stays consistent.
            env = {n: sample.get(n, _SAMPLE_VALUES[index]) for n in p.symbols()}
            try:
                if p.evaluate(env) < 0:
                    return True
            except ZeroDivisionError:
                continue
        return False

    @cached_property
    def _samples(self) -> tuple[dict[str, int], ...]:
        """A few assignments consistent with the facts, found by trying values: all
        names equal first (equalities between names are common), then at random."""
        names = set(self._symbols)
        for left, _, right in self._assumptions:
            names |= left.symbols() | right.symbols()
        consistent = (env for env in _candidates(sorted(names))
                      if self.is_consistent_with(env))
        return tuple(islice(consistent, _SAMPLES_KEPT))

    def _facts_for(self, goal: Dim, below: float) -> tuple[Dim, ...]:
        """The facts a proof of `goal >= 0` may use: the assumptions, and what the
        atoms in sight guarantee."""
        facts = list(self._knowledge.nonnegative)
        for atom in self._atoms_in_sight(goal):
            if atom.size < below:
                facts += self._facts_about(atom)
        return tuple(dict.fromkeys(facts))

    def _atoms_in_sight(self, goal: Dim) -> list[Atom]:
        atoms = dict.fromkeys(goal._atoms())
        for fact in self._knowledge.nonnegative:
            atoms.update(dict.fromkeys(fact._atoms()))
        return list(atoms)

    def _products(self, goal: Dim) -> tuple[Dim, ...]:
        """Products of two assumed facts, or of one and a declared name of the goal, no
        higher in degree than the goal: `N >= 1` gives `N*(N - 1) >= 0`, so `N*N >= N`.
        """
        degree = goal._total_degree
        products = [p for p in self._fact_products if p._total_degree <= degree]
        for name in sorted(goal.symbols() & self._symbols):
            symbol = Dim.sym(name)
            for fact in self._knowledge.nonnegative:
                if fact._total_degree < degree:
                    products.append(fact * symbol)
        return tuple(products)

    @cached_property
    def _fact_products(self) -> tuple[Dim, ...]:
        facts = self._knowledge.nonnegative
        pairs = [(f, g) for i, f in enumerate(facts) for g in facts[i:]]
        return tuple((f * g)._primitive() for f, g in pairs)

    # ---- what atoms guarantee

    def _facts_about(self, atom: Atom) -> tuple[Dim, ...]:
        """`min(a, b) <= a`, `max(a, b) >= a`, `a == b*(a / b) + a % b`,
        `next_pow2(a) >= a` and `next_pow2(a) >= 1`; once `a >= 0` and `b > 0` are
        proved, `b*(a / b) <= a < b*(a / b + 1)`, `a % b < b` and `a % b <= a`; and once
        `a >= 1` is, `next_pow2(a) <= 2*a - 1` (the power of two below it is `< a`)."""
        if atom not in self._atom_facts:
            value = Dim._of_factor(atom)
            facts = unconditional_atom_facts(atom, value)
            if atom.op in ("/", "%") and self._nonnegative_by_positive(atom):
                a, b = atom.left, atom.right
                if atom.op == "/":
                    facts += [a - b * value, b * value + b - 1 - a]
                else:
                    facts += [b - 1 - value, a - value]
            if atom.op == "next_pow2" and self._operand_nonnegative(atom, atom.left - 1):
                facts += [2 * atom.left - 1 - value]
            self._atom_facts[atom] = tuple(f._primitive() for f in facts)
        return self._atom_facts[atom]

    def _atom_is_nonnegative(self, atom: Atom) -> bool:
        if atom not in self._atom_signs:
            self._atom_signs[atom] = self._sign_rule(atom)
        return self._atom_signs[atom]

    def _sign_rule(self, atom: Atom) -> bool:
        """A min of non-negatives, a max with a non-negative operand, a quotient or
        remainder of a non-negative by a positive, or any `next_pow2` (at least 1)."""
        if atom.op == "next_pow2":
            return True
        operands = (atom.left, atom.right)
        if atom.op == "min":
            return all(self._operand_nonnegative(atom, x) for x in operands)
        if atom.op == "max":
            return any(self._operand_nonnegative(atom, x) for x in operands)
        return self._nonnegative_by_positive(atom)

    def _nonnegative_by_positive(self, atom: Atom) -> bool:
        operands = (atom.left, atom.right - 1)
        return all(self._operand_nonnegative(atom, x) for x in operands)

    def _operand_nonnegative(self, atom: Atom, operand: Dim) -> bool:
        return self._prove_nonnegative(operand, below=atom.size)

    def _monomial_is_nonnegative(self, monomial: Monomial, below: float) -> bool:
        """A product is non-negative if each factor with an odd exponent is."""
        key = (monomial, below)
        if key not in self._monomial_signs:
            self._monomial_signs[key] = all(
                e % 2 == 0 or self._factor_is_nonnegative(f, below) for f, e in monomial
            )
        return self._monomial_signs[key]

    def _factor_is_nonnegative(self, factor: Factor, below: float) -> bool:
        if isinstance(factor, str):
            return factor in self._symbols
        return factor.size < below and self._atom_is_nonnegative(factor)


class _Search:
    """Depth-first search for `goal = residual + sum of c_i * fact_i`, all `c_i > 0`,
    with a plainly non-negative residual.

    A term of the residual *offends* when its coefficient is negative or its monomial
    is not known to be non-negative. A step subtracts a positive multiple of one fact
    that cancels one offending term exactly. Only facts with a same-signed term on that
    monomial can shrink it, so an offending term that no fact can cancel ends the
    branch, and the term with the fewest candidates is tried first.
    """

    def __init__(self, owner: Facts, facts: tuple[Dim, ...], below: float) -> None:
        self._owner = owner
        self._below = below
        self._by_monomial: dict[Monomial, list[Polynomial]] = {}
        for fact in facts:
            for monomial in fact._coefficients:
                self._by_monomial.setdefault(monomial, []).append(fact._coefficients)
        self._seen: set[frozenset] = set()
        self._budget = _SEARCH_NODES

    def run(self, goal: Dim) -> bool:
        return self._visit(primitive_part(goal._coefficients), _SEARCH_DEPTH)

    def _visit(self, residual: Polynomial, depth: int) -> bool:
        seen_key = frozenset(residual.items())
        if seen_key in self._seen or self._budget <= 0:
            return False
        self._seen.add(seen_key)
        self._budget -= 1
        offending = self._owner._offending_terms(residual, self._below)
        if not offending:
            return True
        if depth == 0:
            return False
        choices = [self._cancellers(m, c) for m, c in offending]
        best = min(range(len(offending)), key=lambda i: len(choices[i]))
        monomial = offending[best][0]
        return any(
            self._visit(cancel(residual, fact, monomial), depth - 1)
            for fact in choices[best]
        )

    def _cancellers(self, monomial: Monomial, coefficient: int) -> list[Polynomial]:
        """Facts with a term on `monomial` of our sign: subtracting one shrinks ours."""
        facts = self._by_monomial.get(monomial, ())
        return [f for f in facts if f[monomial] * coefficient > 0]


def _common_monomial(p: Dim) -> Monomial:
    """The largest monomial dividing every term of `p` (`()` when there is none)."""
    if not p._terms:
        return ()
    common = dict(p._terms[0][0])
    for monomial, _ in p._terms[1:]:
        exponents = dict(monomial)
        common = {f: min(e, exponents[f]) for f, e in common.items() if f in exponents}
    return sorted_monomial(common)


def _candidates(names: list[str]) -> Iterable[dict[str, int]]:
    """The assignments `_samples` tries, made as they are asked for: every name at each of
    `_SAMPLE_VALUES`, then names drawn at random (the same draws for the same names every
    time, as from a `random.Random(0)` made for each set of names)."""
    for value in _SAMPLE_VALUES:
        yield dict.fromkeys(names, value)
    tries = _SAMPLE_TRIES - len(_SAMPLE_VALUES)
    draws = _draws(tries * len(names))
    for t in range(tries):
        yield dict(zip(names, draws[t * len(names):(t + 1) * len(names)]))


_DRAWS: list[int] = []
_DRAWER = random.Random(0)


def _draws(count: int) -> list[int]:
    """The first `count` values of `random.Random(0).choice(_SAMPLE_VALUES)` drawn again and
    again: one sequence for every call, extended as needed, rather than a generator seeded
    anew (a million draws a test run)."""
    while len(_DRAWS) < count:
        _DRAWS.append(_DRAWER.choice(_SAMPLE_VALUES))
    return _DRAWS
