"""Regression programs: cases the fuzzer found, kept in `tests/fuzz/` once fixed.

Why a convention: a reduced case is a program, an entry, its bindings and inputs. Kept as
files it runs again on every CI run through every target against the oracle
(`tests/fuzz/test_regressions.py`), so the bug stays fixed. For a case named NAME:

- `NAME.linnet`: the program;
- `NAME.json`: `{"entry": ..., "generics": {...}, "kernels": false, "grad": false,
  "about": "what went wrong"}` (`kernels`/`grad`: the plan that found it; a block
  entry's `"present": [paths]` when its checkpoint held some);
- `NAME.npz`: the inputs by parameter name (bf16 stored as f32); without it the harness
  draws inputs from `"seed"` (default 0).

`save_regression(report_dir, name)` makes the three files from a folder `linnet fuzz
--out` wrote (`case.linnet`, `bind.json`, `inputs.npz`).
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
from pathlib import Path

import numpy as np

from .case import Case
from .execute import Plan
from . import harness
from .oracle.dtypes import NUMPY
from .sources import case_array

__all__ = ["load_regression", "save_regression", "regressions"]

FOLDER = Path(__file__).resolve().parents[2] / "tests" / "fuzz"


def regressions(folder: Path = FOLDER) -> list[Path]:
    """The regression programs of a folder, in a fixed order."""
    return sorted(folder.glob("*.linnet"))


def load_regression(path: Path) -> tuple[Case, Plan]:
    """The case stored at `path` (NAME.linnet beside NAME.json and NAME.npz) and the plan
    to run it with."""
    text = path.read_text(encoding="utf-8")
    meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    entry, generics = meta["entry"], dict(meta.get("generics", {}))
    present = frozenset(meta["present"]) if meta.get("present") else None
    spec = harness.target_spec(str(path), entry, text)
    if spec.block is not None and present is not None:
        spec = dataclasses.replace(spec, block=spec.block.with_present(present))
    shapes = spec.shapes(generics)
    stored = path.with_suffix(".npz")
    if stored.exists():
        saved = np.load(stored)
        inputs = tuple(np.asarray(saved[name]).astype(NUMPY[dtype])
                       for (name, _), (_, dtype) in zip(spec.inputs(generics), shapes))
    else:
        drawn = harness.make_inputs(spec, generics, seed=random.Random(
            meta.get("seed", 0)).randrange(1 << 30), device="cpu")
        inputs = tuple(case_array(x, dtype) for x, (_, dtype) in zip(drawn, shapes))
    plan = Plan(kernels=bool(meta.get("kernels")), grad=bool(meta.get("grad")))
    return Case(text, entry, generics, inputs, present), plan


def save_regression(report_dir: Path | str, name: str, folder: Path = FOLDER, *,
                    about: str = "", kernels: bool = False, grad: bool = False) -> Path:
    """Copy a reduced case from a report folder into `folder` as NAME.linnet, NAME.json and
    NAME.npz; returns the path of NAME.linnet."""
    src = Path(report_dir)
    text = (src / "case.linnet").read_text(encoding="utf-8")
    report = (src / "report.md").read_text(encoding="utf-8") if (src / "report.md").exists() \
        else ""
    entry = report.split("entry `", 1)[1].split("`", 1)[0] if "entry `" in report else "main"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.linnet"
    target.write_text(text, encoding="utf-8")
    meta = {"entry": entry, "generics": json.loads((src / "bind.json").read_text()),
            "kernels": kernels, "grad": grad, "about": about}
    if (src / "present.json").exists() and json.loads((src / "present.json").read_text()):
        meta["present"] = json.loads((src / "present.json").read_text())
    target.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    if (src / "inputs.npz").exists():
        shutil.copyfile(src / "inputs.npz", target.with_suffix(".npz"))
    return target
