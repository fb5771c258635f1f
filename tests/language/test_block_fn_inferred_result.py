"""A block function without `-> T` returns what its body returns, as a module-level `fn`:
inferred when a sibling or a parent calls it first, in terms of the sub's arguments there,
for `fn`s and entries, with states (spec program 175)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.check.frontend import check_program
from linnet.pipeline import compile_source
from linnet.fuzz.backends import as_numpy, compile_entry, loader

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "spec" / "valid" / "175_block_fn_inferred_result.linnet"
BIND = {"H": 3, "B": 2}


def _weights(rng) -> dict[str, np.ndarray]:
    w = {}
    for name in ("first", "rest.0", "rest.1"):
        w[f"{name}.w"] = rng.uniform(-1, 1, 3).astype(np.float32)
        w[f"{name}.calls"] = np.array([2], dtype=np.int64)
    w["bias"] = rng.uniform(-1, 1, 3).astype(np.float32)
    return w


def _reference(x: np.ndarray, w: dict) -> tuple[np.ndarray, float]:
    y = x * w["first.w"] + w["bias"]
    for k in range(2):
        y = y + y * w[f"rest.{k}.w"]
    v = w["bias"] * w["first.w"]
    return y * v, float((w["bias"] * w["first.w"]).sum())


def test_the_program_checks_and_its_manifest_is_in_order() -> None:
    assert check_program(str(PROGRAM)).diagnostics == []
    manifest = compile_source(PROGRAM.read_text(), path=str(PROGRAM), entry="run",
                              bind=BIND).parameters
    assert [p.path for p in manifest.inputs] == list(_weights(np.random.default_rng(0)))
    assert manifest.assigned == ("first.calls", "rest.0.calls", "rest.1.calls")


@pytest.mark.parametrize("target", ["interpreter", "torch", "jax", "onnx", "stablehlo"])
def test_the_entry_with_an_inferred_tuple_result_spreads_it_before_the_states(
        target: str) -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    w = _weights(rng)
    compiled = compile_entry(PROGRAM.read_text(), str(PROGRAM), "run", BIND, target)
    got = loader(target)(compiled, "run")(*(torch.from_numpy(v) for v in (x, *w.values())))
    out, s = _reference(x.astype(np.float64), w)
    assert len(got) == 2 + 3
    np.testing.assert_allclose(as_numpy(got[0]), out, rtol=1e-5, atol=1e-6)
    assert float(as_numpy(got[1])) == pytest.approx(s, rel=1e-5)
    assert [int(as_numpy(c)[0]) for c in got[2:]] == [3, 3, 3]  # each forward once


def test_grad_of_an_entry_without_a_result_type() -> None:
    """`loss` has no `-> T`: --grad reads the loss type from what it returns (a
    module-level entry too)."""
    compiled = compile_entry(PROGRAM.read_text(), str(PROGRAM), "loss", BIND, "torch",
                             grad=True)
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    w = _weights(rng)
    got = loader("torch")(compiled, "loss")(*(torch.from_numpy(v) for v in (x, *w.values())))
    out, s = _reference(x.astype(np.float64), w)
    assert float(as_numpy(got[0])) == pytest.approx(s + float((out * out).sum()), rel=1e-5)
    plain = "module q\nentry loss(x: Tensor[4; f32]) {\n    return sum[i] x[i] * x[i]\n}\n"
    text = compile_entry(plain, "q.linnet", "loss", {}, "torch", grad=True)
    loss, dx = loader("torch")(text, "loss")(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    assert float(loss) == 30.0 and as_numpy(dx).tolist() == [2.0, 4.0, 6.0, 8.0]


def test_a_mistake_in_an_inferred_function_is_reported_once() -> None:
    text = """module m
block Leaf {
    param w: Tensor[4; f32]
    pub fn forward(x: Tensor[4; f32]) {
        return x * w + true
    }
}
block Root {
    sub leaf: Leaf
    pub entry run(x: Tensor[4; f32]) {
        return leaf.forward(x)
    }
}
"""
    codes = [d.code for d in check_program("m.linnet", text).diagnostics]
    assert codes == ["E2103"]


def test_a_call_sees_the_result_with_the_sub_arguments() -> None:
    text = PROGRAM.read_text().replace("let out[b, h] = y[b, h] * v[h]",
                                       "let wrong: Tensor[B, 4; f32] = first.forward(x)\n"
                                       "        let out[b, h] = y[b, h] * v[h]")
    found = [(d.code, d.message) for d in check_program("m.linnet", text).diagnostics]
    assert [code for code, _ in found] == ["E2202"]
