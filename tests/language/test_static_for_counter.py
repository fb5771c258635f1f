"""`static for i in a..b`: the body is unrolled, and `i` is an `i64` scalar at run time.

So the counter joins i64 arithmetic and reads positions, but is no dimension (E2123), no
loop bound (E2123, E2121), no contextual literal (an `f32` times it is E2103) and no
position in a sub array (E2101). Each unrolled copy still knows its value: positions fold.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.check.frontend import check_program
from linnet.pipeline import compile_source
from linnet.fuzz.backends import as_numpy, compile_entry, loader

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "spec" / "valid" / "170_static_for_counter.linnet"


def _codes(body: str, params: str = "x: Tensor[4; f32]") -> list[str]:
    text = f"module m\n\nentry main({params}) -> Tensor[4; f32] {{\n{body}\n}}\n"
    return [d.code for d in check_program("<t>.linnet", text).diagnostics]


@pytest.mark.parametrize("misuse, code", [
    ("let z = fill<f32>([i], 0.0)", "E2123"),
    ("let z: Tensor[i; f32] = x", "E2123"),
    ("let r = iota(i)", "E2123"),
    ("for j in 0..i {\n        }", "E2123"),
    ("static for j in 0..i {\n        }", "E2121"),
    ("acc = acc * i", "E2103"),
])
def test_the_counter_is_a_runtime_i64(misuse: str, code: str) -> None:
    body = f"    var acc = x\n    static for i in 0..3 {{\n        {misuse}\n    }}\n    return acc"
    assert _codes(body) == [code]


def test_the_counter_reads_positions_and_joins_i64_arithmetic() -> None:
    body = ("    var acc = x\n    var n: i64 = 0\n    static for i in 0..3 {\n"
            "        acc = acc + x[i + 1] * cast<f32>(i)\n        n = n + i * 2\n    }\n"
            "    return acc * cast<f32>(n)")
    assert _codes(body) == []


def test_the_counter_is_no_position_in_a_sub_array() -> None:
    text = (ROOT / "tests" / "spec" / "invalid"
            / "E2101_static_for_counter_picks_a_sub.linnet").read_text()
    found = [(d.code, d.message) for d in check_program("<t>.linnet", text).diagnostics]
    assert found == [("E2101", "sub array `layers` indexed")]


def test_the_counter_folds_to_fixed_positions_and_runs() -> None:
    text = """module m
entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    var acc = x
    static for i in 0..3 {
        acc = acc + x[i + 1] * cast<f32>(i)
    }
    return acc
}
"""
    compiled = compile_entry(text, "<t>.linnet", "main", {}, "torch")
    assert "dyn_index" not in compiled
    assert "items=(('at', 3),)" in compiled
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    (y,) = loader("torch")(compiled, "main")(x)
    assert y.tolist() == [1.0 + 3.0 + 8.0, 2.0 + 3.0 + 8.0, 3.0 + 3.0 + 8.0, 4.0 + 3.0 + 8.0]


def test_a_counter_position_out_of_range_is_read_at_run_time() -> None:
    """The checker cannot bound a run-time position: `x[i + 2]` at i = 2 is position 4 of
    four. The copy reads it as the run-time position it is (undefined), never as a fixed
    index past the axis."""
    text = """module m
entry main(x: Tensor[4; f32]) -> f32 {
    var acc: f32 = 0.0
    static for i in 0..3 {
        acc = acc + x[i + 2]
    }
    return acc
}
"""
    body = compile_source(text, entry="main", target="torch").dump("elaborate")
    assert "items=(('at', 2),)" in body and "items=(('at', 3),)" in body
    assert "dyn_index(x, " in body and "('at', 4)" not in body


def test_the_block_program_counts_into_its_state_on_every_target() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(2).astype(np.float32)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    total = np.array([5], dtype=np.int64)
    y = x.astype(np.float64) + sum(w[k] * k for k in range(3))
    for target in ("interpreter", "torch", "jax", "onnx", "stablehlo"):
        compiled = compile_entry(PROGRAM.read_text(), str(PROGRAM), "run", {"K": 3, "H": 2},
                                 target)
        loss, after = loader(target)(compiled, "run")(
            *(torch.from_numpy(v) for v in (x, w, total)))
        np.testing.assert_allclose(float(as_numpy(loss)), float((y * y).sum()), rtol=1e-5)
        assert as_numpy(after).tolist() == [5 + 0 + 1 + 2], target
