"""Kernel offsets that cannot overflow, at the bound sizes.

The memory-safety proofs read index arithmetic as exact integers. Compiling an op with its
kernel makes that true or refuses: the offsets the compiler builds from a multi-axis index
are i64 where the tensor has 2^31 elements or more (and i32, unchanged, where it has
fewer); a signed integer the kernel itself computes that may leave its dtype's range at
the bound sizes is E2133; a grid axis with more programs than a launch allows is E2134.
Large instances are compiled only, never run.
"""

from __future__ import annotations

import numpy as np
import pytest

from linnet.check.dim_normal_form import Dim
from linnet.check.kernel_wrap import Interval, bounds
from linnet.diagnostics import CompileError
from linnet.fuzz.backends import run_entry
from linnet.pipeline import compile_source

BLOCKS = """module blocks

pub kernel blocks_k<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid((N + B - 1) / B)
where B >= 1 {
    let offs = OFFS
    let mask = offs < N
    store(y[offs], load(x[offs], mask) * 2.0, mask)
}

pub op twice<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel blocks_k<N, 1024> {
    return x * 2.0
}

entry main<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return twice(x)
}
"""
NARROW = BLOCKS.replace("OFFS", "program_id(0) * B + iota<i32>(B)")
WIDE = BLOCKS.replace("OFFS", "cast<i64>(program_id(0)) * B + iota<i64>(B)")

ROWS = """module rows

pub kernel rows_k<R: Dim, V: Dim, RB: Dim, BV: Dim>(x: Tensor[R, V; f32]) -> y: Tensor[R, V; f32] grid((R + RB - 1) / RB)
where RB >= 1, BV >= V {
    let rows = program_id(0) * RB + iota<i32>(RB)
    let cols = iota<i32>(BV)
    let inside[i, j] = rows[i] < R && cols[j] < V
    store(y[rows, cols], load(x[rows, cols], inside, 0.0) * 2.0, inside)
}

pub op twice<R: Dim, V: Dim>(x: Tensor[R, V; f32]) -> Tensor[R, V; f32] kernel rows_k<R, V, 4, next_pow2(V)> {
    return x * 2.0
}

entry main<R: Dim, V: Dim>(x: Tensor[R, V; f32]) -> Tensor[R, V; f32] {
    return twice(x)
}
"""

COLUMNS = """module columns

pub kernel columns_k<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R, C; f32] grid(R, C) {
    let row = program_id(0)
    let col = program_id(1)
    store(y[row, col], load(x[row, col]) * 2.0)
}

pub op twice<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] kernel columns_k<R, C> {
    return x * 2.0
}

entry main<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] {
    return twice(x)
}
"""


def refusal(text: str, bind: dict, target: str = "torch"):
    with pytest.raises(CompileError) as caught:
        compile_source(text, path="k.linnet", target=target, bind=bind)
    (d,) = caught.value.diagnostics
    return d


def kernel_func(text: str, bind: dict):
    program = compile_source(text, path="k.linnet", target="torch", bind=bind).stage("dce")
    return next(f for f in program.funcs if f.kind == "kernel")


def offset_dtypes(kernel) -> set[str]:
    """The dtypes of the offsets of the kernel's loads and stores."""
    return {b.expr.args[1].type.dtype for b in kernel.body.binds
            if getattr(b.expr, "op", None) in ("load", "store")}


# ------------------------------------------------------ offsets the compiler builds


def test_offsets_of_a_tensor_of_2_31_elements_or_more_are_i64() -> None:
    """32768 rows of 128000: 4.2e9 elements. The row index stays i32 (it is below 32768);
    the offset `row * 128000 + col` is built in i64."""
    assert offset_dtypes(kernel_func(ROWS, {"R": 32768, "V": 128000})) == {"i64"}
    source = compile_source(ROWS, path="k.linnet", target="torch",
                            bind={"R": 32768, "V": 128000}).text
    assert "tl.full((), 128000, tl.int64)" in source


def test_offsets_of_smaller_tensors_stay_i32() -> None:
    """16384 rows of 128000 is 2.097e9 elements, below 2^31: nothing widens."""
    for bind in ({"R": 16384, "V": 128000}, {"R": 3, "V": 40}):
        kernel = kernel_func(ROWS, bind)
        assert offset_dtypes(kernel) == {"i32"}
        assert "i64" not in str(kernel)


def test_pallas_offsets_of_a_large_tensor_are_int64() -> None:
    source = compile_source(ROWS, path="k.linnet", target="jax",
                            bind={"R": 32768, "V": 128000}).text
    assert "jnp.asarray(128000, dtype=jnp.int64)" in source


# ------------------------------------------------------ arithmetic the kernel writes


def test_i32_offsets_past_2_31_are_refused() -> None:
    d = refusal(NARROW, {"N": 3_000_000_000})
    assert d.code == "E2133"
    assert d.message == ("`program_id(0) * B` may wrap in kernel `blocks_k` at the bound sizes "
                         "(N = 3000000000, B = 1024): it reaches 2999999488, outside i32's "
                         "-2147483648 .. 2147483647")
    assert NARROW[d.span.start:d.span.end] == "program_id(0) * B"
    assert "cast<i64>(program_id(0))" in d.help


def test_i32_offsets_that_reach_exactly_the_i32_maximum_compile() -> None:
    """N = 2^31 - 1: the last program's lanes reach 2^31 - 1 and no further."""
    assert offset_dtypes(kernel_func(NARROW, {"N": 2**31 - 1})) == {"i32"}


def test_a_size_that_does_not_fit_the_comparison_is_a_diagnostic() -> None:
    """N = 2^31 keeps `offs` inside i32, but `offs < N` compares it with an i32 that
    cannot hold N: the instance's own error, not an internal one."""
    assert refusal(NARROW, {"N": 2**31}).code == "E2105"


@pytest.mark.parametrize("target", ["torch", "jax"])
def test_offsets_computed_in_i64_compile_at_any_size(target: str) -> None:
    text = compile_source(WIDE, path="k.linnet", target=target,
                          bind={"N": 3_000_000_000}).text
    assert "3000000000" in text


def test_offsets_computed_in_i64_run_at_small_sizes() -> None:
    x = np.arange(40, dtype=np.float32)
    (y,) = run_entry_text(WIDE, x)
    assert np.array_equal(y, 2 * x)


def run_entry_text(text: str, x: np.ndarray):
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "blocks.linnet"
        path.write_text(text)
        return run_entry(path, "main", "torch", [x], {"N": x.size})


def test_unsigned_arithmetic_may_wrap() -> None:
    """u32 arithmetic wraps by definition (hashes rely on it): lanes past 859 wrap here,
    and that is not refused."""
    hashed = BLOCKS.replace("OFFS", "program_id(0) * B + iota<i32>(B)").replace(
        "let mask = offs < N",
        "let mixed = cast<u32>(offs) * 5000000\n    let mask = offs < N")
    compile_source(hashed, path="k.linnet", target="torch", bind={"N": 100})


# ------------------------------------------------------------------ grid limits


def test_a_grid_axis_past_the_launch_limit_is_refused() -> None:
    d = refusal(COLUMNS, {"R": 4, "C": 70000})
    assert d.code == "E2134"
    assert d.message == ("the bound sizes give kernel `columns_k` 70000 programs along grid "
                         "axis 1 (R = 4, C = 70000), more than a launch allows there (65535)")
    assert COLUMNS[d.span.start:d.span.end] == "C"


def test_a_grid_axis_at_the_launch_limit_compiles() -> None:
    compile_source(COLUMNS, path="k.linnet", target="torch", bind={"R": 4, "C": 65535})


# ------------------------------------------------------------------ interval bounds


def test_bounds_of_an_index_over_its_symbols_ranges() -> None:
    pid, lane = Dim.sym("program_id(0)"), Dim.sym("@0")
    ranges = {"program_id(0)": Interval(0, 9), "@0": Interval(0, 3)}
    assert bounds(pid * 4 + lane, ranges) == Interval(0, 39)
    assert bounds(lane - pid * 4, ranges) == Interval(-36, 3)
    assert bounds((pid + 1).floordiv(Dim.const(2)), ranges) == Interval(0, 5)
    assert bounds(pid * Dim.sym("n"), ranges) is None  # `n` has no known range
