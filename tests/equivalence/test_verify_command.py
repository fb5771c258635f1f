"""`linnet verify`: tables, verdicts, shrinking, and exit statuses.

`linnet.cli.verify.main` runs the command alone (until `linnet/cli/main.py` registers it, after
which `linnet verify` is the same command). The wrong softmax of `wrong_softmax.linnet` is
caught only once the compiler really runs kernels; the shrinking test plants a wrong kernel
in the harness, so it checks the command whatever the compiler does; the planted kernels
live in this process, so those tests pass `--in-process` (sizes run in a child otherwise:
`test_verify_crashes.py`). Tests that check what is reported of agreeing kernels pass
`--in-process` too: a child imports torch, Triton and JAX again, and the wrong softmax and
the Pallas kernels below run there.
"""

from __future__ import annotations

import torch

from linnet.cli.verify import main
from linnet.fuzz import harness

from kernel_cases import HERE, example

WRONG = str(HERE / "wrong_softmax.linnet")


def test_wrong_softmax_is_caught_and_shrunk_to_one_element(capsys) -> None:
    assert main(["verify", WRONG, "--examples", "3"]) == 1
    out = capsys.readouterr().out
    assert "op softmax (kernel row_softmax)" in out
    assert "DISAGREE" in out
    assert "smallest failing sizes found: R=1 C=1 (x: f32[1, 1]" in out


def test_agreeing_kernel_exits_0_with_a_table(capsys) -> None:
    assert main(["verify", example("relu"), "--examples", "3", "--seed", "1",
                 "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "op relu (kernel relu_blocks)" in out
    assert "sizes" in out and "verdict" in out
    assert "N=1 " in out  # the all-ones size comes first
    assert "3 sizes tried: all agree" in out


def test_tuple_results_and_every_kernel_op(capsys) -> None:
    assert main(["verify", example("column_stats"), "--examples", "2", "--max-dim", "40",
                 "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "op column_stats (kernel column_stats_tiles)" in out
    assert "2 sizes tried: the forward pass agrees" in out  # no grad clause: body's gradient


def test_entry(capsys) -> None:
    assert main(["verify", example("matmul"), "--entry", "matmul_any", "--examples", "2",
                 "--max-dim", "40", "--in-process"]) == 0
    assert "entry matmul_any" in capsys.readouterr().out


def _planted(monkeypatch, wrong_from: int) -> None:
    """Make every non-exact compile of softmax return a 'kernel' that is 1% off when the
    rows are longer than `wrong_from`, and right otherwise."""
    original = harness.compiled

    def main_(x):
        y = torch.softmax(x, dim=1)
        return (y * 1.01 if x.shape[1] > wrong_from else y,)

    def fake(spec, values, numerics, tuning=False):
        if numerics == "exact":
            return original(spec, values, numerics)
        return main_, "@triton.jit  # planted"

    monkeypatch.setattr(harness, "compiled", fake)


def test_shrinks_to_the_smallest_failing_sizes(monkeypatch, capsys) -> None:
    _planted(monkeypatch, wrong_from=16)
    assert main(["verify", example("softmax"), "--examples", "8", "--seed", "2",
                 "--max-dim", "300", "--in-process"]) == 1
    out = capsys.readouterr().out
    assert "DISAGREE" in out
    assert "smallest failing sizes found: R=1 C=17 (x: f32[1, 17]" in out
    assert "forward  result: max abs" in out


def test_planted_kernel_that_agrees_passes(monkeypatch, capsys) -> None:
    _planted(monkeypatch, wrong_from=10_000)
    assert main(["verify", example("softmax"), "--examples", "3", "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "the forward pass agrees" in out and "never ran" not in out


def test_kernel_that_raises_is_a_failure(monkeypatch, capsys) -> None:
    def broken(x):
        raise RuntimeError("launch failed")

    original = harness.compiled
    monkeypatch.setattr(harness, "compiled", lambda spec, values, numerics, tuning=False: (
        original(spec, values, numerics) if numerics == "exact" else (broken, "@triton.jit")))
    assert main(["verify", example("relu"), "--examples", "2", "--in-process"]) == 1
    out = capsys.readouterr().out
    assert "ERROR" in out or "DISAGREE" in out
    assert "the kernel raised RuntimeError: launch failed" in out


def test_usage_errors_exit_2(tmp_path, capsys) -> None:
    assert main(["verify", str(tmp_path / "missing.linnet")]) == 2
    assert main(["verify", example("relu"), "--op", "relu", "--entry", "main"]) == 2
    assert main(["verify", example("relu"), "--op", "nope"]) == 2
    assert main(["verify", example("relu"), "--entry", "nope"]) == 2
    assert main(["verify", example("relu"), "--op", "scale"]) == 2  # binds no kernel
    assert main(["verify", example("relu"), "--op", "main"]) == 2  # an entry
    assert main(["verify", example("relu"), "--examples", "0"]) == 2
    assert main(["verify", example("relu"), "--target", "onnx"]) == 2
    err = capsys.readouterr().err
    assert "no op named `nope`" in err and "binds no kernel" in err


def test_program_with_errors_exits_1_with_diagnostics(tmp_path, capsys) -> None:
    path = tmp_path / "bad.linnet"
    path.write_text("module bad\nfn f(x: f32, y: bf16) -> f32 {\n    return x + y\n}\n")
    assert main(["verify", str(path)]) == 1
    err = capsys.readouterr().err
    assert "error[E2103]" in err and "bad.linnet:3:12" in err


def test_no_kernel_ops_exits_0(tmp_path, capsys) -> None:
    path = tmp_path / "plain.linnet"
    path.write_text("module plain\nop twice(x: f32) -> f32 {\n    return x * 2.0\n}\n")
    assert main(["verify", str(path)]) == 0
    assert "nothing to verify" in capsys.readouterr().out


def test_pallas_kernels_are_verified_with_target_jax(capsys, monkeypatch) -> None:
    """`--target jax`: the same checks through Pallas (its interpreter without a GPU), both
    files in one command (one child, which imports JAX once)."""
    monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")  # restored after the test
    assert main(["verify", example("column_stats"), WRONG, "--target", "jax", "--examples",
                 "2", "--max-dim", "40"]) == 1
    stats, wrong = capsys.readouterr().out.split("op softmax")
    assert "op column_stats (kernel column_stats_tiles)" in stats and "Pallas" in stats
    assert "2 sizes tried: the forward pass agrees" in stats
    assert "DISAGREE" in wrong and "smallest failing sizes found: R=1 C=1" in wrong
