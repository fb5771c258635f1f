"""Spec programs 163-166 (optional params, buffers and subs read with `match`) on every
target: each entry, compiled for checkpoints holding none, all or some of the optional
members, runs on the interpreter, PyTorch, JAX, ONNX and StableHLO with the same random
weights, and every target agrees with the interpreter; `--grad` of `loss` too. The
interpreter's own values are checked against NumPy in test_optional_model.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.check.instance import analyze_program
from linnet.passes.front.block_entry import root_manifest
from linnet.pipeline import compile_source
from linnet.syntax.program import load_program
from linnet.fuzz.backends import as_numpy, compile_entry, loader, to_torch

VALID = Path(__file__).resolve().parents[1] / "spec" / "valid"
PROGRAMS = {  # the spec program, its entries, the shape of each entry's one input
    "163_optional_params": (("main", "loss"), (4,)),
    "164_optional_subs": (("main", "loss"), (4,)),
    "165_optional_generic": (("main", "loss"), (2, 4)),
    "166_optional_state": (("prefill", "decode", "loss"), (4,)),
}
TARGETS = ("torch", "jax", "onnx", "stablehlo")
CHECKPOINTS = ("none", "all", "alternate")


def _path(stem: str) -> Path:
    return VALID / f"{stem}.linnet"


def _checkpoint(stem: str, which: str) -> list[str]:
    """The paths a checkpoint holds: every required param and buffer, and none, all or
    every other one of the optional ones (in manifest order)."""
    text = _path(stem).read_text()
    manifest = root_manifest(analyze_program(load_program(str(_path(stem)), text)), None, {})
    weights = [p for p in manifest.parameters if p.kind != "state"]
    optional = [p.path for p in weights if p.optional]
    chosen = {"none": [], "all": optional, "alternate": optional[::2]}[which]
    return [p.path for p in weights if not p.optional] + chosen


def _values(compiled, shape: tuple[int, ...], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
    out = [x]
    for p in compiled.parameters.inputs:
        if p.dtype == "i64":
            out.append(np.full(p.shape, 2, np.int64))
        else:
            out.append(rng.uniform(-1.0, 1.0, p.shape).astype(np.float32))
    return out


def _run(stem: str, entry: str, target: str, paths: list[str], values, grad: bool):
    text = _path(stem).read_text()
    compiled = compile_entry(text, str(_path(stem)), entry, {}, target, grad=grad,
                             present=paths)
    return [as_numpy(r) for r in loader(target)(compiled, entry)(*map(to_torch, values))]


CASES = [(stem, entry, which) for stem, (entries, _) in PROGRAMS.items()
         for entry in entries for which in CHECKPOINTS]


@pytest.mark.parametrize("stem,entry,which", CASES, ids=lambda v: str(v))
def test_every_target_agrees_with_the_interpreter(stem: str, entry: str, which: str) -> None:
    pytest.importorskip("jax")
    pytest.importorskip("onnxruntime")
    paths = _checkpoint(stem, which)
    compiled = compile_source(None, path=str(_path(stem)), entry=entry, present=paths)
    inputs = compiled.parameters.inputs
    assert all(p.path in paths for p in inputs if p.kind != "state")
    if which == "none":
        assert not any(p.optional for p in inputs)
    trained = len([p for p in inputs if p.trainable])
    values = _values(compiled, PROGRAMS[stem][1], seed=len(paths))
    for grad in ((False, True) if entry == "loss" else (False,)):
        want = _run(stem, entry, "interpreter", paths, values, grad)
        assert len(want) == 1 + (1 + trained if grad else 0) \
            + len(compiled.parameters.assigned)
        for target in TARGETS:
            got = _run(stem, entry, target, paths, values, grad)
            assert len(got) == len(want), (target, grad)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                           rtol=1e-4, atol=1e-5, err_msg=f"{target} {grad}")


def test_the_checkpoint_chooses_each_arm() -> None:
    """164 with and without the head: the results differ, so the `match` was not the same
    arm both times."""
    stem = "164_optional_subs"
    bare = _checkpoint(stem, "none")
    full = _checkpoint(stem, "all")
    x = np.ones(4, np.float32)
    outs = []
    for paths in (bare, full):
        compiled = compile_source(None, path=str(_path(stem)), entry="main", present=paths)
        values = [x] + [np.full(p.shape, 2 if p.dtype == "i64" else 0.5,
                                np.int64 if p.dtype == "i64" else np.float32)
                        for p in compiled.parameters.inputs]
        outs.append(_run(stem, "main", "interpreter", paths, values, False))
    y = np.tanh(np.tanh(1.0 * 0.5) * 0.5)
    np.testing.assert_allclose(outs[0][0], np.full(4, y), rtol=1e-6)
    assert not np.allclose(outs[1][0], outs[0][0])
    assert len(outs[1]) == 1 + 3  # the next `opened` of each gate: layers' two and head's
