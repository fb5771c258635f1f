"""`linnet verify --root B`: a block entry's kernels against its bodies, with random weights
for its parameters (present optional members included) as inputs after its own."""

from __future__ import annotations

from linnet.cli.verify import main

from kernel_cases import HERE

PROGRAM = HERE / "block_softmax.linnet"
ARGS = ["--examples", "2", "--max-dim", "20"]


def test_a_block_entry_is_verified_with_its_weights(capsys) -> None:
    assert main(["verify", str(PROGRAM), "--root", "Net", *ARGS, "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "entry Net.main" in out and "2 sizes tried: all agree" in out
    assert "w: f32[6]" in out and "bias" not in out and "head.w" not in out
    assert "the kernel never ran" not in out


def test_present_optional_members_are_inputs_too(capsys) -> None:
    assert main(["verify", str(PROGRAM), "--entry", "main", "--bind", "C=5", "--present",
                 "bias", "--present", "head.w", *ARGS]) == 0  # in a child: the spec remade
    out = capsys.readouterr().out
    assert "w: f32[5], bias: f32[5], head.w: f32[5]" in out
    assert "2 sizes tried: all agree" in out


def test_a_wrong_kernel_under_a_block_is_caught(capsys, tmp_path) -> None:
    wrong = tmp_path / "block_softmax.linnet"
    wrong.write_text(PROGRAM.read_text().replace("e / sum[c] e[c], mask",
                                                 "e / sum[c] e[c] * 1.01, mask"))
    assert main(["verify", str(wrong), "--root", "Net", *ARGS, "--in-process"]) == 1
    assert "DISAGREE" in capsys.readouterr().out


def test_mistakes_are_usage_errors(capsys) -> None:
    assert main(["verify", str(PROGRAM), "--root", "Net", "--bind", "Q=2", *ARGS]) == 2
    assert "--bind Q" in capsys.readouterr().err
    assert main(["verify", str(PROGRAM), "--root", "Net", "--entry", "nope", *ARGS]) == 2
    assert "no entry named `nope` in the block `Net`" in capsys.readouterr().err
