"""The pipeline as a list of passes: stages, dumps, verification, and editing it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from linnet.cli.main import main
from linnet.errors import UsageError
from linnet.ir import tensor as ir
from linnet.passes.manager import Instrumentation, Pass
from linnet.pipeline import all_passes, compile_source, pass_targets, passes_for

ROOT = Path(__file__).resolve().parents[1]
SOFTMAX = ROOT / "examples" / "softmax.linnet"


def _compile(**kw):
    return compile_source(SOFTMAX.read_text(), path=str(SOFTMAX), entry="softmax_any",
                          bind={"R": 3, "C": 5}, **kw)


def _run(text: str, *inputs):
    namespace: dict = {}
    exec(compile(text, "<generated>", "exec"), namespace)
    return namespace["main"](*inputs)


def test_every_stage_is_kept_in_order():
    compiled = _compile()
    assert [s.name for s in compiled.result.stages] == [p.name for p in passes_for("torch")]
    lowered = compiled.stage("lower-index-notation")
    kinds = {type(b.expr).__name__ for f in lowered.funcs for b in f.body.binds}
    assert "Comprehension" not in kinds
    assert any(isinstance(b.expr, ir.Comprehension)
               for f in compiled.stage("elaborate").funcs for b in f.body.binds)


def test_removing_a_pass_still_compiles():
    passes = [p for p in passes_for("torch") if p.name != "cse"]
    compiled = _compile(passes=passes)
    x = torch.randn(3, 5)
    (y,) = _run(compiled.text, x)
    assert torch.allclose(y, torch.softmax(x, dim=1), atol=1e-6)


def test_inserting_a_pass_runs_it():
    seen = []

    def count_funcs(program, options):
        seen.append(len(program.funcs))
        return program

    spy = Pass("count-funcs", "count functions", "tensor-core", "tensor-core", count_funcs)
    passes = passes_for("torch")
    passes.insert([p.name for p in passes].index("dce") + 1, spy)
    _compile(passes=passes)
    assert seen == [3]  # the entry, the softmax op instance and its chosen kernel


def test_docs_list_every_pass():
    text = (ROOT / "docs" / "passes.md").read_text()
    assert all(f"`{p.name}`" in text for p in all_passes())


def test_a_pass_of_another_target_is_named_as_such_on_the_command_line(capsys):
    argv = ["compile", str(SOFTMAX), "--entry", "main", "--target", "torch"]
    assert main(argv + ["--dump-after", "emit-onnx"]) == 2
    assert capsys.readouterr().err == ("linnet compile: pass emit-onnx runs only for "
                                       "target(s) onnx, not --target torch\n")
    assert main(argv + ["--stop-after", "emit-jx"]) == 2
    assert capsys.readouterr().err == ("linnet compile: unknown pass emit-jx (did you mean "
                                       "`emit-jax`?); see --list-passes\n")
    assert main(argv[:-1] + ["onnx", "--dump-before", "cse,emit-torch"]) == 2
    assert "pass emit-torch runs only for target(s) torch, not --target onnx" in \
        capsys.readouterr().err


def test_a_pass_of_another_target_is_named_as_such_by_the_library():
    assert pass_targets("emit-stablehlo") == ("stablehlo",)
    assert pass_targets("cse") == ("torch", "jax", "onnx", "stablehlo")
    assert pass_targets("no-such-pass") == ()
    with pytest.raises(UsageError, match=r"^pass emit-onnx runs only for target\(s\) onnx; "
                                         r"this compilation is for target 'torch'$"):
        _compile(shown=Instrumentation(stop_after="emit-onnx"))
    with pytest.raises(UsageError, match=r"^no pass 'cse' in this pipeline"):
        _compile(passes=[p for p in passes_for("torch") if p.name != "cse"],
                 shown=Instrumentation(dump_after=frozenset({"cse"})))
    compiled = _compile()
    with pytest.raises(UsageError, match=r"^no stage 'emit-jax': pass emit-jax runs only for "
                                         r"target\(s\) jax, and this compilation is for "
                                         r"torch; the stages of this compilation: parse"):
        compiled.stage("emit-jax")
    assert compiled.stage("emit-torch") == compiled.text


def test_dump_dir_writes_one_numbered_file_per_pass(tmp_path):
    assert main(["compile", str(SOFTMAX), "--entry", "main", "--dump-dir",
                 str(tmp_path)]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[0] == "01-parse.txt" and names[-1] == f"{len(names):02d}-emit-torch.txt"
    (lowered,) = tmp_path.glob("*-lower-index-notation.txt")
    assert "reduce_max(x)" in lowered.read_text() and "for [" not in lowered.read_text()


def test_time_passes_prints_a_table(capsys):
    assert main(["compile", str(SOFTMAX), "--entry", "main", "--time-passes"]) == 0
    err = capsys.readouterr().err
    assert "pass" in err and "elaborate" in err and "total" in err


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.linnet")),
                         ids=lambda p: p.stem)
def test_examples_pass_verification_after_every_pass(path, capsys):
    assert main(["compile", str(path), "--entry", "main", "--verify-each",
                 "--stop-after", "dce"]) == 0


def test_matmul_body_becomes_one_matrix_product():
    path = ROOT / "examples" / "matmul.linnet"
    compiled = compile_source(path.read_text(), path=str(path), entry="main", numerics="exact")
    assert compiled.text.count("torch.matmul(") == 1 and "einsum" not in compiled.text
