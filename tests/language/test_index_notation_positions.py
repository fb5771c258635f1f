"""Index notation over computed tensors and at compile-time positions.

An access in index notation may index any tensor expression (`iota<i32>(N)[i]`,
`(x * 2.0)[r, c]`, `double(v)[i]`), computed once before the comprehension, and each of its
positions may be an index variable or a compile-time integer provably in range (`x[r, 0]`
under `where C >= 1`). The programs check, and run alike through the PyTorch interpreter
and generated PyTorch.
"""

from __future__ import annotations


import pytest
import torch

import linnet.torch as lt
from programs import diagnostics_of, write_program



OVER_A_CALL = """module over_a_call

entry main<N: Dim>(v: Tensor[N; f32]) -> Tensor[N; f32] {
    let w[i] = v[i] * cast<f32>(iota<i32>(N)[i])
    return w
}
"""

AT_A_POSITION = """module at_a_position

entry main<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R; f32] where C >= 1 {
    let y[r] = x[r, 0] * 2.0
    return y
}
"""

MIXED = """module mixed

const THIRD = 2

fn double<N: Dim>(v: Tensor[N; f32]) -> Tensor[N; f32] {
    return v * 2.0
}

entry main<R: Dim, C: Dim>(x: Tensor[R, C; f32], v: Tensor[C; f32]) -> (Tensor[R; f32], Tensor[C; f32], f32, Tensor[C; f32], Tensor[R; f32])
where R >= 1, C >= 3 {
    let one = 1
    let ends[r] = x[r, C - 1] + x[r, THIRD] - x[r, one]
    let colsum[c] = sum[r] (x * 2.0)[r, c]
    let corner = sum[c] x[0, c] * v[c]
    let d[i] = double(v)[i] + v[i]
    let rows[r] = max[c] (x - fill<f32>([R, C], 1.0))[r, c]
    return (ends, colsum, corner, d, rows)
}
"""


@pytest.mark.parametrize("text", [OVER_A_CALL, AT_A_POSITION, MIXED])
def test_the_programs_check(tmp_path, text):
    assert diagnostics_of(tmp_path, text) == []


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
def test_over_a_call(tmp_path, compile):
    v = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    w = lt.load_function(write_program(tmp_path, OVER_A_CALL), "main", compile=compile)(v)
    assert w.tolist() == [0.0, 2.0, 6.0, 12.0, 20.0]


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
def test_at_a_position(tmp_path, compile):
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    y = lt.load_function(write_program(tmp_path, AT_A_POSITION), "main", compile=compile)(x)
    assert y.tolist() == [0.0, 8.0, 16.0]


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
def test_mixed_positions_and_computed_tensors(tmp_path, compile):
    x = torch.arange(10, dtype=torch.float32).reshape(2, 5)
    v = torch.tensor([1.0, -1.0, 2.0, 0.5, 3.0])
    ends, colsum, corner, d, rows = lt.load_function(
        write_program(tmp_path, MIXED), "main", compile=compile)(x, v)
    assert ends.tolist() == (x[:, 4] + x[:, 2] - x[:, 1]).tolist()
    assert colsum.tolist() == (2.0 * x).sum(dim=0).tolist()
    assert corner.item() == (x[0] * v).sum().item()
    assert d.tolist() == (3.0 * v).tolist()
    assert rows.tolist() == (x - 1.0).max(dim=1).values.tolist()


def _in_entry(line: str, where: str = "where C >= 1") -> str:
    return ("module m\n\nentry main<R: Dim, C: Dim>(x: Tensor[R, C; f32], v: Tensor[C; f32], "
            f"k: i32) -> Tensor[R; f32] {where} {{\n    {line}\n    return y\n}}\n")


@pytest.mark.parametrize("line, where, want", [
    ("let y[r] = x[r, 0]", "", [("E2209", "0")]),               # C may be 0
    ("let y[r] = x[r, C]", "where C >= 1", [("E2209", "C")]),
    ("let y[r] = x[r, -1]", "where C >= 1", [("E2209", "-1")]),
    ("let y[r] = x[r, C - 1]", "where C >= 1", []),
    ("let y[r] = x[r, k]", "where C >= 1", [("E3104", "k")]),    # a runtime scalar
    ("let y[r] = x[r, r + 1]", "where C >= 1", [("E3104", "r + 1")]),
    ("let y[r] = x[r, 0:1]", "where C >= 1", [("E3104", "0:1")]),
    ("let y[r] = (x * x[r, 0])[r, 0]", "where C >= 1", [("E3104", "x * x[r, 0]")]),
    ("let y[r] = (sum[c] v[c])[r]", "where C >= 1", [("E2104", "sum[c] v[c]")]),
    ("let y[r] = x[r, 1.0]", "where C >= 1", [("E3104", "1.0")]),
])
def test_positions_that_are_not_allowed(tmp_path, line, where, want):
    assert diagnostics_of(tmp_path, _in_entry(line, where)) == want


def test_a_tile_is_not_read_at_a_fixed_position_in_a_kernel(tmp_path):
    text = """module m

kernel k(x: Tensor[4, 16; f32]) -> y: Tensor[16; f32] grid(1) {
    let rows = iota<i32>(4)
    let cols = iota<i32>(16)
    let t = load(x[rows, cols])
    let first[c] = t[0, c]
    store(y[cols], first)
}
"""
    assert diagnostics_of(tmp_path, text) == [("E2127", "0")]


KERNEL = """module computed_tile

pub kernel pick_tile(x: Tensor[4, 16; f32]) -> y: Tensor[16; f32] grid(1) {
    let cols = iota<i32>(16)
    let t = load(x[0, cols])
    let first[c] = t[c] * cast<f32>(iota<i32>(16)[c])
    store(y[cols], first)
}

pub op pick(x: Tensor[4, 16; f32]) -> Tensor[16; f32] kernel pick_tile {
    let first[c] = x[0, c] * cast<f32>(iota<i32>(16)[c])
    return first
}

entry main(x: Tensor[4, 16; f32]) -> Tensor[16; f32] {
    return pick(x)
}
"""


def test_a_computed_tile_in_a_kernel_agrees_with_the_body(tmp_path):
    from linnet.fuzz import compare_kernel_and_body
    x = torch.arange(64, dtype=torch.float32).reshape(4, 16)
    result = compare_kernel_and_body(write_program(tmp_path, KERNEL), "pick", [x], grad=False)
    assert result.ok and result.kernel_ran, str(result)
