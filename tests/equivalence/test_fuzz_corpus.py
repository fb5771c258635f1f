"""The corpus fuzzer in CI: mutants of the corpus never make the compiler crash.

A fixed seed names the mutants, so a failure here is reproducible with
`python -m linnet.testing.fuzz_corpus --seed S --mutants N --no-originals`. The long runs
are recorded in docs/fuzzing.md; CI runs a small slice of each kind (60 and 8 mutants under the
default "ci" profile), larger under `HYPOTHESIS_PROFILE=thorough` (`tests/cases/budget.py`).
"""

from __future__ import annotations

import pytest

from linnet.testing.fuzz_corpus import corpus, run

from budget import scaled, under_ci

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")


def _crashes(results) -> list[str]:
    return [f"{label}: {f}\n{text}" for label, text, r in results for f in r.crashes]


def test_mutants_checked_and_interpreted_never_crash() -> None:
    """Many mutants through the checker and, where they check, the interpreter."""
    results = run(corpus(), scaled(60), seed=11, targets=(), grad=False, originals=False,
                  seconds=30, log=None)
    # A mutant the checker rejects reaches nothing further; which mutants check moves
    # with the corpus, so the slice is wide enough for ten of them with room to spare.
    assert sum(r.checked for _, _, r in results) >= 10
    assert _crashes(results) == []


def test_mutants_through_every_backend_never_crash() -> None:
    """A few mutants through every target and --grad."""
    results = run(corpus(), 8 if under_ci() else scaled(16), seed=12, originals=False, seconds=60, log=None)
    assert any(any(s.startswith("run stablehlo") for s in r.ran) for _, _, r in results)
    assert _crashes(results) == []
