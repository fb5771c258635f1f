"""Values for checking rules by themselves: edge integers, booleans, tiles, strings.

Wrong rules fail at the edges, so integers are drawn on purpose from 0, +-1, +-2, the
width's MIN and MAX (and one inside), powers of two and their neighbours (+-2^k +- 1),
small numbers, and, for i64 bounds, the i64 edges. Off-by-one rules fail where two values
meet, so a draw often reuses a value drawn earlier in the same sample (plus -2..2, or
negated): a bound equal to another bound, a value at its bound. Tiles mix 0, -0.0, +-1,
0.5, large and tiny numbers, inf, -inf and NaN with random normals, and are sometimes all
non-negative (so a premise like `nonnegative(x)` holds often enough).
"""

from __future__ import annotations

import random
from functools import lru_cache

import numpy as np

from .rule_semantics import I32_MAX, I32_MIN, I64_MAX, I64_MIN, bounds

SPECIAL_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, 1e-3, 1e3, np.inf, -np.inf, np.nan)
STRINGS = ("bf16", "f16", "a")


@lru_cache(maxsize=None)
def edges(width: int) -> tuple[int, ...]:
    """The edge integers of a width, sorted."""
    low, high = bounds(width)
    out = {0, 1, -1, 2, -2, low, low + 1, high, high - 1}
    for k in range(1, width - 1):
        for v in (2**k, 2**k - 1, 2**k + 1):
            out.update({v, -v})
    return tuple(sorted(v for v in out if low <= v <= high))


class Sampler:
    """Draws the values of one sample; `pool` is what it drew so far (for near values)."""

    def __init__(self, rng: random.Random, width: int, size: int) -> None:
        self.rng, self.width, self.size = rng, width, size
        self.pool: list[int] = []

    def int_in(self, low: int, high: int) -> int:
        """An integer in low..high (which must not be empty), edge-biased."""
        v = self._draw(low, high)
        if not low <= v <= high:
            v = self.rng.randint(low, high)
        self.pool.append(v)
        return v

    def value(self) -> int:
        """A value of the sample's integer width."""
        return self.int_in(*bounds(self.width))

    def bound(self) -> int:
        """An i64 (egglog's integers: constants' values, interval bounds): mostly in i32
        range, sometimes at the i64 edges."""
        if self.rng.random() < 0.1:
            return self.int_in(I64_MIN, I64_MAX)
        return self.int_in(I32_MIN, I32_MAX) if self.rng.random() < 0.8 else self.int_in(
            -(2**40), 2**40)

    def upper_after(self, lower: int) -> int:
        """The upper bound of a value of the sample's width, drawn against its lower bound:
        often just above it, sometimes equal, sometimes just below (an empty interval).
        (Bounds of a value lie in its width's range: sound facts about a class with values
        do, and the rules derive bounds only while they fit.)"""
        r = self.rng.random()
        if r < 0.55:
            delta = self.rng.choice((0, 0, 1, 1, 2, 3, 7, 16, 255, 2**20, 2**31))
        elif r < 0.7:
            delta = self.rng.choice((-1, -2, -16))
        else:
            return self.value()
        low, high = bounds(self.width)
        return self.keep(lower + delta) if low <= lower + delta <= high else self.value()

    def keep(self, v: int) -> int:
        self.pool.append(v)
        return v

    def _draw(self, low: int, high: int) -> int:
        r = self.rng.random()
        if r < 0.3:
            inside = [e for e in edges(64 if high - low > 2**33 else self.width) if low <= e <= high]
            if inside:
                return self.rng.choice(inside)
        elif r < 0.55 and self.pool:
            base = self.rng.choice(self.pool)
            return -base if self.rng.random() < 0.15 else base + self.rng.randint(-2, 2)
        elif r < 0.7:
            return self.rng.choice((low, high, low + 1, high - 1))
        elif r < 0.85:
            return self.rng.randint(-16, 16)
        return self.rng.randint(low, high)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def string(self) -> str:
        return self.rng.choice(STRINGS)

    def tile(self) -> np.ndarray:
        """A size x size float64 tile: specials and normals, sometimes all >= 0 or NaN."""
        n = self.size
        kind = self.rng.random()
        gen = np.random.default_rng(self.rng.getrandbits(32))
        values = gen.normal(size=(n, n)) * gen.choice([1.0, 10.0, 1e-3], size=(n, n))
        special = gen.random((n, n)) < (0.5 if kind < 0.7 else 0.0)
        values = np.where(special, gen.choice(np.array(SPECIAL_FLOATS), size=(n, n)), values)
        if kind >= 0.4:
            values = np.where(np.isnan(values), values, np.abs(values)) if kind < 0.7 else \
                np.abs(values)
        return values
