"""A fixed-seed, bounded `linnet fuzz` run: every generated program agrees with the oracle
on every target. Seed 0, 20 programs on two worker processes under the "ci" Hypothesis
profile (`tests/cases/budget.py`; 400 under `HYPOTHESIS_PROFILE=thorough`): about fifteen
seconds on two CPU cores. A finding here is a compiler bug (or a bug of the generator or
the oracle): `linnet fuzz --seed 0 --count 20 --out found` reduces it and writes a report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from linnet.testing.child_env import child_env

from budget import scaled

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[2]
COUNT = scaled(20)


def test_fixed_seed_fuzzing_finds_nothing() -> None:
    env = child_env(ROOT)
    done = subprocess.run([sys.executable, "-m", "linnet", "fuzz", "--seed", "0", "--count",
                           str(COUNT), "--jobs", "2", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    report = json.loads(done.stdout)
    assert report["programs"] == COUNT and report["cases"] >= COUNT
    found = [f"{f['key']}: {f['program']} case {f['case']}: {f['detail']}"
             for f in report["findings"]]
    assert not found, "\n".join(found)
    assert done.returncode == 0, done.stderr[-2000:]
