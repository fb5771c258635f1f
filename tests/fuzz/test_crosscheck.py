"""`linnet.fuzz.crosscheck`: one program through every backend, and its findings.

A program that checks runs cleanly; a rejected one is only checked; and each kind of
finding is shown to be found, by planting the fault it describes.
"""

from __future__ import annotations

import time

import pytest

from linnet.passes.front.bind_generics import CompileError
from linnet.fuzz import crosscheck as cc

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

PROGRAM = """module fuzz.small

fn double(x: Tensor[4; f32]) -> Tensor[4; f32] {
    return x * 2.0
}

entry main(x: Tensor[4; f32], k: Tensor[3; i32]) -> (Tensor[4; f32], Tensor[3; i32], f32) {
    let y = double(x)
    let s = sum[i] y[i]
    return (y, k / 2, s)
}

entry loss(x: Tensor[4; f32]) -> f32 {
    let s = sum[i] x[i] * x[i]
    return s
}
"""


def test_a_good_program_runs_everywhere_without_findings() -> None:
    report = cc.crosscheck(PROGRAM, "small.linnet")
    assert report.checked and report.findings == []
    for stage in ("run interpreter main", "run torch main", "run jax main", "run onnx main",
                  "run stablehlo main", "run torch --grad loss", "run stablehlo --grad loss"):
        assert stage in report.ran


def test_a_rejected_program_is_only_checked() -> None:
    report = cc.crosscheck(PROGRAM.replace("k / 2", "k / 2.5"), "small.linnet")
    assert not report.checked and report.codes and report.findings == [] and report.ran == ["check"]


def test_an_internal_error_is_a_crash(monkeypatch) -> None:
    def broken(target: str):
        def load(text, name):
            raise IndexError("planted")
        return load
    monkeypatch.setattr(cc, "_loader", broken)
    report = cc.crosscheck(PROGRAM, "small.linnet", targets=("onnx",), grad=False)
    assert [(f.kind, f.stage, f.entry) for f in report.findings] == [
        ("crash", "load onnx", "main"), ("crash", "load onnx", "loss")]
    assert "IndexError: planted" in report.findings[0].detail and report.crashes


def test_a_wrong_result_is_a_disagreement(monkeypatch) -> None:
    real = cc._loader

    def off_by_one(target: str):
        def load(text, name):
            main = real(target)(text, name)
            return lambda *xs: [r + 1 for r in main(*xs)]
        return load
    monkeypatch.setattr(cc, "_loader", off_by_one)
    report = cc.crosscheck(PROGRAM, "small.linnet", targets=("stablehlo",), grad=False)
    kinds = {(f.kind, f.entry, f.detail.split(":")[0]) for f in report.findings}
    assert kinds == {("disagree", "main", "result 0"), ("disagree", "main", "result 1"),
                     ("disagree", "main", "result 2"), ("disagree", "loss", "result 0")}
    assert not report.crashes


def test_a_diagnostic_only_compiling_gives_is_late(monkeypatch) -> None:
    real = cc._compile

    def refuse(run, name, values, target, *rest, **kw):
        if target == "jax":
            raise CompileError([])
        return real(run, name, values, target, *rest, **kw)
    monkeypatch.setattr(cc, "_compile", refuse)
    report = cc.crosscheck(PROGRAM, "small.linnet", targets=("jax",), grad=False)
    assert {(f.kind, f.stage) for f in report.findings} == {("late", "compile jax")}


def test_a_stage_past_its_limit_is_a_hang(monkeypatch) -> None:
    def slow(target: str):
        def load(text, name):
            time.sleep(5)
        return load
    monkeypatch.setattr(cc, "_loader", slow)
    started = time.perf_counter()
    report = cc.crosscheck(PROGRAM, "small.linnet", targets=("onnx",), grad=False,
                           seconds=0.3)
    assert time.perf_counter() - started < 4
    assert [f.kind for f in report.findings] == ["hang", "hang"] and report.crashes


def test_a_runtime_index_out_of_range_is_a_fault_of_the_program() -> None:
    program = """module fuzz.range

entry main(xs: Tensor[4, 3; f32]) -> f32 {
    var s: f32 = 0.0
    for t in 0..2 {
        let row = xs[t + 10]
        s = s + sum[i] row[i]
    }
    return s
}
"""
    report = cc.crosscheck(program, "range.linnet", targets=("torch",), grad=False)
    assert [(f.kind, f.stage) for f in report.findings] == [("fault", "run interpreter")]
    assert not report.crashes
