"""Symbolic dimensions, and a small prover for facts about them.

Why this module exists: shapes are part of Linnet types (LANGUAGE.md, section 3), so
the checker must answer questions such as "is the divisor of `K / 16` positive", "does
this `reshape` keep the element count" or "does the caller's `where` clause imply the
callee's". A dimension is an integer written with literals, `Dim` names, `+ - * / %`,
`min` and `max`; `/` and `%` truncate toward zero.

Two things make those questions answerable:

* A **normal form** (`Dim`). Every dimension is a polynomial with integer coefficients
  over *factors*: `Dim` names, and *atoms*, the opaque terms `min(a, b)`, `max(a, b)`,
  `a / b` and `a % b` whose operands are themselves in normal form. Terms are kept in a
  fixed order, so equal polynomials compare equal: `(N + 1)*(N - 1) == N*N - 1`, and
  `(N * 4) / 4 == N`.

* A **prover** (`Facts`). It is sound (it says yes only when the claim holds for every
  integer assignment the facts allow) and deliberately incomplete (it may say no to a
  true claim), because it runs thousands of times per module and must stay fast:

  1. An equality that can be solved for a single factor (`where N == 2*M`,
     `where M % 16 == 0`) becomes a substitution, applied to every later question.
     Every equality is also kept as two inequalities.
  2. Every other comparison becomes a fact `p >= 0`; over the integers `a < b` is
     `b - a - 1 >= 0`.
  3. A goal `p >= 0` holds if `p` minus a non-negative combination of facts is
     *plainly* non-negative: a non-negative constant plus non-negative multiples of
     products of things known to be non-negative. A bounded depth-first search picks
     the facts, each step cancelling one offending term. Atoms bring their own facts
     (`min(a, b) <= a`, `a % b < b`, ...).
  4. Before searching, the goal is evaluated at a few sample points that satisfy the
     facts: a goal that fails at one has no proof, and the search is skipped.
"""

from __future__ import annotations

import math
import operator
import random
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import islice
from typing import Iterable, Mapping, Union

__all__ = ["Dim", "Facts", "COMPARISONS"]

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
_COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

Factor = Union[str, "_Atom"]
"""A variable of the polynomial: a `Dim` name, or an opaque atom."""

Monomial = tuple[tuple[Factor, int], ...]
"""Factors with positive exponents, sorted by factor; `()` is the constant monomial."""

Polynomial = dict[Monomial, int]
"""Coefficients by monomial: the prover's working form, cheaper than a sorted `Dim`."""


# --------------------------------------------------------------------------------------
# Truncating integer arithmetic. Linnet's `/` and `%` round toward zero, where Python's
# `//` and `%` round toward minus infinity.


def _truncating_div(a: int, b: int) -> int:
    """`a / b` rounded toward zero, as the language defines integer division."""
    if b == 0:
        raise ZeroDivisionError("dimension divided by zero")
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


def _truncating_mod(a: int, b: int) -> int:
    """`a % b` with the sign of `a`, so that `a == b * (a / b) + a % b` always."""
    return a - b * _truncating_div(a, b)


_EVALUATE = {"min": min, "max": max, "/": _truncating_div, "%": _truncating_mod}
_OP_ORDER = {"min": 0, "max": 1, "/": 2, "%": 3}


# --------------------------------------------------------------------------------------
# Atoms and monomials.


class _Atom:
    """An opaque term `min(l, r)`, `max(l, r)`, `l / r` or `l % r`, operands normalized.

    Polynomial arithmetic treats an atom as one more variable; only the prover knows
    anything about its value, through the facts its operator guarantees. Immutable; the
    hash is computed once because atoms sit inside monomials, which are hashed a lot.
    """

    __slots__ = ("op", "left", "right", "size", "_hash", "_key")

    def __init__(self, op: str, left: Dim, right: Dim) -> None:
        self.op = op
        self.left = left
        self.right = right
        self.size = 1 + left._size + right._size  # larger than any atom inside
        self._hash = hash((op, left, right))
        self._key: tuple | None = None

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, _Atom):
            return NotImplemented
        mine = (self._hash, self.op, self.left, self.right)
        return mine == (other._hash, other.op, other.left, other.right)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"_Atom({str(self)!r})"

    def __str__(self) -> str:
        if self.op in ("min", "max"):
            return f"{self.op}({self.left}, {self.right})"
        return f"{_numerator_text(self.left)} {self.op} {_divisor_text(self.right)}"

    @property
    def _sort_key(self) -> tuple:
        """Atoms sort after names, then by operator and operands."""
        if self._key is None:
            operands = (self.left._sort_key, self.right._sort_key)
            self._key = (1, _OP_ORDER[self.op], *operands)
        return self._key

    def evaluate(self, env: Mapping[str, int]) -> int:
        left, right = self.left.evaluate(env), self.right.evaluate(env)
        return _EVALUATE[self.op](left, right)

    def rebuild(self, left: Dim, right: Dim) -> Dim:
        """The same operator on new operands, simplified again."""
        if self.op == "min":
            return Dim.minimum(left, right)
        if self.op == "max":
            return Dim.maximum(left, right)
        if self.op == "/":
            return left.floordiv(right)
        return left.mod(right)


def _factor_key(factor: Factor) -> tuple:
    return (0, factor) if isinstance(factor, str) else factor._sort_key


def _sorted_monomial(exponents: dict[Factor, int]) -> Monomial:
    return tuple(sorted(exponents.items(), key=lambda item: _factor_key(item[0])))


def _monomial_size(monomial: Monomial) -> int:
    """How many atom nodes a monomial holds, nested ones included."""
    return sum(f.size * e for f, e in monomial if isinstance(f, _Atom))


@lru_cache(maxsize=65536)
def _monomial_key(monomial: Monomial) -> tuple:
    """Higher degree first, then by factors; so the constant term comes last."""
    degree = sum(exponent for _, exponent in monomial)
    return (-degree, tuple((_factor_key(f), -e) for f, e in monomial))


@lru_cache(maxsize=65536)
def _monomial_product(a: Monomial, b: Monomial) -> Monomial:
    exponents = dict(a)
    for factor, exponent in b:
        exponents[factor] = exponents.get(factor, 0) + exponent
    return _sorted_monomial(exponents)


def _monomial_quotient(a: Monomial, b: Monomial) -> Monomial | None:
    """`a / b` when the monomial `b` divides `a`, else None."""
    exponents = dict(a)
    for factor, exponent in b:
        remaining = exponents.get(factor, 0) - exponent
        if remaining < 0:
            return None
        if remaining == 0:
            del exponents[factor]
        else:
            exponents[factor] = remaining
    return _sorted_monomial(exponents)


# --------------------------------------------------------------------------------------
# Dimensions.


class Dim:
    """A dimension expression in normal form: immutable and hashable; two dimensions
    compare equal exactly when their normal forms are the same polynomial.

    Build one with `Dim.const`, `Dim.sym`, the operators `+ - *` (with a `Dim` or an
    `int` on either side), `floordiv`, `mod`, `minimum` and `maximum`. The constructor
    takes raw polynomial terms and is meant for this module only; `Dim()` is zero.
    """

    __slots__ = (
        "_terms",
        "_coefficients",
        "_hash",
        "_key",
        "_symbols",
        "_degree",
        "_atom_nodes",
    )

    def __init__(self, coefficients: Mapping[Monomial, int] | None = None) -> None:
        kept = {m: c for m, c in (coefficients or {}).items() if c != 0}
        ordered = sorted(kept.items(), key=lambda term: _monomial_key(term[0]))
        self._terms: tuple[tuple[Monomial, int], ...] = tuple(ordered)
        self._coefficients: Polynomial = kept
        self._hash = hash(self._terms)
        self._key: tuple | None = None
        self._symbols: frozenset[str] | None = None
        self._degree: int | None = None
        self._atom_nodes: int | None = None

    # ---- construction

    @staticmethod
    def const(n: int) -> Dim:
        return Dim({(): int(n)})

    @staticmethod
    def sym(name: str) -> Dim:
        if not isinstance(name, str) or not name:
            raise TypeError(f"a dimension symbol is a non-empty string, not {name!r}")
        return Dim({((name, 1),): 1})

    @staticmethod
    def _of_factor(factor: Factor) -> Dim:
        return Dim({((factor, 1),): 1})

    # ---- ring operations

    def __add__(self, other: Dim | int) -> Dim:
        other = _coerce(other)
        if other is None:
            return NotImplemented
        sums = dict(self._coefficients)
        for monomial, coefficient in other._terms:
            sums[monomial] = sums.get(monomial, 0) + coefficient
        return Dim(sums)

    __radd__ = __add__

    def __neg__(self) -> Dim:
        return self._scaled(-1)

    def __sub__(self, other: Dim | int) -> Dim:
        other = _coerce(other)
        return NotImplemented if other is None else self + (-other)

    def __rsub__(self, other: Dim | int) -> Dim:
        other = _coerce(other)
        return NotImplemented if other is None else other + (-self)

    def __mul__(self, other: Dim | int) -> Dim:
        other = _coerce(other)
        if other is None:
            return NotImplemented
        products: Polynomial = {}
        for m1, c1 in self._terms:
            for m2, c2 in other._terms:
                monomial = _monomial_product(m1, m2)
                products[monomial] = products.get(monomial, 0) + c1 * c2
        return Dim(products)

    __rmul__ = __mul__

    def _scaled(self, k: int) -> Dim:
        return Dim({m: k * c for m, c in self._terms})

    def _power(self, exponent: int) -> Dim:
        result = Dim.const(1)
        for _ in range(exponent):
            result = result * self
        return result

    # ---- the opaque operations

    def floordiv(self, other: Dim | int) -> Dim:
        """`self / other`, truncating toward zero.

        Folds constants (`7 / 2` is 3) and exact quotients (`(6*N) / 3` is `2*N`, right
        wherever the division is defined); anything else stays an opaque atom. A zero
        divisor is not an error here: proving divisors positive is the checker's job,
        and `evaluate` raises ZeroDivisionError.
        """
        other = _coerce_or_raise(other)
        a, b = self.as_int(), other.as_int()
        if a is not None and b is not None and b != 0:
            return Dim.const(_truncating_div(a, b))
        quotient = _exact_quotient(self, other)
        if quotient is not None:
            return quotient
        return Dim._of_factor(_Atom("/", self, other))

    def mod(self, other: Dim | int) -> Dim:
        """`self % other` with the sign of `self`: folds constants, is 0 when the
        division is exact (`(6*N) % 3`), and otherwise an opaque atom."""
        other = _coerce_or_raise(other)
        a, b = self.as_int(), other.as_int()
        if a is not None and b is not None and b != 0:
            return Dim.const(_truncating_mod(a, b))
        if _exact_quotient(self, other) is not None:
            return Dim.const(0)
        return Dim._of_factor(_Atom("%", self, other))

    @staticmethod
    def minimum(a: Dim | int, b: Dim | int) -> Dim:
        """`min(a, b)`: folded when `a - b` is a constant (constants, equal operands,
        `min(N + 1, N)`); otherwise an atom with its operands in canonical order."""
        return _min_or_max("min", _coerce_or_raise(a), _coerce_or_raise(b))

    @staticmethod
    def maximum(a: Dim | int, b: Dim | int) -> Dim:
        """`max(a, b)`, simplified like `minimum`."""
        return _min_or_max("max", _coerce_or_raise(a), _coerce_or_raise(b))

    # ---- inspection

    def coefficients(self) -> tuple[int, ...]:
        """Every integer the normal form holds: term coefficients, also inside atoms."""
        own = tuple(c for _, c in self._terms)
        inner = tuple(n for atom in self._atoms()
                      for n in atom.left.coefficients() + atom.right.coefficients())
        return own + inner

    def as_int(self) -> int | None:
        """The value of a constant dimension; None if it has a symbol or an atom."""
        if not self._terms:
            return 0
        if len(self._terms) == 1 and self._terms[0][0] == ():
            return self._terms[0][1]
        return None

    def symbols(self) -> frozenset[str]:
        """Every `Dim` name this dimension mentions, including inside atoms."""
        if self._symbols is None:
            names: set[str] = set()
            for factor in self._factors():
                if isinstance(factor, str):
                    names.add(factor)
                else:
                    names |= factor.left.symbols() | factor.right.symbols()
            self._symbols = frozenset(names)
        return self._symbols

    def evaluate(self, env: Mapping[str, int]) -> int:
        """The value under `env`, with truncating `/` and `%`.

        Raises KeyError for a symbol missing from `env`, ZeroDivisionError for a zero
        divisor.
        """
        total = 0
        for monomial, coefficient in self._terms:
            product = coefficient
            for factor, exponent in monomial:
                value = env[factor] if isinstance(factor, str) else factor.evaluate(env)
                product *= value**exponent
            total += product
        return total

    def substitute(self, env: Mapping[str, Dim | int]) -> Dim:
        """Replace symbols by dimensions (or ints), and normalize again."""
        mapping = {name: _coerce_or_raise(value) for name, value in env.items()}
        return self._replace(mapping)

    # ---- equality, hashing, printing

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Dim):
            return NotImplemented
        return self._hash == other._hash and self._terms == other._terms

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        """Language syntax, e.g. `M + 2*N - 1`, `min(A, B)`, `N / 2`."""
        if not self._terms:
            return "0"
        parts = []
        for monomial, coefficient in self._terms:
            body = _term_text(monomial, abs(coefficient))
            if not parts:
                parts.append("-" + body if coefficient < 0 else body)
            else:
                parts.append((" - " if coefficient < 0 else " + ") + body)
        return "".join(parts)

    def __repr__(self) -> str:
        return f"Dim({str(self)!r})"

    # ---- helpers for this module

    @property
    def _sort_key(self) -> tuple:
        """A total order on dimensions: keeps atom operands and output deterministic."""
        if self._key is None:
            self._key = tuple((_monomial_key(m), c) for m, c in self._terms)
        return self._key

    @property
    def _size(self) -> int:
        """Terms plus atom nodes: it shrinks from an atom to each of its operands."""
        if self._atom_nodes is None:
            self._atom_nodes = sum(_monomial_size(m) for m in self._coefficients)
        return len(self._terms) + self._atom_nodes

    @property
    def _total_degree(self) -> int:
        """The highest degree of a term (an atom counts as one variable)."""
        if self._degree is None:
            degrees = (sum(e for _, e in m) for m, _ in self._terms)
            self._degree = max(degrees, default=0)
        return self._degree

    def _factors(self) -> set[Factor]:
        """The factors at the top level (not those inside atom operands)."""
        return {factor for monomial, _ in self._terms for factor, _ in monomial}

    def _atoms(self) -> list[_Atom]:
        atoms = (f for f in self._factors() if not isinstance(f, str))
        return sorted(atoms, key=_factor_key)

    def _single_factor(self) -> Factor | None:
        """The factor `x` if this dimension is exactly `x`, else None."""
        if len(self._terms) == 1:
            monomial, coefficient = self._terms[0]
            if coefficient == 1 and len(monomial) == 1 and monomial[0][1] == 1:
                return monomial[0][0]
        return None

    def _mentions(self, factor: Factor) -> bool:
        """Does `factor` occur anywhere, including inside atom operands?"""
        for own in self._factors():
            if own == factor:
                return True
            if isinstance(own, _Atom):
                if own.left._mentions(factor) or own.right._mentions(factor):
                    return True
        return False

    def _primitive(self) -> Dim:
        """Divided by the gcd of the coefficients: same sign, so `p >= 0` and
        `2*p >= 0` get one representative."""
        divisor = math.gcd(*self._coefficients.values())
        if divisor <= 1:
            return self
        return Dim({m: c // divisor for m, c in self._terms})

    def _replace(self, mapping: Mapping[Factor, Dim]) -> Dim:
        """Replace factors (names or atoms, also inside atoms) and normalize again."""
        if not mapping:
            return self
        replaced = {f: _replace_factor(f, mapping) for f in self._factors()}
        if all(value is None for value in replaced.values()):
            return self
        result = Dim()
        for monomial, coefficient in self._terms:
            term = Dim.const(coefficient)
            for factor, exponent in monomial:
                value = replaced[factor]
                if value is None:
                    value = Dim._of_factor(factor)
                term = term * value._power(exponent)
            result = result + term
        return result


def _coerce(value: object) -> Dim | None:
    if isinstance(value, Dim):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Dim.const(value)
    return None


def _coerce_or_raise(value: object) -> Dim:
    dim = _coerce(value)
    if dim is None:
        raise TypeError(f"expected a Dim or an int, got {value!r}")
    return dim


def _replace_factor(factor: Factor, mapping: Mapping[Factor, Dim]) -> Dim | None:
    """What `factor` becomes under `mapping`, or None if it stays as it is."""
    if factor in mapping:
        return mapping[factor]
    if isinstance(factor, str):
        return None
    left, right = factor.left._replace(mapping), factor.right._replace(mapping)
    if left is factor.left and right is factor.right:
        return None
    rebuilt = factor.rebuild(left, right)
    atom = rebuilt._single_factor()
    return mapping.get(atom, rebuilt) if atom is not None else rebuilt


def _exact_quotient(a: Dim, b: Dim) -> Dim | None:
    """`q` with `a == b * q` as polynomials, in the easy cases; else None.

    When it exists, `a / b` is exactly `q` wherever `b != 0`: nothing is rounded. The
    easy cases: `b` is a single term (`(6*N*M) / (3*N)`), or `a` is an integer multiple
    of `b` (`(2*N + 2) / (N + 1)`).
    """
    if not b._terms:
        return None
    if not a._terms:
        return Dim()
    if len(b._terms) == 1:
        return _quotient_by_term(a, *b._terms[0])
    (lead_a, coef_a), (lead_b, coef_b) = a._terms[0], b._terms[0]
    if lead_a != lead_b or coef_a % coef_b != 0:
        return None
    ratio = coef_a // coef_b
    return Dim.const(ratio) if b._scaled(ratio) == a else None


def _quotient_by_term(a: Dim, monomial: Monomial, coefficient: int) -> Dim | None:
    quotient: Polynomial = {}
    for m, c in a._terms:
        reduced = _monomial_quotient(m, monomial)
        if reduced is None or c % coefficient != 0:
            return None
        quotient[reduced] = c // coefficient
    return Dim(quotient)


def _min_or_max(op: str, a: Dim, b: Dim) -> Dim:
    difference = (a - b).as_int()
    if difference is not None:
        a_is_smaller = difference <= 0
        return a if a_is_smaller == (op == "min") else b
    left, right = sorted((a, b), key=lambda d: d._sort_key)
    return Dim._of_factor(_Atom(op, left, right))


# --------------------------------------------------------------------------------------
# Printing in language syntax. `*`, `/` and `%` share one precedence level and group to
# the left, so a quotient inside a product, or a compound divisor, needs parentheses. A
# leading minus needs none: with truncation, `(-a) / b == -(a / b)`.


def _term_text(monomial: Monomial, magnitude: int) -> str:
    if not monomial:
        return str(magnitude)
    factors = [factor for factor, exponent in monomial for _ in range(exponent)]
    alone = magnitude == 1 and len(factors) == 1
    texts = [_factor_text(factor, alone) for factor in factors]
    return "*".join(texts if magnitude == 1 else [str(magnitude), *texts])


def _factor_text(factor: Factor, alone: bool) -> str:
    if isinstance(factor, str) or factor.op in ("min", "max") or alone:
        return str(factor)
    return f"({factor})"


def _numerator_text(d: Dim) -> str:
    return f"({d})" if len(d._terms) > 1 else str(d)


def _divisor_text(d: Dim) -> str:
    factor = d._single_factor()
    simple = d.as_int() is not None or isinstance(factor, str)
    simple = simple or (factor is not None and factor.op in ("min", "max"))
    return str(d) if simple else f"({d})"


# --------------------------------------------------------------------------------------
# From `where` clauses to knowledge: substitutions and facts `p >= 0`.


def _check_comparison(op: str) -> None:
    if op not in COMPARISONS:
        expected = " ".join(COMPARISONS)
        raise ValueError(f"unknown comparison {op!r}; expected one of {expected}")


def _nonnegative_form(left: Dim, op: str, right: Dim) -> Dim:
    """The `p` such that `left op right` means `p >= 0`, for an order comparison over
    the integers (a strict one shifts by one)."""
    difference = right - left if op in ("<", "<=") else left - right
    return difference - 1 if op in ("<", ">") else difference


def _holds(left: Dim, op: str, right: Dim, env: Mapping[str, int]) -> bool:
    """Does `left op right` hold at `env`? Not where a division by zero leaves it
    undefined."""
    try:
        return _COMPARE[op](left.evaluate(env), right.evaluate(env))
    except ZeroDivisionError:
        return False


def _unconditional_atom_facts(atom: _Atom, value: Dim) -> list[Dim]:
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
    return (isinstance(factor, str), _factor_key(factor))


def _apply(d: Dim, substitution: Mapping[Factor, Dim]) -> Dim:
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
        solution = _solve_for_factor(_apply(queue.pop(0), substitution))
        if solution is None:
            continue
        factor, value = solution
        if isinstance(factor, str):
            gained += [value] if factor in symbols else []
        else:
            gained += _unconditional_atom_facts(factor, value)
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
class _Knowledge:
    """What the assumptions boil down to."""

    substitution: dict[Factor, Dim]
    nonnegative: tuple[Dim, ...]  # facts p >= 0, substituted, primitive
    nonzero: tuple[Dim, ...]  # facts p != 0, substituted, primitive


def _derive(
    symbols: frozenset[str], assumptions: tuple[tuple[Dim, str, Dim], ...]
) -> _Knowledge:
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
            inequalities.append(_nonnegative_form(left, op, right))
    substitution, gained = _solve_equalities(equalities, symbols)
    reduced = [_apply(d, substitution)._primitive() for d in inequalities + gained]
    useful = [f for f in reduced if not _says_nothing(f, symbols)]
    nonzero = [_apply(d, substitution)._primitive() for d in nonzero]
    return _Knowledge(
        substitution, tuple(dict.fromkeys(useful)), tuple(dict.fromkeys(nonzero))
    )


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
        self._atom_signs: dict[_Atom, bool] = {}
        self._atom_facts: dict[_Atom, tuple[Dim, ...]] = {}

    # ---- building

    def assume(self, left: Dim | int, op: str, right: Dim | int) -> Facts:
        """A new `Facts` that also assumes `left op right`."""
        _check_comparison(op)
        clause = (_coerce_or_raise(left), op, _coerce_or_raise(right))
        extended = Facts(self._symbols)
        extended._assumptions = self._assumptions + (clause,)
        return extended

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
    def _knowledge(self) -> _Knowledge:
        return _derive(self._symbols, self._assumptions)

    # ---- questions

    def prove(self, left: Dim | int, op: str, right: Dim | int) -> bool:
        """Does `left op right` hold for every assignment satisfying the facts?"""
        _check_comparison(op)
        left, right = _coerce_or_raise(left), _coerce_or_raise(right)
        if op == "==":
            return self._prove_zero(self._reduce(left - right))
        if op == "!=":
            return self._prove_nonzero(self._reduce(left - right))
        goal = _nonnegative_form(left, op, right)
        return self._prove_nonnegative(self._reduce(goal))

    def prove_positive(self, d: Dim | int) -> bool:
        """Is `d >= 1` always (as a divisor must be)?"""
        return self._prove_nonnegative(self._reduce(_coerce_or_raise(d) - 1))

    def prove_nonnegative(self, d: Dim | int) -> bool:
        """Is `d >= 0` always (as a dimension must be)?"""
        return self._prove_nonnegative(self._reduce(_coerce_or_raise(d)))

    def counterexample(self, left: Dim | int, op: str, right: Dim | int
                       ) -> dict[str, int] | None:
        """An assignment that satisfies the facts where `left op right` fails, found
        among the prover's sample points; None when none of them refutes it (which proves
        nothing). A claim left undefined by a division by zero is not refuted there."""
        _check_comparison(op)
        left, right = _coerce_or_raise(left), _coerce_or_raise(right)
        for sample in self._samples:
            env = {n: sample.get(n, 0) for n in left.symbols() | right.symbols()}
            try:
                fails = not _COMPARE[op](left.evaluate(env), right.evaluate(env))
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
        return all(_holds(l, op, r, env) for l, op, r in self._assumptions)

    # ---- reasoning

    def simplify(self, d: Dim | int) -> Dim:
        """`d` with its quotients and remainders made exact where the facts allow, equal
        to `d` at every assignment that satisfies the facts.

        Under `where L % 2 == 0`, `(L + 1) / 2` is `L / 2` and `2*(L / 2)` is `L`;
        `(2*L + 1) / 2` is `L` with no facts at all, since `L >= 0`. The substitution
        that equalities give is not applied, so names stay as the user wrote them.
        """
        return self._normalize(_coerce_or_raise(d))

    def _reduce(self, d: Dim) -> Dim:
        """Apply the substitution that the equalities gave, then simplify."""
        if d not in self._reduced:
            substituted = _apply(d, self._knowledge.substitution)
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

    def _simplified_atom(self, atom: _Atom) -> Dim:
        """The atom on simplified operands; for `a / b` and `a % b` with `a >= 0` and
        `b >= 1`, `a` split into `b*E + F + R` with `F` a multiple of `b` by the facts:
        then `a / b` is `E + F / b + R / b` and `a % b` is `R % b`, where `R / b` is
        known (a constant, or 0 when `0 <= R < b`, or -1 when `-b <= R < 0`)."""
        rebuilt = atom.rebuild(self._normalize(atom.left), self._normalize(atom.right))
        inner = rebuilt._single_factor()
        if not isinstance(inner, _Atom) or inner.op not in ("/", "%"):
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
            quotient = _exact_quotient(term, b)
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
        return any(_apply(f.mod(divisor), substitution).as_int() == 0 for f in factors)

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
                if not (isinstance(factor, _Atom) and factor.op == "/"):
                    continue
                a, b = factor.left, factor.right
                if _apply(a.mod(b), substitution).as_int() != 0:
                    continue
                rest = _monomial_quotient(monomial, ((factor, 1),))
                cofactor = _exact_quotient(Dim({rest: coefficient}), b)
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
        quotient = {_monomial_quotient(m, common): c for m, c in p._terms}
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
        chooser = random.Random(0)
        candidates = [dict.fromkeys(names, value) for value in _SAMPLE_VALUES]
        for _ in range(_SAMPLE_TRIES - len(candidates)):
            candidates.append(
                {n: chooser.choice(_SAMPLE_VALUES) for n in sorted(names)}
            )
        consistent = (env for env in candidates if self.is_consistent_with(env))
        return tuple(islice(consistent, _SAMPLES_KEPT))

    def _facts_for(self, goal: Dim, below: float) -> tuple[Dim, ...]:
        """The facts a proof of `goal >= 0` may use: the assumptions, and what the
        atoms in sight guarantee."""
        facts = list(self._knowledge.nonnegative)
        for atom in self._atoms_in_sight(goal):
            if atom.size < below:
                facts += self._facts_about(atom)
        return tuple(dict.fromkeys(facts))

    def _atoms_in_sight(self, goal: Dim) -> list[_Atom]:
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

    def _facts_about(self, atom: _Atom) -> tuple[Dim, ...]:
        """`min(a, b) <= a`, `max(a, b) >= a`, `a == b*(a / b) + a % b`; and once
        `a >= 0` and `b > 0` are proved, `b*(a / b) <= a < b*(a / b + 1)`, `a % b < b`
        and `a % b <= a`."""
        if atom not in self._atom_facts:
            value = Dim._of_factor(atom)
            facts = _unconditional_atom_facts(atom, value)
            if atom.op in ("/", "%") and self._nonnegative_by_positive(atom):
                a, b = atom.left, atom.right
                if atom.op == "/":
                    facts += [a - b * value, b * value + b - 1 - a]
                else:
                    facts += [b - 1 - value, a - value]
            self._atom_facts[atom] = tuple(f._primitive() for f in facts)
        return self._atom_facts[atom]

    def _atom_is_nonnegative(self, atom: _Atom) -> bool:
        if atom not in self._atom_signs:
            self._atom_signs[atom] = self._sign_rule(atom)
        return self._atom_signs[atom]

    def _sign_rule(self, atom: _Atom) -> bool:
        """A min of non-negatives, a max with a non-negative operand, or a quotient or
        remainder of a non-negative by a positive."""
        operands = (atom.left, atom.right)
        if atom.op == "min":
            return all(self._operand_nonnegative(atom, x) for x in operands)
        if atom.op == "max":
            return any(self._operand_nonnegative(atom, x) for x in operands)
        return self._nonnegative_by_positive(atom)

    def _nonnegative_by_positive(self, atom: _Atom) -> bool:
        operands = (atom.left, atom.right - 1)
        return all(self._operand_nonnegative(atom, x) for x in operands)

    def _operand_nonnegative(self, atom: _Atom, operand: Dim) -> bool:
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
        return self._visit(_primitive(goal._coefficients), _SEARCH_DEPTH)

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
            self._visit(_cancel(residual, fact, monomial), depth - 1)
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
    return _sorted_monomial(common)


def _cancel(residual: Polynomial, fact: Polynomial, monomial: Monomial) -> Polynomial:
    """`m*residual - n*fact`, with positive integers `m`, `n` cancelling `monomial`.

    If the result is non-negative then so is the residual, because `fact >= 0`.
    """
    a, b = residual[monomial], fact[monomial]
    g = math.gcd(a, b)
    m, n = abs(b) // g, abs(a) // g
    combined = {key: m * c for key, c in residual.items()}
    for key, c in fact.items():
        combined[key] = combined.get(key, 0) - n * c
    return _primitive({key: c for key, c in combined.items() if c != 0})


def _primitive(p: Polynomial) -> Polynomial:
    """Divided by the gcd of the coefficients: same sign, one form per ray."""
    divisor = math.gcd(*p.values())
    return p if divisor <= 1 else {key: c // divisor for key, c in p.items()}
