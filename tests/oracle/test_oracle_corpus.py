"""The oracle against the PyTorch interpreter (op bodies) over the spec corpus, the examples
and the gradient corpus, on the sizes and inputs the harness draws; and `gradient_fd`
against the `--grad` export of generated PyTorch for entries returning a floating scalar.

Every entry must agree on some seed whose inputs have a defined result; no entry is beyond
the oracle. An entry whose usual inputs keep reaching undefined behaviour gets inputs of its
own; a gradient the export takes from a deliberately wrong `grad` clause is skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus_run import (corpus_entries, counts, floating_scalar_result,  # noqa: E402
                        grad_entry, integer_inputs, run_entry)

ENTRIES = corpus_entries()
SEEDS = (0, 1)
DRAWS = {  # entries whose usual inputs reach undefined behaviour in most draws
    ("90_integer_division_ranks.linnet", "shifts"): counts,  # negative shift counts
}
GRAD_SKIP = {
    ("wrong_clause.linnet", "main"):
        "the op's grad clause is wrong on purpose and --grad trusts it "
        "(docs/language.md, 'Gradients')",
}


def _id(entry) -> str:
    return f"{entry[0].name}:{entry[1]}"


@pytest.mark.parametrize("entry", ENTRIES, ids=_id)
def test_oracle_agrees_with_the_interpreter(entry):
    path, name = entry
    defined = 0
    for seed in SEEDS:
        out = run_entry(path, name, seed, draw=DRAWS.get((path.name, name)))
        assert out.problems == [], f"seed {seed} at {out.values}"
        defined += out.undefined is None
    assert defined, "every draw reached undefined behaviour"


@pytest.mark.parametrize("entry", [e for e in ENTRIES if integer_inputs(*e)], ids=_id)
def test_oracle_agrees_on_integers_from_their_whole_range(entry):
    """Integer inputs at and near their dtype's limits, where wrapping, truncating division
    and casts show (draws reaching undefined behaviour, such as a zero divisor, pass)."""
    path, name = entry
    out = run_entry(path, name, 7, extremes=True)
    assert out.problems == [], f"at {out.values}"


GRAD_ENTRIES = [e for e in ENTRIES if floating_scalar_result(*e)]


@pytest.mark.parametrize("entry", GRAD_ENTRIES, ids=_id)
def test_finite_differences_agree_with_the_grad_export(entry):
    path, name = entry
    if (path.name, name) in GRAD_SKIP:
        pytest.skip(GRAD_SKIP[(path.name, name)])
    out = grad_entry(path, name, 0)
    assert out.undefined is None, out.undefined
    assert out.problems == [], f"at {out.values}"


def test_the_corpus_is_covered():
    assert len(ENTRIES) >= 100 and len(GRAD_ENTRIES) >= 8
