"""Compile-time integers are i64: constants, dimensions, loop bounds and `--bind` values
that leave the range are E2105 (or a command-line mistake), never a crash, a wrapped
shape or unbounded growth."""

from __future__ import annotations

import time

import pytest

from linnet.cli.main import main
from linnet.diagnostics import CompileError
from linnet.check.frontend import check_program
from linnet.pipeline import compile_source

I64_MAX = 2**63 - 1


def diagnostics(source: str) -> list[tuple[str, str]]:
    result = check_program("test.linnet", "module test\n\n" + source)
    return [(d.code, d.message) for d in result.diagnostics]


def test_a_product_of_constants_that_overflows() -> None:
    source = "const A = 3037000500\nconst B = A * A\n"
    assert diagnostics(source) == [
        ("E2105", "compile-time arithmetic overflows i64: 9223372037000250000")]


def test_the_edges_of_i64_are_accepted() -> None:
    source = (f"const BIG = {I64_MAX}\nconst LESS = BIG - 1\n"
              "const SMALL = -9223372036854775808\nconst ROOT = 3037000499 * 3037000499\n")
    assert diagnostics(source) == []


@pytest.mark.parametrize("source, message", [
    ("const A = -9223372036854775808 - 1\n",
     "compile-time arithmetic overflows i64: -9223372036854775809"),
    (f"const A = {I64_MAX} + 1\n", "compile-time arithmetic overflows i64: 9223372036854775808"),
    ("const A = -18446744073709551615\n",
     "compile-time arithmetic overflows i64: -18446744073709551615"),
])
def test_sums_and_negations_that_overflow(source: str, message: str) -> None:
    assert diagnostics(source) == [("E2105", message)]


def test_squaring_a_constant_forty_times_stops_at_the_overflow() -> None:
    lines = ["const C0 = 2"] + [f"const C{k} = C{k - 1} * C{k - 1}" for k in range(1, 41)]
    started = time.monotonic()
    found = diagnostics("\n".join(lines) + "\n")
    assert time.monotonic() - started < 10
    assert found == [("E2105", "compile-time arithmetic overflows i64: 18446744073709551616")]


def test_symbolic_products_grow_no_further_than_i64() -> None:
    body = "\n".join(f"    let a{k} = a{k - 1} * a{k - 1}" for k in range(1, 41))
    source = (f"fn f<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {{\n    let a0 = N + 1\n{body}\n"
              "    return x\n}\n")
    started = time.monotonic()
    codes = [code for code, _ in diagnostics(source)]
    assert time.monotonic() - started < 10
    assert codes == ["E2105"]


@pytest.mark.parametrize("source", [
    "entry main(x: Tensor[100000000000000000000; f32]) -> f32 {\n    return 0.0\n}\n",
    "fn f<N: Dim>(x: Tensor[N * 4611686018427387904 * 4; f32]) -> f32 {\n    return 0.0\n}\n",
    "entry main(x: f32) -> f32 {\n    let y = fill<f32>([100000000000000000000], 0.0)\n"
    "    return x\n}\n",
])
def test_dimensions_beyond_i64(source: str) -> None:
    assert [code for code, _ in diagnostics(source)] == ["E2105"]


def test_loop_bounds_beyond_i64() -> None:
    source = ("entry main(x: f32) -> f32 {\n    var y = x\n"
              "    for i in 0..1000000000000000000000000000000 {\n        y = y + 1.0\n    }\n"
              "    return y\n}\n")
    assert [code for code, _ in diagnostics(source)] == ["E2105"]


def test_bind_beyond_i64_is_a_command_line_mistake(tmp_path, capsys) -> None:
    path = tmp_path / "wide.linnet"
    path.write_text("module wide\n\nentry main<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {\n"
                    "    return x\n}\n")
    for value in (str(2**63), "1" + "0" * 30, "\u00b2"):
        assert main(["onnx", str(path), "--bind", f"N={value}"]) == 2
        assert "below 2^63" in capsys.readouterr().err
    assert main(["onnx", str(path), "--bind", f"N={I64_MAX}", "-o",
                 str(tmp_path / "out.onnx")]) in (0, 1)


def test_dimensions_of_an_instance_beyond_i64() -> None:
    source = ("module t\n\nfn square<N: Dim>(x: Tensor[N; f32]) -> Tensor[N * N; f32] {\n"
              "    let y[i, j] = x[i] * x[j]\n    return reshape(y, [N * N])\n}\n\n"
              "entry main<N: Dim>(x: Tensor[N; f32]) -> Tensor[N * N * N * N; f32] {\n"
              "    return square(square(x))\n}\n")
    with pytest.raises(CompileError) as caught:
        compile_source(source, target="stablehlo", bind={"N": 100000})
    assert caught.value.diagnostics[0].code == "E2105"
