"""Tile sizes that literals decide are checked by `linnet check` (E2127), not only when a
kernel is compiled: a kernel's own literal tiles, and the tiles an op's binding makes
literal (`kernel scale_rows<N, 1000>`)."""

from __future__ import annotations

import pytest

from linnet.diagnostics import CompileError
from linnet.check.frontend import check_program
from linnet.pipeline import compile_source

KERNEL = """module tiles

pub kernel scale_rows<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid((N + B - 1) / B)
where B > 0, B <= LIMIT {
    let cols = program_id(0) * B + iota<i32>(B)
    let mask = cols < N
    store(y[cols], load(x[cols], mask) * 2.0, mask)
}

pub op scale<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel scale_rows<N, TILE> {
    return x * 2.0
}

entry main(x: Tensor[40; f32]) -> Tensor[40; f32] {
    return scale(x)
}
"""


def program(tile: str, limit: str = "4096") -> str:
    return KERNEL.replace("TILE", tile).replace("LIMIT", limit)


def check(text: str) -> list:
    return check_program("tiles.linnet", text).diagnostics


@pytest.mark.parametrize("tile", ["1000", "2 * 500", "3", "24"])
def test_a_binding_that_makes_a_tile_a_bad_size(tile: str) -> None:
    text = program(tile)
    (d,) = check(text)
    assert d.code == "E2127"
    size = eval(tile)
    assert d.message == ("tile sizes must be powers of two: `scale` binds `scale_rows` so "
                         f"that it builds a tile of shape [{size}]")
    assert text[d.span.start:d.span.end] == f"kernel scale_rows<N, {tile}>"


@pytest.mark.parametrize("tile", ["1024", "1", "2 * 512"])
def test_a_binding_to_a_power_of_two(tile: str) -> None:
    assert check(program(tile)) == []


def test_no_error_where_the_bound_kernel_never_runs() -> None:
    """`B <= 512` fails for B = 1000: the op's body always runs, the tile is never built."""
    assert check(program("1000", limit="512")) == []
    assert check(program("0")) == []  # `B > 0` fails


def test_a_symbolic_binding_is_left_to_the_kernel_stage() -> None:
    text = KERNEL.replace("LIMIT", "4096").replace(
        "op scale<N: Dim>(", "op scale<N: Dim, T: Dim>(").replace("<N, TILE>", "<N, T>").replace(
        "return scale(x)", "return scale<40, 1000>(x)")
    assert check(text) == []
    with pytest.raises(CompileError) as caught:
        compile_source(text, path="tiles.linnet")
    assert caught.value.diagnostics[0].code == "E2127"


def test_check_and_compile_report_the_same_error() -> None:
    text = program("1000")
    with pytest.raises(CompileError) as caught:
        compile_source(text, path="tiles.linnet")
    assert [(d.code, d.span) for d in caught.value.diagnostics] == [
        (d.code, d.span) for d in check(text)]


OWN = """module own

pub kernel wide<N: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(1) {
    let cols = iota<i32>(1000)
    let mask = cols < N
    store(y[cols], load(x[cols], mask), mask)
}

pub op copy<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel wide<N> {
    return x
}
"""


def test_a_kernels_own_literal_tile_is_reported_once() -> None:
    (d,) = check(OWN)
    assert (d.code, d.message) == ("E2127", "tile sizes must be powers of two: iota(1000)")
    assert OWN[d.span.start:d.span.end] == "iota<i32>(1000)"


def test_a_derived_literal_tile() -> None:
    text = OWN.replace("let mask = cols < N", "let pad = fill<f32>([3, 4], 0.0)\n"
                                              "    let mask = cols < N").replace("1000", "1024")
    (d,) = check(text)
    assert d.message == "tile sizes must be powers of two: a tile of shape [3, 4]"
    assert text[d.span.start:d.span.end] == "fill<f32>([3, 4], 0.0)"
