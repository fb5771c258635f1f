"""The package as a library: one exception family with rendered diagnostics, errors worded
for Python callers, entries checked when they are loaded, validated options, stages that
print as `--dump-after` prints them, and short reprs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import linnet
from linnet.errors import InputError, InputShapeError, UsageError
from linnet.pipeline import compile_file, compile_source, passes_for
from linnet.passes.manager import Instrumentation
from linnet.torch import load, load_function

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "examples" / "softmax.linnet"
MATMUL = ROOT / "examples" / "matmul.linnet"
BROKEN = "module m\nentry main(x: f32) -> f32 {\n    return y\n}\n"
PLAIN = "module m\nentry main(x: f32) -> f32 {\n    return x\n}\n"


def test_every_error_class_of_the_package_is_a_linnet_error():
    from linnet.diagnostics import CompileError
    from linnet.passes.front.vocabulary import ElaborationError
    from linnet.passes.manager import InvalidIR
    from linnet.tune import TuneError, TuningFileError
    from linnet.tuning.candidates import CandidateError
    for cls in (CompileError, ElaborationError, UsageError, InputError, InputShapeError,
                InvalidIR, TuneError, TuningFileError, CandidateError):
        assert issubclass(cls, linnet.LinnetError), cls
    assert linnet.torch.LinnetError is linnet.LinnetError
    assert issubclass(InputError, TypeError) and issubclass(InputShapeError, ValueError)


def test_a_compile_error_renders_its_diagnostics_with_the_source_line():
    with pytest.raises(linnet.LinnetError) as caught:
        compile_source(BROKEN, path="broken.linnet")
    text = str(caught.value)
    assert text.startswith("error[E1201]: undeclared name `y`")
    assert "--> broken.linnet:3:12" in text and "3 |     return y" in text and "^" in text
    assert caught.value.diagnostics[0].code == "E1201"


def test_the_loaders_raise_the_same_rendered_diagnostics(tmp_path):
    path = tmp_path / "broken.linnet"
    path.write_text(BROKEN)
    for load_it in (lambda: load_function(str(path), "main"), lambda: load(str(path))):
        with pytest.raises(linnet.LinnetError, match=r"(?s)error\[E1201\].*return y"):
            load_it()


def test_library_errors_give_no_command_line_advice():
    with pytest.raises(UsageError) as caught:
        compile_file(SOFTMAX, entry="softmax_any")
    assert str(caught.value) == ("generic `R: Dim` of `softmax_any` needs a value: "
                                 "bind={'R': 8}")
    assert caught.value.command_line.endswith("--bind R=8")  # what the command line says
    with pytest.raises(UsageError) as caught:
        compile_file(SOFTMAX, entry="softmax_any", bind={"R": "x", "C": 4})
    assert "--" not in str(caught.value) and "bind R='x'" in str(caught.value)
    with pytest.raises(UsageError) as caught:
        compile_file(SOFTMAX)
    assert str(caught.value).endswith("choose one with entry=NAME")


def test_load_function_checks_the_entry_name_when_it_is_called():
    with pytest.raises(UsageError, match="no entry named `softmax_an`; the file's entries: "
                                         r"main, softmax_any \(did you mean `softmax_any`\?\)"):
        load_function(str(SOFTMAX), "softmax_an")
    with pytest.raises(linnet.LinnetError, match="cannot read the program"):
        load_function(str(ROOT / "no_such.linnet"), "main")
    with pytest.raises(UsageError, match="unknown numerics 'fats'"):
        load_function(str(SOFTMAX), "softmax_any", numerics="fats")
    jax_loader = pytest.importorskip("linnet.jax")
    with pytest.raises(UsageError, match="no entry named `nope`"):
        jax_loader.load_function(str(SOFTMAX), "nope")
    with pytest.raises(UsageError, match="no entry named `nope`"):
        jax_loader.load_source(PLAIN, "nope")


def test_a_call_with_inputs_the_entry_does_not_take_is_a_linnet_error():
    fn = load_function(str(MATMUL), "matmul_any", tuning=False)
    a, b = torch.randn(3, 4), torch.randn(4, 2)
    with pytest.raises(InputError, match=r"matmul_any\(\) takes 2 inputs, got 1"):
        fn(a)
    with pytest.raises(InputShapeError, match=r"matmul_any\(\): K = 4 from `a` \(input 0\), but "
                                              r"`b` \(input 1\) has 5 \(axis 0 of "
                                              r"Tensor\[K, N; f32\]\)"):
        fn(a, torch.randn(5, 2))
    with pytest.raises(InputShapeError, match="input 0 has shape \\[3\\], whose rank"):
        fn(torch.randn(3), b)
    with pytest.raises(InputError, match="input 0 has dtype f64, expected f32"):
        fn(a.double(), b)
    assert fn.cache == {}  # nothing was compiled for a rejected call
    torch.testing.assert_close(fn(a, b), a @ b)


def test_compile_source_validates_target_and_numerics():
    with pytest.raises(UsageError, match=r"unknown target 'trch' \(did you mean `torch`\?\); "
                                         "choose one of torch, jax, onnx, stablehlo"):
        compile_source(PLAIN, target="trch")
    with pytest.raises(UsageError, match=r"unknown numerics 'exct' \(did you mean `exact`\?\)"):
        compile_source(PLAIN, numerics="exct")
    with pytest.raises(UsageError, match="unknown target 'cuda'"):
        passes_for("cuda")


def test_compile_file_compiles_a_program_by_its_path():
    by_path = compile_file(SOFTMAX, entry="main")
    by_text = compile_source(SOFTMAX.read_text(), path=str(SOFTMAX), entry="main")
    assert by_path.text == by_text.text and "def main(*inputs):" in by_path.text
    assert linnet.compile_file is compile_file
    with pytest.raises(UsageError, match="no file at 'nowhere.linnet'"):
        compile_file("nowhere.linnet")


def test_a_stage_prints_as_dump_after_prints_it():
    shown: list[str] = []
    compiled = compile_source(SOFTMAX.read_text(), path=str(SOFTMAX), entry="main",
                              shown=Instrumentation(dump_after=frozenset(
                                  {"parse", "bind-generics", "dce", "emit-torch"}),
                                  emit=shown.append))
    dumps = {text.splitlines()[0].split()[4]: text.split("\n", 1)[1] for text in shown}
    for name in ("parse", "bind-generics", "dce", "emit-torch"):
        assert str(compiled.stage(name)) == dumps[name] == compiled.dump(name), name
    assert str(compiled.stage("dce")).startswith("// entry main\nfunc main entry")
    assert compiled.stage("dce").entry == "main"  # still the IR itself
    assert compiled.stages[:3] == ["parse", "check", "bind-generics"]


def test_an_unknown_stage_is_a_clear_error():
    compiled = compile_source(PLAIN, passes=passes_for("torch")[:5])
    with pytest.raises(UsageError, match=r"no stage 'dc': it is not a pass \(did you mean "
                                         r"`dce`\?\)|no stage 'dc': it is not a pass"):
        compiled.stage("dc")
    with pytest.raises(UsageError, match="no stage 'dce': it did not run; the stages of this "
                                         "compilation: parse, check, bind-generics"):
        compiled.stage("dce")


def test_reprs_are_one_short_line():
    fn = load_function(str(SOFTMAX), "softmax_any", tuning=False)
    fn(np.ones((2, 3), np.float32))
    text = repr(fn)
    assert text == (f"<linnet.torch entry softmax_any of {SOFTMAX} (compiled, "
                    "numerics=equivalent, 1 binding(s))>")
    assert repr(load(str(SOFTMAX))) == f"<linnet.torch module {SOFTMAX}: entries main, softmax_any>"
    jax_loader = pytest.importorskip("linnet.jax")
    text = repr(jax_loader.load_source(PLAIN, "main"))
    assert text.startswith("<linnet.jax entry main of <source>.linnet") and "\n" not in text
