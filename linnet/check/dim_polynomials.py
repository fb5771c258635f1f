"""The vocabulary of dimension polynomials: factors, monomials, and their arithmetic.

Why this module exists: a `Dim` (`dim_normal_form.py`) is a polynomial with integer
coefficients over *factors*, kept in a fixed order so that equal polynomials compare
equal; the prover (`dims.py`) searches over the same polynomials in a cheaper raw form.
The words for their parts (`Factor`, `Monomial`, `Polynomial`), the order on factors and
monomials, products and quotients of monomials, and the two operations the prover's
search does on raw polynomials need neither `Dim` nor atoms, so they live here, below
both.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Union

Factor = Union[str, "Atom"]
"""A variable of the polynomial: a `Dim` name, or an opaque atom. `Atom` is defined in
`dim_normal_form.py`, which builds on this module, so it is named here only as a string
(importing it would make an import cycle)."""

Monomial = tuple[tuple[Factor, int], ...]
"""Factors with positive exponents, sorted by factor; `()` is the constant monomial."""

Polynomial = dict[Monomial, int]
"""Coefficients by monomial: the prover's working form, cheaper than a sorted `Dim`."""


def factor_key(factor: Factor) -> tuple:
    """The order on factors: names first, alphabetically, then atoms by their own key."""
    return (0, factor) if isinstance(factor, str) else factor._sort_key


def sorted_monomial(exponents: dict[Factor, int]) -> Monomial:
    """The monomial of these exponents, its factors in `factor_key` order."""
    return tuple(sorted(exponents.items(), key=lambda item: factor_key(item[0])))


@lru_cache(maxsize=65536)
def monomial_key(monomial: Monomial) -> tuple:
    """Higher degree first, then by factors; so the constant term comes last."""
    degree = sum(exponent for _, exponent in monomial)
    return (-degree, tuple((factor_key(f), -e) for f, e in monomial))


@lru_cache(maxsize=65536)
def monomial_product(a: Monomial, b: Monomial) -> Monomial:
    """`a * b`: the exponents of shared factors add."""
    exponents = dict(a)
    for factor, exponent in b:
        exponents[factor] = exponents.get(factor, 0) + exponent
    return sorted_monomial(exponents)


def monomial_quotient(a: Monomial, b: Monomial) -> Monomial | None:
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
    return sorted_monomial(exponents)


def cancel(residual: Polynomial, fact: Polynomial, monomial: Monomial) -> Polynomial:
    """`m*residual - n*fact`, with positive integers `m`, `n` cancelling `monomial`.

    If the result is non-negative then so is the residual, because `fact >= 0`.
    """
    a, b = residual[monomial], fact[monomial]
    g = math.gcd(a, b)
    m, n = abs(b) // g, abs(a) // g
    combined = {key: m * c for key, c in residual.items()}
    for key, c in fact.items():
        combined[key] = combined.get(key, 0) - n * c
    return primitive_part({key: c for key, c in combined.items() if c != 0})


def primitive_part(p: Polynomial) -> Polynomial:
    """Divided by the gcd of the coefficients: same sign, one form per ray."""
    divisor = math.gcd(*p.values())
    return p if divisor <= 1 else {key: c // divisor for key, c in p.items()}
