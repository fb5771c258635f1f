"""The negative corpus: generated kernels whose loads, stores or atomics leave their
tensors, which `linnet check` must reject (E2131), and `linnet fuzz --negative N`.

Each program has one fault and a twin with the fault mended; the twins must check clean
and the faults must be the programs' only problems, or a rejection would prove nothing.
"""

from __future__ import annotations

import random

import pytest

from linnet.cli.main import main as linnet
from linnet.check.frontend import check_program
from linnet.fuzz import negative
from linnet.fuzz.programs.out_of_bounds import (ACCESSES, FAULTS, out_of_bounds_kernel,
                                                 out_of_bounds_kernels)

EVERY_KIND = len(FAULTS) * len(ACCESSES)  # program k: fault k % 5 on access (k // 5) % 3


def codes(text: str) -> set[str]:
    return {d.code for d in check_program("oob.linnet", text).diagnostics}


def test_twins_check_clean_and_the_fault_is_each_programs_only_problem() -> None:
    programs = list(out_of_bounds_kernels(0, EVERY_KIND))
    assert {(p.fault, p.label.split(": ")[1].split(",")[0]) for p in programs} >= {
        (f, a) for f in FAULTS if f != "grid too large" for a in ACCESSES}
    for p in programs:
        assert codes(p.safe) == set(), p.safe
        assert codes(p.text) <= {"E2131", "E2132"}, p.text
        lines = p.text.splitlines()
        assert p.accesses and all(lines[n - 1].strip() == access for n, access in p.accesses)
        assert p.text != p.safe


def test_each_fault_moves_the_access_it_names() -> None:
    rng = random.Random(0)
    unmasked = out_of_bounds_kernel(rng, 0, "unmasked", "store")
    assert [a for _, a in unmasked.accesses] == [next(
        line.strip() for line in unmasked.text.splitlines() if "store(" in line)]
    assert ", cols < C)" not in unmasked.accesses[0][1]
    assert "cols <" in out_of_bounds_kernel(rng, 1, "wrong axis", "atomic_add").accesses[0][1]
    grid = out_of_bounds_kernel(rng, 2, "grid too large", "store")
    assert "grid(R)" not in grid.text and "grid(R)" in grid.safe
    assert [n for n, _ in grid.accesses] == [7, 8]  # the load and the store, by row
    atomic_grid = out_of_bounds_kernel(rng, 3, "grid too large", "atomic_add")
    assert [n for n, _ in atomic_grid.accesses] == [7]  # the atomic indexes columns only
    shifted = out_of_bounds_kernel(rng, 4, "negative offset", "load")
    assert "x[row, cols - " in shifted.accesses[0][1]


def test_findings_are_what_check_accepts_or_rejects_otherwise(monkeypatch, tmp_path) -> None:
    """The report, with check's answers planted: E2131 passes, nothing is `accepted`,
    another code is `other code`, a rejected twin is `twin rejected`."""
    answers = iter([(), ("E2131",), (), (), (), ("E2103",), ("E2131",), ("E2131",)])

    class Planted:
        def __init__(self, codes):
            self.diagnostics = [type("D", (), {"code": c, "severity": "error"}) for c in codes]

    monkeypatch.setattr(negative, "check_program", lambda path, text: Planted(next(answers)))
    report = negative.check_negative(0, 4, out=tmp_path)
    assert (report.programs, report.rejected) == (4, 1) and report.failed
    assert [f.kind for f in report.findings] == ["accepted", "other code", "twin rejected"]
    assert "4 out-of-bounds kernels (seed 0): 1 rejected with E2131; 3 findings:" in \
        report.summary()
    written = sorted(p.name for p in (tmp_path / "negative").iterdir())
    assert written == ["oob_1.linnet", "oob_2.linnet", "oob_3.linnet"]
    assert (tmp_path / "negative" / "oob_1.linnet").read_text().endswith(
        "[no diagnostic]\n")


def test_check_rejects_every_out_of_bounds_kernel(capsys) -> None:
    assert linnet(["fuzz", "--negative", str(2 * EVERY_KIND), "--seed", "4"]) == 0
    assert capsys.readouterr().out.strip() == (
        f"{2 * EVERY_KIND} out-of-bounds kernels (seed 4): {2 * EVERY_KIND} rejected with "
        "E2131, every one")
