"""A kernel grid with no programs never returns unwritten memory.

`check` refutes a grid that the kernel's `where` lets be 0 or less while a stored result
has elements (E2127); compiling an op instance with its kernel refuses a grid that the
bound sizes make empty while a stored result has elements (E2206); the launchers refuse
to print such a launch. Empty results and results written by atomics keep working with
an empty grid, in generated PyTorch (Triton's interpreter) and generated JAX (Pallas's).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from linnet.diagnostics import CompileError
from linnet.emit import pallas, triton
from linnet.check.frontend import check_program
from linnet.pipeline import compile_source

BLOCKS = """module blocks

pub kernel blocks_k<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(GRID)
where B > 0 {
    let cols = program_id(0) * B + iota<i32>(B)
    let mask = cols < N
    store(y[cols], load(x[cols], mask) * 2.0, mask)
}

pub op twice<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel blocks_k<N, 64> {
    return x * 2.0
}

entry main(x: Tensor[16; f32]) -> Tensor[16; f32] {
    return twice(x)
}
"""


def check(text: str) -> list:
    return check_program("blocks.linnet", text).diagnostics


# ------------------------------------------------------------------------ check time


def test_a_grid_that_may_be_empty_is_refuted_with_sizes() -> None:
    text = BLOCKS.replace("GRID", "N / B - 1")
    (d,) = check(text)
    assert d.code == "E2127"
    assert d.message == ("grid size `N / B - 1` may have no programs while result `y` has "
                         "elements: it is 0 at B = 1, N = 1")
    assert text[d.span.start:d.span.end] == "N / B - 1"
    assert d.help.startswith("add `where N / B - 1 >= 1` to `blocks_k`")


def test_the_suggested_where_clause_is_enough() -> None:
    """It gives the grid programs (no E2127); the grid still stops a block short of the
    result's tail, which is E2132's."""
    text = BLOCKS.replace("GRID", "N / B - 1").replace("where B > 0", "where B > 0, N / B - 1 >= 1")
    assert [d.code for d in check(text)] == ["E2132"]


@pytest.mark.parametrize("grid", ["(N + B - 1) / B", "N", "(N + B - 1) / B, 2"])
def test_grids_that_cover_their_results(grid: str) -> None:
    text = BLOCKS.replace("GRID", grid)
    assert check(text) == []


@pytest.mark.parametrize("grid", ["1", "N / B"])
def test_grids_that_miss_part_of_their_results(grid: str) -> None:
    (d,) = check(BLOCKS.replace("GRID", grid))
    assert d.code == "E2132" and "does not write all of result `y`" in d.message


def test_a_grid_of_zero_programs_is_refuted() -> None:
    (d,) = check(BLOCKS.replace("GRID", "N - N"))
    assert d.code == "E2127" and "it is 0" in d.message


# ------------------------------------------------------------------------- bind time

SHIFTED = """module shifted

pub kernel shifted_k<N: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(N - 6)
where N >= 6 {
    let cols = program_id(0) * 16 + iota<i32>(16)
    let mask = cols < N
    store(y[cols], load(x[cols], mask) * 2.0, mask)
}

pub op twice<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel shifted_k<N> {
    return x * 2.0
}

entry main<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] where N >= 6 {
    return twice(x)
}
"""


@pytest.mark.parametrize("target", ["torch", "jax"])
def test_bound_sizes_that_leave_the_grid_empty(target: str) -> None:
    """The samples do not find N = 6; the bound sizes do, where the kernel would run."""
    assert check(SHIFTED) == []
    with pytest.raises(CompileError) as caught:
        compile_source(SHIFTED, path="shifted.linnet", target=target, bind={"N": 6})
    (d,) = caught.value.diagnostics
    assert d.code == "E2206"
    assert d.message == ("the bound sizes give kernel `shifted_k` a grid of 0 programs along "
                         "an axis (N = 6), but its result `y` has 6 elements to write")
    assert SHIFTED[d.span.start:d.span.end] == "N - 6"
    assert d.help.startswith("add `where N - 6 >= 1` to `shifted_k`")


def test_bound_sizes_where_the_kernel_does_not_run() -> None:
    for target, numerics in (("onnx", "equivalent"), ("stablehlo", "equivalent"),
                             ("torch", "exact"), ("jax", "exact")):
        compile_source(SHIFTED, path="shifted.linnet", target=target, bind={"N": 6},
                       numerics=numerics)
    assert "_launch" in compile_source(SHIFTED, path="shifted.linnet", target="torch",
                                       bind={"N": 7}).text


# ------------------------------------------------------------------------ the launchers


def _kernel_and_op(text: str, bind: dict, target: str = "torch"):
    program = compile_source(text, path="shifted.linnet", target=target, bind=bind).stage("dce")
    kernel = next(f for f in program.funcs if f.kind == "kernel")
    op = next(f for f in program.funcs if f.kind == "op" and f.kernel is not None)
    return kernel, op


def test_launchers_refuse_to_return_unwritten_memory() -> None:
    kernel, op = _kernel_and_op(SHIFTED, {"N": 7})
    empty = dataclasses.replace(kernel, launch=dataclasses.replace(kernel.launch, grid=(0,)))
    assert triton.unwritten_outputs(empty, empty.launch) == [kernel.outputs[0].name]
    with pytest.raises(ValueError, match="launches no program"):
        triton.launcher_source(op, empty, "f_launch", "k_jit", str)
    with pytest.raises(ValueError, match="launches no program"):
        pallas.launcher_source(op, empty, "f_launch", "k_pallas")
    assert triton.unwritten_outputs(kernel, kernel.launch) == []


# ------------------------------------------------------- empty grids that are right

EMPTY = """module empty

pub kernel rows_k<R: Dim>(x: Tensor[R, 4; f32]) -> y: Tensor[R, 4; f32] grid(R) {
    let row = program_id(0)
    let cols = iota<i32>(4)
    store(y[row, cols], load(x[row, cols]) * 2.0)
}

pub op twice<R: Dim>(x: Tensor[R, 4; f32]) -> Tensor[R, 4; f32] kernel rows_k<R> {
    return x * 2.0
}

pub kernel total_k<N: Dim>(x: Tensor[N; f32]) -> s: Tensor[1; f32] grid(N) {
    let i = program_id(0)
    atomic_add(s[0], load(x[i]))
}

pub op total<N: Dim>(x: Tensor[N; f32]) -> Tensor[1; f32] kernel total_k<N> {
    return reshape(sum[i] x[i], [1])
}

entry main<R: Dim, N: Dim>(x: Tensor[R, 4; f32], v: Tensor[N; f32]) -> (Tensor[R, 4; f32], Tensor[1; f32]) {
    return (twice(x), total(v))
}
"""
SIZES = [(0, 0), (3, 0), (0, 5)]


def _inputs(r: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.arange(r * 4, dtype=np.float32).reshape(r, 4),
            np.arange(n, dtype=np.float32))


@pytest.mark.parametrize("r, n", SIZES)
def test_empty_grids_in_generated_pytorch(r: int, n: int) -> None:
    if os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("kernels run in Triton's interpreter here (tests/conftest.py)")
    import torch
    from linnet.torch.runtime import import_generated
    text = compile_source(EMPTY, path="empty.linnet", target="torch", bind={"R": r, "N": n}).text
    assert "_launch" in text
    x, v = _inputs(r, n)
    y, s = import_generated(text, "empty_grids").main(torch.from_numpy(x), torch.from_numpy(v))
    np.testing.assert_array_equal(y.numpy(), x * 2)
    np.testing.assert_array_equal(s.numpy(), [v.sum()])


@pytest.mark.parametrize("r, n", SIZES)
def test_empty_grids_in_generated_jax(r: int, n: int, monkeypatch) -> None:
    jnp = pytest.importorskip("jax.numpy")
    monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    text = compile_source(EMPTY, path="empty.linnet", target="jax", bind={"R": r, "N": n}).text
    assert "_launch" in text
    path = Path(tempfile.mkdtemp()) / f"empty_grids_{r}_{n}.py"
    path.write_text(text)
    loader = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    x, v = _inputs(r, n)
    y, s = module.main(jnp.asarray(x), jnp.asarray(v))
    np.testing.assert_array_equal(np.asarray(y), x * 2)
    np.testing.assert_array_equal(np.asarray(s), [v.sum()])
