"""How many examples, programs or mutants a bounded random test runs under the Hypothesis
profile in effect (`HYPOTHESIS_PROFILE`, profiles in tests/conftest.py).

Why: the default "ci" profile keeps the suite under ten minutes on two cores, so a slow
random test runs few examples there; "gpu" and "thorough" ask for more, in proportion to
their `max_examples`. A test names what it runs under "ci" (`scaled(20)`), and gets four
times that under "gpu" and twenty times under "thorough".
A test whose every example is slow (a compile and a run in an interpreter) may ask
`under_ci()` and run fewer there, keeping the other profiles' counts.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

CI_EXAMPLES = 10
"""`max_examples` of the "ci" profile: the unit the other profiles are measured in."""


def scaled(ci: int) -> int:
    """`ci` under the "ci" profile, more in proportion under a profile with more examples
    (never fewer than one)."""
    return max(1, round(ci * settings.default.max_examples / CI_EXAMPLES))


def under_ci() -> bool:
    """Is the "ci" profile (or one with as few examples) in effect?"""
    return settings.default.max_examples <= CI_EXAMPLES


def size_variety() -> bool:
    """Whether the profile asks for more examples than "ci": then a test draws generic dims
    from their whole ranges, else from the fixed few of `generic_sizes`."""
    return not under_ci()


def generic_sizes(ranges: tuple[tuple[int, int], ...]) -> list[tuple[int, ...]]:
    """Three bindings of generic dims inside `ranges` (inclusive): a middle one with the
    dims spread apart (so a transposed or swapped dim shows), every dim at its low end, and
    every dim at its high end."""
    n = len(ranges)
    middle = tuple(round(lo + (hi - lo) * (k + 1) / (n + 1))
                   for k, (lo, hi) in enumerate(ranges))
    return list(dict.fromkeys([middle, tuple(lo for lo, _ in ranges),
                               tuple(hi for _, hi in ranges)]))


def generic_dims(ranges: tuple[tuple[int, int], ...]) -> SearchStrategy:
    """Generic dims, one per range. Each new binding compiles an entry anew, so under the
    "ci" profile they come from `generic_sizes`; under one with more examples, from the
    whole ranges."""
    if not size_variety():
        return st.sampled_from(generic_sizes(ranges))
    return st.tuples(*(st.integers(lo, hi) for lo, hi in ranges))
