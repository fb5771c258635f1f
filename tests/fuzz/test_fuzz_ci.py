"""A fixed-seed, bounded `linnet fuzz` run: every generated program agrees with the oracle
on every target. Seed 0, 20 programs under the "ci" Hypothesis profile
(`tests/cases/budget.py`; 400 under `HYPOTHESIS_PROFILE=thorough`), run by the command in
this process (`--in-process`): worker processes would import every runtime again, and the
driver's tests (`test_fuzz_driver.py`) show that workers find what one process finds. A
finding here is a compiler bug (or a bug of the generator or the oracle):
`linnet fuzz --seed 0 --count 20 --out found` reduces it and writes a report."""

from __future__ import annotations

import json

import pytest

from linnet.cli.main import main as linnet

from budget import scaled

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

COUNT = scaled(20)


def test_fixed_seed_fuzzing_finds_nothing(capsys) -> None:
    status = linnet(["fuzz", "--seed", "0", "--count", str(COUNT), "--in-process", "--json"])
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert report["programs"] == COUNT and report["cases"] >= COUNT
    found = [f"{f['key']}: {f['program']} case {f['case']}: {f['detail']}"
             for f in report["findings"]]
    assert not found, "\n".join(found)
    assert status == 0, out.err[-2000:]
