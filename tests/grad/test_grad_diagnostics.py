"""`--grad`'s two diagnostics: E2128 (the entry does not return one floating scalar) and
E2129 (a while loop carrying a floating value that depends on an input), each with its
span; and the while loops that are fine."""

from __future__ import annotations

from pathlib import Path

import pytest

from linnet.cli.main import main
from linnet.diagnostics import CompileError
from linnet.pipeline import compile_source

HERE = Path(__file__).parent


def _diagnostic(path: Path, **options):
    with pytest.raises(CompileError) as err:
        compile_source(path.read_text(), path=str(path), grad=True, **options)
    (d,) = err.value.diagnostics
    text = path.read_text()
    return d, text[d.span.start:d.span.end], text[:d.span.start].count("\n") + 1


def test_a_tensor_result_is_e2128_at_the_return_type(capsys):
    d, spanned, line = _diagnostic(HERE / "bad_result.linnet")
    assert (d.code, spanned, line) == ("E2128", "Tensor[4; f32]", 4)
    assert main(["torch", str(HERE / "bad_result.linnet"), "--grad"]) == 1
    err = capsys.readouterr().err
    assert "error[E2128]" in err and "bad_result.linnet:4:34" in err


def test_a_tuple_or_integer_result_is_e2128(tmp_path):
    for result, value in (("(f32, f32)", "(s, s)"), ("i32", "cast<i32>(s)")):
        path = tmp_path / "loss.linnet"
        path.write_text(f"module loss\n\nentry main(x: Tensor[3; f32]) -> {result} {{\n"
                        f"    let s = sum[i] x[i]\n    return {value}\n}}\n")
        d, spanned, _ = _diagnostic(path)
        assert (d.code, spanned) == ("E2128", result)
    assert compile_source(path.read_text(), path=str(path)).text  # fine without --grad


def test_a_while_carrying_a_dependent_float_is_e2129_at_the_keyword(capsys):
    """The loop is in a fn the entry calls; the entry's own while carries an integer and
    a float made without the inputs, which is fine."""
    d, spanned, line = _diagnostic(HERE / "bad_while.linnet")
    assert (d.code, spanned, line) == ("E2129", "while", 7)
    assert "`s`" in d.message
    assert main(["jax", str(HERE / "bad_while.linnet"), "--grad"]) == 1
    assert "error[E2129]" in capsys.readouterr().err


def test_a_while_without_dependent_floats_compiles(tmp_path):
    path = tmp_path / "fine.linnet"
    path.write_text((HERE / "bad_while.linnet").read_text().replace(
        "return halve(x) * c", "return sum[i] x[i] * c"))
    out = compile_source(path.read_text(), path=str(path), grad=True, numerics="exact")
    assert "def main" in out.text
