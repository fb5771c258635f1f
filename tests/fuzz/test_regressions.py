"""Every regression program the fuzzer found (`tests/fuzz/*.linnet`, with its `.json` and
inputs; see `linnet/testing/fuzz/regression.py`) through every target against the oracle."""

from __future__ import annotations

import pytest

from linnet.fuzz import FAILING, prepare_runtimes, run_case
from linnet.fuzz.regression import load_regression, regressions

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

PROGRAMS = regressions()


def test_the_folder_holds_regressions() -> None:
    assert PROGRAMS, "tests/fuzz/ holds no regression program"
    for path in PROGRAMS:
        assert path.with_suffix(".json").exists(), f"{path.name} has no .json beside it"


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_a_regression_agrees_with_the_oracle_everywhere(path) -> None:
    prepare_runtimes()
    case, plan = load_regression(path)
    result = run_case(case, plan, path=str(path), program=path.name)
    assert result.skipped is None, result.skipped
    failures = [str(f) for f in result.findings if f.kind in FAILING]
    assert not failures, "\n".join(failures)
    assert result.runs >= len(plan.targets)  # every target ran to the comparison
