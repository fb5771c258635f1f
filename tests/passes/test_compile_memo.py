"""`linnet.passes.compile_memo`: a compilation asked for again with the same program and
options returns what the first returned; an edited text, another binding or other options
compile again, and so does a request for its own passes or dumps, a failed compilation
and an ONNX model."""

from __future__ import annotations

import pytest

from linnet.diagnostics import CompileError
from linnet.passes.manager import Instrumentation
from linnet.pipeline import compile_source, passes_for

SOURCE = """module memo
pub entry twice<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return x + x
}
"""


def compile_twice(text: str = SOURCE, **options):
    return compile_source(text, path="memo.linnet", bind={"N": 4}, **options)


def test_the_same_request_gives_the_same_compilation() -> None:
    first = compile_twice()
    assert compile_twice() is first
    assert compile_twice(target="jax") is compile_twice(target="jax") is not first


def test_an_edited_text_other_bindings_or_options_compile_again() -> None:
    first = compile_twice()
    edited = compile_twice(SOURCE.replace("x + x", "x * 2.0"))
    assert edited is not first and edited.text != first.text
    assert compile_source(SOURCE, path="memo.linnet", bind={"N": 5}) is not first
    assert compile_twice(numerics="exact") is not first
    assert compile_twice(entry="twice") is not first


def test_own_passes_dumps_and_onnx_are_compiled_every_time() -> None:
    first = compile_twice()
    assert compile_twice(passes=passes_for("torch")) is not first
    assert compile_twice(shown=Instrumentation()) is not first
    assert compile_twice(target="onnx") is not compile_twice(target="onnx")


def test_a_failed_compilation_fails_again() -> None:
    bad = SOURCE.replace("x + x", "x + y")
    for _ in range(2):
        with pytest.raises(CompileError):
            compile_twice(bad)
