"""`make demo` (linnet/demo/) on small folders of its own: an example that does not check,
or whose run raises, is that example's failure on its line, the others still run, and the
last line counts the examples that agree; sizes for generic entries satisfy their `where`
clauses and let a kernel run; a root with optional members runs with them absent and
present. The whole demo over examples/ runs on CI (`.ci/run`), not here: it takes a
minute."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from linnet import demo  # noqa: E402
from linnet.demo.blocks import checkpoints  # noqa: E402
from linnet.demo.entries import choose_values, kernels_chosen  # noqa: E402
from linnet.fuzz.harness import target_spec  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

GOOD = """module good

entry main<N: Dim>(x: Tensor[N; f32]) -> f32 {
    return sum[i] x[i] * x[i]
}
"""
BAD = """module bad

entry main(x: Tensor[4; f32], h: Tensor[4; bf16]) -> Tensor[4; f32] {
    return x + h
}
"""
UNSATISFIABLE = """module odd

entry main<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] where N == 7 {
    return x
}
"""


def test_a_failing_example_is_reported_on_its_line_and_the_rest_run(tmp_path, capsys):
    for name, text in (("good", GOOD), ("bad", BAD), ("odd", UNSATISFIABLE)):
        (tmp_path / f"{name}.linnet").write_text(text)
    assert demo.main(tmp_path, jobs=1) == 1
    out = capsys.readouterr().out
    assert "Traceback" not in out
    assert out.rstrip().splitlines()[-1] == "1 of 3 examples agree; bad.linnet, odd.linnet do not"
    assert "error[E2103]" in out
    assert ("main: FAILED: RuntimeError: no sizes from (2, 3, 4, 5, 8, 16, 32) satisfy the "
            "`where` clauses of entry main") in out
    assert ("main at N=2: no kernels; against the generated PyTorch: ONNX agrees, StableHLO "
            "agrees, --grad (1 gradient, ONNX) agrees") in out


def test_generic_sizes_hold_the_where_clauses_and_choose_a_kernel() -> None:
    spec = target_spec(EXAMPLES / "attention.linnet", "attention_any")
    values = choose_values(spec, 0, kernels=lambda v: kernels_chosen(spec, v))
    assert values == {"B": 2, "H": 3, "L": 4, "S": 5, "D": 16}  # D raised: 128 % D == 0
    assert kernels_chosen(spec, values) == [
        "kernel attention_blocks<B=2, H=3, L=4, S=5, D=16, T=f32, BQ=64, BK=32>"]


def test_a_root_with_optional_members_runs_without_and_with_them() -> None:
    (absent, required), (present, every) = checkpoints(EXAMPLES / "optional_model.linnet",
                                                       {"L": 2, "H": 4, "V": 5})
    assert absent == " (optional members absent)"
    assert sorted(set(every) - set(required)) == [
        "head.down", "head.up", "head.up_bias", "layers.0.up_bias", "layers.1.up_bias",
        "out_bias"]
    assert present.endswith("present: head.down, head.up, head.up_bias, layers.0.up_bias, "
                            "layers.1.up_bias, out_bias)")
    assert tuple(every["layers.1.up_bias"].shape) == (8,)


def test_only_the_ops_an_entry_uses_are_said_to_keep_their_bodys_gradient() -> None:
    from linnet.demo.entries import ops_without_grad
    path = EXAMPLES / "matmul.linnet"
    assert ops_without_grad(path, "matmul_any") == ["matmul"]
    assert ops_without_grad(path, "matmul_bt_any") == ["matmul_bt"]
    assert ops_without_grad(EXAMPLES / "relu.linnet", "main") == []  # relu has a grad clause
