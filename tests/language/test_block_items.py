"""Blocks through the front end and the elaboration: syntax, the root block, the manifest,
`linnet inspect --parameters`, a library block, and a nested program run on the
interpreter against values worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.cli.main import main
from linnet.diagnostics import CompileError
from linnet.check.frontend import check_program
from linnet.pipeline import compile_file, compile_source
from linnet.syntax.parser import parse
from linnet.syntax.printer import print_module
from linnet.fuzz.backends import as_numpy, compile_entry, loader

ROOT = Path(__file__).resolve().parents[2]
NESTING = ROOT / "tests" / "spec" / "valid" / "161_block_nesting.linnet"
EXAMPLE = ROOT / "examples" / "block_model.linnet"

TWO_ROOTS = """module two

block A<H: Dim> {
    param w: Tensor[H; f32]

    pub entry run(x: Tensor[H; f32]) -> Tensor[H; f32] {
        return x * w
    }
}

block B<H: Dim> {
    param w: Tensor[H; f32]

    pub entry run(x: Tensor[H; f32]) -> Tensor[H; f32] {
        return x + w
    }
}
"""


def _codes(text: str) -> list[str]:
    return [d.code for d in check_program("<t>.linnet", text).diagnostics]


def test_block_syntax_prints_back_to_the_same_tree() -> None:
    text = NESTING.read_text()
    tree, diagnostics = parse(text, "a")
    assert diagnostics == []
    again, _ = parse(print_module(tree), "b")
    assert again == tree
    assert "static for pair in pairs {" in print_module(tree)
    assert "scale.apply<1>(rows)" in print_module(tree)


def test_member_words_are_reserved_where_a_name_is_meant() -> None:
    text = "module m\n\nfn f(state: f32) -> f32 {\n    return state\n}\n"
    assert _codes(text) == ["E1004"]
    assert _codes("module m\n\nparam w: f32\n") == ["E1101"]


def test_a_method_call_on_a_value_keeps_its_habit_message() -> None:
    text = "module m\n\nfn f(x: Tensor[4; f32]) -> f32 {\n    return x.sum()\n}\n"
    (d,) = check_program("<t>.linnet", text).diagnostics
    assert d.code == "E1101" and "no methods or fields: `x.sum`" in d.message


def test_a_function_parameter_may_not_hide_a_member() -> None:
    text = TWO_ROOTS.replace("run(x: Tensor[H; f32]) -> Tensor[H; f32] {\n        return x * w",
                             "run(w: Tensor[H; f32]) -> Tensor[H; f32] {\n        return w")
    assert _codes(text) == ["E1205"]


def test_several_roots_need_root() -> None:
    with pytest.raises(CompileError) as err:
        compile_source(TWO_ROOTS, path="two.linnet", bind={"H": 4})
    assert err.value.diagnostics[0].code == "E4103"
    with pytest.raises(CompileError) as err:
        compile_source(TWO_ROOTS, path="two.linnet", root="C", bind={"H": 4})
    assert err.value.diagnostics[0].code == "E4103" and "no block named `C`" in str(err.value)
    compiled = compile_source(TWO_ROOTS, path="two.linnet", root="B", bind={"H": 4},
                              target="torch")
    assert compiled.parameters.root == "B"
    assert [p.path for p in compiled.parameters.inputs] == ["w"]


def test_root_on_the_command_line(tmp_path, capsys) -> None:
    path = tmp_path / "two.linnet"
    path.write_text(TWO_ROOTS)
    assert main(["torch", str(path), "--bind", "H=4"]) == 1
    assert "error[E4103]" in capsys.readouterr().err
    assert main(["torch", str(path), "--root", "A", "--bind", "H=4"]) == 0
    assert "def main(*inputs)" in capsys.readouterr().out


def test_inspect_lists_the_manifest(capsys) -> None:
    assert main(["inspect", "--parameters", str(NESTING)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "pairs[*].leaves[*].w: param Tensor[H; f32] x D x 2"
    assert lines[-2:] == ["scale.s: param f32", "trips: state Tensor[1; i64]"]
    assert main(["inspect", "--parameters", "--json", str(NESTING), "--bind", "H=3"]) == 0
    data = json.loads(capsys.readouterr().out)
    first = data["parameters"][0]
    assert (data["root"], first["path"], first["shape"], first["input"]) == (
        "Stack", "pairs.0.leaves.0.w", [3], "pairs__0__leaves__0__w")
    capsys.readouterr()
    assert main(["inspect", str(NESTING)]) == 0  # no flag: what the file declares
    assert capsys.readouterr().out.startswith(f"{NESTING}: module ")
    assert main(["inspect", str(NESTING), "--bind", "H=3"]) == 2  # --bind is --parameters'
    assert main(["inspect", "--parameters", str(NESTING), "--bind", "Q=1"]) == 2


def test_onnx_names_inputs_by_path() -> None:
    model = compile_file(EXAMPLE, target="onnx", entry="main", bind={"L": 2}).text
    names = [i.name for i in model.graph.input]
    assert names[:4] == ["x", "embed", "layers.0.up", "layers.0.down"]
    assert names[-1] == "steps"


def _leaf(y, w):
    return 2 * y * w


def test_nested_blocks_run(tmp_path) -> None:
    """`Stack.run` with H = 3: three trips over two pairs; the pair runs its leaves once,
    or twice on trip 1; then the scale. Each state counts its updates."""
    compiled = compile_entry(NESTING.read_text(), str(NESTING), "run", {"H": 3},
                             "interpreter")
    manifest = compile_file(NESTING, entry="run", bind={"H": 3}).parameters
    rng = np.random.default_rng(0)
    x = rng.standard_normal(3).astype(np.float32)
    values = {}
    for p in manifest.inputs:
        if p.kind == "state":
            values[p.path] = np.array([5], dtype=np.int64)
        else:
            values[p.path] = rng.uniform(0.5, 1.0, p.shape).astype(np.float32)
    results = loader("interpreter")(compiled, "run")(
        torch.from_numpy(x), *(torch.from_numpy(v) for v in values.values()))
    y = x.astype(np.float64)
    for trip in range(3):
        for k in range(2):
            for _ in range(2 if trip == 1 else 1):
                for j in range(2):
                    y = _leaf(y, values[f"pairs.{k}.leaves.{j}.w"]) + values[f"pairs.{k}.bias"]
    y = y * values["scale.s"]
    np.testing.assert_allclose(as_numpy(results[0]), y, rtol=1e-5)
    counts = dict(zip(manifest.assigned, (int(as_numpy(r)[0]) for r in results[1:])))
    assert counts == {"pairs.0.leaves.0.uses": 9, "pairs.0.leaves.1.uses": 9,
                      "pairs.0.runs": 8, "pairs.1.leaves.0.uses": 9,
                      "pairs.1.leaves.1.uses": 9, "pairs.1.runs": 8, "trips": 8}


def test_a_tree_too_large_to_unroll_is_reported() -> None:
    text = """module wide

block Leaf {
    param w: f32
}

block Tree<N: Dim> {
    sub leaves: [Leaf; N]

    pub entry run(x: f32) -> f32 {
        return x
    }
}
"""
    assert compile_source(text, path="wide.linnet", bind={"N": 3}).parameters.inputs[2].path \
        == "leaves.2.w"
    with pytest.raises(CompileError) as err:
        compile_source(text, path="wide.linnet", bind={"N": 10**9})
    assert err.value.diagnostics[0].code == "E2190" and "block instances" in str(err.value)
