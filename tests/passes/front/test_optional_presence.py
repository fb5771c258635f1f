"""Optional block members: which are present (per instance, per array element), what the
manifest says of them, and the command-line flags that name a checkpoint's contents."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from linnet.check.instance import analyze_program
from linnet.cli.main import main
from linnet.check.frontend import check_program
from linnet.passes.front.block_entry import root_manifest
from linnet.passes.front.block_instances import instance_tree
from linnet.syntax.program import load_program

ROOT = Path(__file__).resolve().parents[3]
MODEL = ROOT / "examples" / "optional_model.linnet"
SUBS = ROOT / "tests" / "spec" / "valid" / "164_optional_subs.linnet"
REQUIRED = ["embed", "layers.0.up", "layers.0.down", "layers.1.up", "layers.1.down"]


def _analysis(path: Path):
    analysis = analyze_program(load_program(str(path), path.read_text()))
    assert analysis.diagnostics == []
    return analysis


def _present(path: Path, paths) -> dict[str, bool]:
    manifest = root_manifest(_analysis(path), None, {}, frozenset(paths))
    return {p.path: p.input is not None for p in manifest.parameters}


def test_each_array_element_has_its_own_optional_param() -> None:
    got = _present(MODEL, REQUIRED + ["layers.0.up_bias"])
    assert got["layers.0.up_bias"] is True and got["layers.1.up_bias"] is False
    got = _present(MODEL, REQUIRED + ["layers.1.up_bias"])
    assert got["layers.0.up_bias"] is False and got["layers.1.up_bias"] is True


def test_an_optional_sub_needs_every_required_param() -> None:
    assert _present(MODEL, REQUIRED + ["head.up"])["head.up"] is False
    got = _present(MODEL, REQUIRED + ["head.up", "head.down"])
    assert got["head.up"] and got["head.down"] and got["head.calls"]  # states follow
    assert got["head.up_bias"] is False  # optional inside: not required, not present
    got = _present(MODEL, REQUIRED + ["head.up", "head.down", "head.up_bias"])
    assert got["head.up_bias"] is True
    assert _present(MODEL, ["head.up_bias"])["head.up_bias"] is False  # its sub is absent


def test_nested_optional_subs() -> None:
    """`layers.1.extra` (a Head) is there with its `w`; its own optional `gate` only with
    `gate.w`; an optional member under an absent sub is absent whatever the paths say."""
    base = ["layers.0.w", "layers.1.w"]
    got = _present(SUBS, base + ["layers.1.extra.w", "layers.0.extra.gate.w"])
    assert got["layers.1.extra.w"] and not got["layers.1.extra.gate.w"]
    assert not got["layers.0.extra.w"] and not got["layers.0.extra.gate.w"]
    got = _present(SUBS, base + ["layers.1.extra.w", "layers.1.extra.gate.w"])
    assert got["layers.1.extra.gate.w"] and got["layers.1.extra.gate.opened"]


def test_no_checkpoint_means_every_optional_member_absent() -> None:
    manifest = root_manifest(_analysis(MODEL), None, {})
    optional = [p.path for p in manifest.parameters if p.optional]
    assert optional == ["out_bias", "layers.0.up_bias", "layers.1.up_bias", "head.up",
                        "head.up_bias", "head.down", "head.calls"]
    assert all(p.input is None for p in manifest.parameters if p.optional)
    assert all(p.input is not None for p in manifest.parameters if not p.optional)


def test_the_instance_tree_marks_absent_subs() -> None:
    analysis = _analysis(MODEL)
    info = analysis.root.globals.blocks["Model"]
    tree = instance_tree(info, {"L": 2, "H": 4, "V": 5}, {}, frozenset(["head.up"]))
    assert tree.children["head"].present is False and tree.children["head"].optional
    tree = instance_tree(info, {"L": 2, "H": 4, "V": 5}, {},
                         frozenset(["head.up", "head.down", "out_bias"]))
    assert tree.children["head"].present and tree.chosen == frozenset({"out_bias"})


def test_an_optional_param_is_an_optional_value() -> None:
    text = """module m

fn scaled(x: Tensor[4; f32], s: Tensor[4; f32]?) -> Tensor[4; f32] {
    return match s { some(v) => x * v  none => x }
}

block B {
    param s: Tensor[4; f32]? = none

    pub entry run(x: Tensor[4; f32]) -> Tensor[4; f32] {
        let a = scaled(x, s)
        return x + s
    }
}
"""
    (d,) = check_program("m.linnet", text).diagnostics  # passing it on is fine
    assert (d.code, d.message) == ("E2104", "`+` is not defined for Tensor[4; f32]?")
    assert text[d.span.start:d.span.end] == "x + s"


def test_optional_sub_patterns() -> None:
    """A tuple pattern, a variant pattern, and a name that is taken are refused."""
    head = """module m

block Head {
    param w: Tensor[4; f32]

    pub fn forward(x: Tensor[4; f32]) -> Tensor[4; f32] {
        return x * w
    }
}

block Net {
    sub head: Head? = none
    param w: Tensor[4; f32]

    pub entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
        return match head { ARM => x  none => x }
    }
}
"""
    for arm, code, words in (("some((a, b))", "E2101", "does not match the optional sub"),
                             ("some(w)", "E1205", "`w` is already a name"),
                             ("some(x)", "E1205", "`x` is already a name")):
        (d,) = check_program("m.linnet", head.replace("ARM", arm)).diagnostics
        assert (d.code, words in d.message) == (code, True), d.message


# ------------------------------------------------------------------ the commands

def _inspect(capsys, *flags: str) -> dict[str, str]:
    capsys.readouterr()
    assert main(["inspect", "--parameters", str(MODEL), *flags]) == 0
    lines = capsys.readouterr().out.splitlines()
    return dict(line.split(": ", 1) for line in lines)


def test_inspect_marks_present_and_absent(capsys) -> None:
    got = _inspect(capsys)
    assert got["out_bias"] == "param Tensor[5; f32]? absent"
    assert got["embed"] == "param Tensor[5, 4; f32]"
    got = _inspect(capsys, "--present", "out_bias", "--present", "head.up",
                   "--present", "head.down")
    assert got["out_bias"].endswith("? present") and got["head.calls"].endswith("? present")
    assert got["head.up_bias"].endswith("? absent")


def test_weights_names_decide_presence(capsys, tmp_path) -> None:
    from safetensors.numpy import save_file
    weights = tmp_path / "model.safetensors"
    save_file({"layers.1.up_bias": np.zeros(8, np.float32),
               "head.up": np.zeros((8, 4), np.float32),
               "head.down": np.zeros((4, 8), np.float32)}, str(weights))
    got = _inspect(capsys, "--weights", str(weights))
    assert got["layers.1.up_bias"].endswith("present") and got["head.up"].endswith("present")
    assert got["layers.0.up_bias"].endswith("absent")
    assert main(["inspect", "--parameters", "--json", str(MODEL), "--weights", str(weights),
                 "--present", "out_bias"]) == 0
    listed = {p["path"]: p["present"] for p in json.loads(capsys.readouterr().out)["parameters"]}
    assert listed["out_bias"] and listed["head.down"] and not listed["head.up_bias"]


def test_the_compiling_commands_take_the_flags(capsys, tmp_path) -> None:
    out = tmp_path / "m.py"
    assert main(["torch", str(MODEL), "--entry", "main", "--present", "out_bias",
                 "-o", str(out)]) == 0
    header = out.read_text()
    assert "#     out_bias: param Tensor[5; f32]" in header
    assert "absent (optional): layers.0.up_bias, layers.1.up_bias, head.up" in header


def test_a_misspelled_present_path_is_reported(capsys, tmp_path) -> None:
    """As the library reports a checkpoint name the model lacks (a command-line mistake)."""
    assert main(["torch", str(MODEL), "--entry", "main", "--present", "out_bais",
                 "-o", str(tmp_path / "m.py")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "linnet torch: the checkpoint named by --present does not fit the model (1 problem):",
        "  out_bais: unexpected (the model has no such parameter; did you mean out_bias?)"]
    assert not (tmp_path / "m.py").exists()


def test_weights_with_missing_or_extra_names_are_reported(capsys, tmp_path) -> None:
    from safetensors.numpy import save_file
    weights = tmp_path / "model.safetensors"
    save_file({"embed": np.zeros((5, 4), np.float32), "extra": np.zeros(2, np.float32)},
              str(weights))
    assert main(["jax", str(MODEL), "--entry", "main", "--weights", str(weights),
                 "-o", str(tmp_path / "m.py")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("linnet jax: the checkpoint ") and "(5 problems):" in err[0]
    assert "  layers.0.up: missing (param Tensor[8, 4; f32])" in err
    assert "  extra: unexpected (the model has no such parameter)" in err


@pytest.mark.parametrize("command", ["torch", "inspect"])
def test_an_unreadable_weights_file_is_a_usage_error(capsys, tmp_path, command) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a checkpoint")
    flags = ["--parameters"] if command == "inspect" else ["--entry", "main"]
    for path, words in ((bad, "not a readable safetensors file"),
                        (tmp_path / "missing.safetensors", "no such file")):
        capsys.readouterr()
        assert main([command, *flags, str(MODEL), "--weights", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"linnet {command}: --weights {path}: {words}" in err


def test_help_documents_the_flags(capsys) -> None:
    for command in ("torch", "jax", "onnx", "stablehlo", "compile", "inspect"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        assert "--present PATH" in text and "--weights FILE" in text, command
