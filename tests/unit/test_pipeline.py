"""The pipeline as a list of passes: stages, dumps, verification, and editing it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from linnet.cli import main
from linnet.ir import tensor as ir
from linnet.passes.manager import Pass
from linnet.pipeline import all_passes, compile_source, passes_for

ROOT = Path(__file__).resolve().parents[2]
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
