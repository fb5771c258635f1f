"""Symbolic dimensions in normal form: `Dim`, its atoms, and their printing.

Why this module exists: shapes are part of Linnet types (docs/language.md, "Types and
generics"), and questions about them are answerable only if equal dimensions look equal.
A dimension is
an integer written with literals, `Dim` names, `+ - * / %`, `min`, `max` and
`next_pow2`; `/` and `%` truncate toward zero, and `next_pow2(a)` is the smallest power
of two at least `a` (1 for `a <= 1`).

Every dimension is a polynomial with integer coefficients over *factors*
(`dim_polynomials.py`): `Dim` names, and *atoms*, the opaque terms `min(a, b)`,
`max(a, b)`, `a / b`, `a % b` and `next_pow2(a)` whose operands are themselves in normal
form. Terms are
kept in a fixed order, so equal polynomials compare equal: `(N + 1)*(N - 1) == N*N - 1`,
and `(N * 4) / 4 == N`. `Dim` and `Atom` need each other (an atom rebuilt on new
operands is a `Dim` again), and printing needs both, so the three stay together here.
What dimensions may be assumed to satisfy, and the proofs, belong to the prover
(`dims.py`).
"""

from __future__ import annotations

import math
from typing import Mapping

from .dim_polynomials import (Factor, Monomial, Polynomial, factor_key, monomial_key,
                              monomial_product, monomial_quotient)


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


def next_power_of_two(a: int) -> int:
    """The smallest power of two `>= a`; 1 for every `a <= 1` (a tile holds at least one)."""
    return 1 if a <= 1 else 1 << (a - 1).bit_length()


_EVALUATE = {"min": min, "max": max, "/": _truncating_div, "%": _truncating_mod,
             "next_pow2": next_power_of_two}
_OP_ORDER = {"min": 0, "max": 1, "/": 2, "%": 3, "next_pow2": 4}
_CALLS = ("min", "max", "next_pow2")
"""Atoms printed as calls, `min(a, b)`; the others are infix, `a / b`."""



# --------------------------------------------------------------------------------------
# Atoms and monomials.


class Atom:
    """An opaque term `min(l, r)`, `max(l, r)`, `l / r`, `l % r` or `next_pow2(l)`,
    operands normalized.

    Polynomial arithmetic treats an atom as one more variable; only the prover knows
    anything about its value, through the facts its operator guarantees. Immutable; the
    hash is computed once because atoms sit inside monomials, which are hashed a lot.
    `left` is the first operand, `right` the second of a binary atom.
    """

    __slots__ = ("op", "operands", "size", "_hash", "_key")

    def __init__(self, op: str, *operands: Dim) -> None:
        self.op = op
        self.operands = operands
        self.size = 1 + sum(o._size for o in operands)  # larger than any atom inside
        self._hash = hash((op, operands))
        self._key: tuple | None = None

    @property
    def left(self) -> Dim:
        return self.operands[0]

    @property
    def right(self) -> Dim:
        return self.operands[1]

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Atom):
            return NotImplemented
        mine = (self._hash, self.op, self.operands)
        return mine == (other._hash, other.op, other.operands)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Atom({str(self)!r})"

    def __str__(self) -> str:
        if self.op in _CALLS:
            return f"{self.op}({', '.join(map(str, self.operands))})"
        return f"{_numerator_text(self.left)} {self.op} {_divisor_text(self.right)}"

    @property
    def _sort_key(self) -> tuple:
        """Atoms sort after names, then by operator and operands."""
        if self._key is None:
            operands = tuple(o._sort_key for o in self.operands)
            self._key = (1, _OP_ORDER[self.op], *operands)
        return self._key

    def evaluate(self, env: Mapping[str, int], ops: Mapping | None = None) -> int:
        return (ops or _EVALUATE)[self.op](*(o.evaluate(env, ops) for o in self.operands))

    def rebuild(self, *operands: Dim) -> Dim:
        """The same operator on new operands, simplified again."""
        if self.op == "min":
            return Dim.minimum(*operands)
        if self.op == "max":
            return Dim.maximum(*operands)
        if self.op == "next_pow2":
            return Dim.next_pow2(*operands)
        left, right = operands
        return left.floordiv(right) if self.op == "/" else left.mod(right)


def _monomial_size(monomial: Monomial) -> int:
    """How many atom nodes a monomial holds, nested ones included."""
    return sum(f.size * e for f, e in monomial if isinstance(f, Atom))



# --------------------------------------------------------------------------------------
# Dimensions.


def _term_key(term: tuple[Monomial, int]) -> tuple:
    """The order of a polynomial's terms: its monomials' (`monomial_key`)."""
    return monomial_key(term[0])


class Dim:
    """A dimension expression in normal form: immutable and hashable; two dimensions
    compare equal exactly when their normal forms are the same polynomial.

    Build one with `Dim.const`, `Dim.sym`, the operators `+ - *` (with a `Dim` or an
    `int` on either side), `floordiv`, `mod`, `minimum` and `maximum`. The constructor
    takes raw polynomial terms and is meant for the dimension modules only (this one,
    `dim_knowledge.py` and `dims.py`); `Dim()` is zero.
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
        kept = {m: c for m, c in coefficients.items() if c != 0} if coefficients else {}
        # most dimensions are one term (a constant, a symbol): nothing to order
        ordered = (tuple(kept.items()) if len(kept) < 2 else
                   tuple(sorted(kept.items(), key=_term_key)))
        self._terms: tuple[tuple[Monomial, int], ...] = ordered
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
                monomial = monomial_product(m1, m2)
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
        other = coerce_or_raise(other)
        a, b = self.as_int(), other.as_int()
        if a is not None and b is not None and b != 0:
            return Dim.const(_truncating_div(a, b))
        quotient = exact_quotient(self, other)
        if quotient is not None:
            return quotient
        return Dim._of_factor(Atom("/", self, other))

    def mod(self, other: Dim | int) -> Dim:
        """`self % other` with the sign of `self`: folds constants, is 0 when the
        division is exact (`(6*N) % 3`), and otherwise an opaque atom."""
        other = coerce_or_raise(other)
        a, b = self.as_int(), other.as_int()
        if a is not None and b is not None and b != 0:
            return Dim.const(_truncating_mod(a, b))
        if exact_quotient(self, other) is not None:
            return Dim.const(0)
        return Dim._of_factor(Atom("%", self, other))

    @staticmethod
    def minimum(a: Dim | int, b: Dim | int) -> Dim:
        """`min(a, b)`: folded when `a - b` is a constant (constants, equal operands,
        `min(N + 1, N)`); otherwise an atom with its operands in canonical order."""
        return _min_or_max("min", coerce_or_raise(a), coerce_or_raise(b))

    @staticmethod
    def maximum(a: Dim | int, b: Dim | int) -> Dim:
        """`max(a, b)`, simplified like `minimum`."""
        return _min_or_max("max", coerce_or_raise(a), coerce_or_raise(b))

    @staticmethod
    def next_pow2(a: Dim | int) -> Dim:
        """The smallest power of two `>= a`, and 1 for `a <= 1`: what a Triton user
        computes on the host as `triton.next_power_of_2(n)` to size a tile.

        Folds constants (`next_pow2(768)` is 1024) and is idempotent
        (`next_pow2(next_pow2(N))` is `next_pow2(N)`); anything else is an opaque atom,
        whose facts (`>= a`, `>= 1`) the prover knows.
        """
        a = coerce_or_raise(a)
        value = a.as_int()
        if value is not None:
            return Dim.const(next_power_of_two(value))
        inner = a._single_factor()
        if isinstance(inner, Atom) and inner.op == "next_pow2":
            return a
        return Dim._of_factor(Atom("next_pow2", a))

    # ---- inspection

    def product_factors(self) -> tuple[Dim, ...] | None:
        """Each factor of a product with coefficient 1 (`A*B`, `(M / BM)*(N / BN)`, with
        a power's factor repeated); None for anything else, a single factor included."""
        if len(self._terms) != 1 or self._terms[0][1] != 1:
            return None
        factors = tuple(Dim._of_factor(f) for f, e in self._terms[0][0] for _ in range(e))
        return factors if len(factors) > 1 else None

    def coefficients(self) -> tuple[int, ...]:
        """Every integer the normal form holds: term coefficients, also inside atoms."""
        own = tuple(c for _, c in self._terms)
        inner = tuple(n for atom in self._atoms() for o in atom.operands
                      for n in o.coefficients())
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
                    for operand in factor.operands:
                        names |= operand.symbols()
            self._symbols = frozenset(names)
        return self._symbols

    def evaluate(self, env: Mapping[str, int], ops: Mapping | None = None) -> int:
        """The value under `env`, with truncating `/` and `%`.

        Raises KeyError for a symbol missing from `env`, ZeroDivisionError for a zero
        divisor. `ops` replaces the functions of `min`, `max`, `/`, `%` and `next_pow2`
        (array versions evaluate at many points at once: `kernel_cover_sizes.py`).
        """
        total = 0
        for monomial, coefficient in self._terms:
            product = coefficient
            for factor, exponent in monomial:
                value = env[factor] if isinstance(factor, str) else factor.evaluate(env, ops)
                product = product * value**exponent  # not in place: arrays broadcast
            total = total + product
        return total

    def substitute(self, env: Mapping[str, Dim | int]) -> Dim:
        """Replace symbols by dimensions (or ints), and normalize again."""
        mapping = {name: coerce_or_raise(value) for name, value in env.items()}
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

    # ---- helpers for the dimension modules

    @property
    def _sort_key(self) -> tuple:
        """A total order on dimensions: keeps atom operands and output deterministic."""
        if self._key is None:
            self._key = tuple((monomial_key(m), c) for m, c in self._terms)
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

    def _atoms(self) -> list[Atom]:
        atoms = (f for f in self._factors() if not isinstance(f, str))
        return sorted(atoms, key=factor_key)

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
            if isinstance(own, Atom):
                if any(o._mentions(factor) for o in own.operands):
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


def coerce_or_raise(value: object) -> Dim:
    """value as a `Dim` (an int becomes a constant); a TypeError for anything else."""
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
    operands = tuple(o._replace(mapping) for o in factor.operands)
    if all(new is old for new, old in zip(operands, factor.operands)):
        return None
    rebuilt = factor.rebuild(*operands)
    atom = rebuilt._single_factor()
    return mapping.get(atom, rebuilt) if atom is not None else rebuilt


def exact_quotient(a: Dim, b: Dim) -> Dim | None:
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
        reduced = monomial_quotient(m, monomial)
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
    return Dim._of_factor(Atom(op, left, right))


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
    if isinstance(factor, str) or factor.op in _CALLS or alone:
        return str(factor)
    return f"({factor})"


def _numerator_text(d: Dim) -> str:
    return f"({d})" if len(d._terms) > 1 else str(d)


def _divisor_text(d: Dim) -> str:
    factor = d._single_factor()
    simple = d.as_int() is not None or isinstance(factor, str)
    simple = simple or (factor is not None and factor.op in _CALLS)
    return str(d) if simple else f"({d})"


