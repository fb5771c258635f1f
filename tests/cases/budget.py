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

CI_EXAMPLES = 10
"""`max_examples` of the "ci" profile: the unit the other profiles are measured in."""


def scaled(ci: int) -> int:
    """`ci` under the "ci" profile, more in proportion under a profile with more examples
    (never fewer than one)."""
    return max(1, round(ci * settings.default.max_examples / CI_EXAMPLES))


def under_ci() -> bool:
    """Is the "ci" profile (or one with as few examples) in effect?"""
    return settings.default.max_examples <= CI_EXAMPLES
