"""From `where` clauses to knowledge: substitutions, and facts `p >= 0` and `p != 0`.

Why this module exists: before the prover (`dims.py`) answers a question, the
assumptions it was given are boiled down once to what a proof can use. An equality that
can be solved for a single factor (`where N == 2*M`, `where M % 16 == 0`) becomes a
substitution, applied to every later question; every equality is also kept as two
inequalities; every other order comparison becomes a fact `p >= 0` (over the integers
`a < b` is `b - a - 1 >= 0`), and `!=` a fact `p != 0`. The comparisons a claim may use,
and the facts an atom guarantees whatever its operands, are here too, because deriving
the knowledge needs them as much as the prover does.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Mapping

from .dim_normal_form import Dim, Atom
from .dim_polynomials import Factor, factor_key

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
COMPARE = {  # each comparison as the function that decides it on integers
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


# --------------------------------------------------------------------------------------
# From `where` clauses to knowledge: substitutions and facts `p >= 0`.


def check_comparison(op: str) -> None:
    """Refuse (ValueError) a comparison that is not one of `COMPARISONS`."""
    if op not in COMPARISONS:
        expected = " ".join(COMPARISONS)
        raise ValueError(f"unknown comparison {op!r}; expected one of {expected}")


def nonnegative_form(left: Dim, op: str, right: Dim) -> Dim:
    """The `p` such that `left op right` means `p >= 0`, for an order comparison over
    the integers (a strict one shifts by one)."""
    difference = right - left if op in ("<", "<=") else left - right
    return difference - 1 if op in ("<", ">") else difference


def holds(left: Dim, op: str, right: Dim, env: Mapping[str, int]) -> bool:
    """Does `left op right` hold at `env`? Not where a division by zero leaves it
    undefined."""
    try:
        return COMPARE[op](left.evaluate(env), right.evaluate(env))
    except ZeroDivisionError:
        return False


def unconditional_atom_facts(atom: Atom, value: Dim) -> list[Dim]:
    """Facts `p >= 0` that hold whatever the operands are, with `value` standing for
    the atom (the atom itself, or what a substitution replaced it by)."""
    if atom.op == "min":
        return [atom.left - value, atom.right - value]
    if atom.op == "max":
        return [value - atom.left, value - atom.right]
    if atom.op == "%":
        quotient = atom.left.floordiv(atom.right)
        identity = atom.left - atom.right * quotient - value
        return [identity, -identity]
    if atom.op == "next_pow2":  # 1 for an operand <= 1, else a power of two >= it
        return [value - 1, value - atom.left]
    return []


def _solve_for_factor(d: Dim) -> tuple[Factor, Dim] | None:
    """From `d == 0`, a substitution `x := value` with `value` free of `x`, when some
    factor `x` occurs once, linearly, with coefficient +1 or -1 (no division needed).

    Names are preferred to atoms, then the last in sort order: a deterministic choice.
    """
    candidates = []
    for monomial, coefficient in d._terms:
        if len(monomial) == 1 and monomial[0][1] == 1 and abs(coefficient) == 1:
            factor = monomial[0][0]
            rest = d - Dim._of_factor(factor)._scaled(coefficient)
            if not rest._mentions(factor):
                candidates.append((factor, coefficient, rest))
    if not candidates:
        return None
    factor, coefficient, rest = max(candidates, key=lambda c: _preference(c[0]))
    return factor, rest._scaled(-coefficient)


def _preference(factor: Factor) -> tuple:
    return (isinstance(factor, str), factor_key(factor))


def apply_substitution(d: Dim, substitution: Mapping[Factor, Dim]) -> Dim:
    """Apply a substitution until nothing changes (a few rounds at most: a rebuilt atom
    can match another entry's key)."""
    for _ in range(4):
        replaced = d._replace(substitution)
        if replaced == d:
            return d
        d = replaced
    return d


def _extend_substitution(
    substitution: dict[Factor, Dim], factor: Factor, value: Dim
) -> tuple[dict[Factor, Dim], list[Dim]]:
    """Add `factor := value`, rewriting the other entries so none mentions `factor`.

    An atom key can stop being an atom (`(2*M) % 2` folds to 0); its entry becomes an
    equation to solve again, returned second.
    """
    step = {factor: value}
    extended: dict[Factor, Dim] = {}
    broken: list[Dim] = []
    for key, old in substitution.items():
        new_key_dim, new_value = Dim._of_factor(key)._replace(step), old._replace(step)
        new_key = new_key_dim._single_factor()
        if new_key is None or new_key in extended:
            broken.append(new_key_dim - new_value)
        else:
            extended[new_key] = new_value
    extended[factor] = value
    return extended, broken


def _solve_equalities(
    equalities: list[Dim], symbols: frozenset[str]
) -> tuple[dict[Factor, Dim], list[Dim]]:
    """Turn the solvable equalities `d == 0` into one substitution. Also return facts
    about eliminated factors that would otherwise be lost (`M - 1 >= 0` from `N >= 0`
    when `N := M - 1`)."""
    substitution: dict[Factor, Dim] = {}
    gained: list[Dim] = []
    queue = list(equalities)
    budget = 4 * len(queue) + 8  # re-queued equations must not loop forever
    while queue and budget > 0:
        budget -= 1
        solution = _solve_for_factor(apply_substitution(queue.pop(0), substitution))
        if solution is None:
            continue
        factor, value = solution
        if isinstance(factor, str):
            gained += [value] if factor in symbols else []
        else:
            gained += unconditional_atom_facts(factor, value)
        substitution, broken = _extend_substitution(substitution, factor, value)
        queue += broken
    return substitution, gained


def _says_nothing(d: Dim, symbols: frozenset[str]) -> bool:
    """Is the fact `d >= 0` of no use to a proof? So it is when it has non-negative
    coefficients on products of declared names (a factor with an even exponent is a
    square), since the prover knows as much without it."""
    for monomial, coefficient in d._terms:
        if coefficient < 0:
            return False
        if any(e % 2 == 1 and f not in symbols for f, e in monomial):
            return False
    return True


@dataclass(frozen=True)
class Knowledge:
    """What the assumptions boil down to."""

    substitution: dict[Factor, Dim]
    nonnegative: tuple[Dim, ...]  # facts p >= 0, substituted, primitive
    nonzero: tuple[Dim, ...]  # facts p != 0, substituted, primitive


def derive_knowledge(
    symbols: frozenset[str], assumptions: tuple[tuple[Dim, str, Dim], ...]
) -> Knowledge:
    """Equalities become a substitution (and two inequalities each), order comparisons
    facts `p >= 0`, `!=` facts `p != 0`; all are then rewritten by the substitution."""
    equalities, inequalities, nonzero = [], [], []
    for left, op, right in assumptions:
        if op == "==":
            equalities.append(left - right)
            inequalities += [left - right, right - left]
        elif op == "!=":
            nonzero.append(left - right)
        else:
            inequalities.append(nonnegative_form(left, op, right))
    substitution, gained = _solve_equalities(equalities, symbols)
    reduced = [apply_substitution(d, substitution)._primitive() for d in inequalities + gained]
    useful = [f for f in reduced if not _says_nothing(f, symbols)]
    nonzero = [apply_substitution(d, substitution)._primitive() for d in nonzero]
    return Knowledge(
        substitution, tuple(dict.fromkeys(useful)), tuple(dict.fromkeys(nonzero))
    )


