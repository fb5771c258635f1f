"""exact-division: dividing by a power of two is multiplying by its reciprocal, exactly."""

from __future__ import annotations

import numpy as np

import pytest

from linnet.ir import tensor as ir
from linnet.pipeline import compile_source

from pass_runs import prims
from egraph_frees import free_egraphs, older_objects_frozen  # noqa: F401 (autouse)


def test_reciprocal_power_of_two_is_exact_and_normal_only():
    from linnet.passes.kernels.exact_division import reciprocal_power_of_two as recip
    assert recip(4096.0, "f32") == 2.0 ** -12
    assert recip(-0.5, "f32") == -2.0
    assert recip(768.0, "f32") is None and recip(0.0, "f32") is None
    assert recip(float("inf"), "f32") is None and recip(3.0, "f64") is None
    assert recip(2.0 ** 126, "f32") == 2.0 ** -126  # the smallest normal f32
    assert recip(2.0 ** 127, "f32") is None  # its reciprocal would be subnormal
    assert recip(2.0 ** -127, "f32") is None  # and its reciprocal is not finite
    assert recip(2.0 ** 15, "f16") is None and recip(2.0 ** 14, "f16") == 2.0 ** -14


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dividing_by_a_power_of_two_is_multiplying_by_its_reciprocal_bit_for_bit(dtype):
    from linnet.passes.kernels.exact_division import reciprocal_power_of_two as recip
    name = {np.float16: "f16", np.float32: "f32", np.float64: "f64"}[dtype]
    rng = np.random.default_rng(0)
    info = np.finfo(dtype)
    with np.errstate(over="ignore"):  # f16 overflows to inf from 1e5 up: also a case
        x = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-6, 6, 2000),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.tiny),
                             float(info.tiny) * 3, float(info.max)]]).astype(dtype)
    for k in (1, 3, 12, -5):
        d = dtype(2.0 ** k)
        r = dtype(recip(float(d), name))
        with np.errstate(all="ignore"):
            assert np.array_equal((x / d).view(np.uint8), (x * r).view(np.uint8))


def test_exact_division_rewrites_kernels_by_powers_of_two_only():
    from pathlib import Path
    path = str(Path(__file__).resolve().parents[3] / "examples/layer_norm.linnet")
    for width, divisions in ((4096, 0), (768, 0)):
        compiled = compile_source(path=path, entry="layer_norm_any", bind={"R": 8, "C": width})
        kernel = next(f for f in compiled.stage("exact-division").funcs if f.kind == "kernel")
        assert len(prims(kernel, "div")) == divisions
    body = """module m
pub kernel k<N: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(1) {
    let i = iota<i32>(N)
    store(y[i], load(x[i]) / 8.0 + load(x[i]) / 3.0)
}
pub op o<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel k<N> {
    let y[i] = x[i] / 8.0 + x[i] / 3.0
    return y
}
entry main(x: Tensor[16; f32]) -> Tensor[16; f32] { return o(x) }
"""
    compiled = compile_source(body, entry="main")
    stage = compiled.stage("exact-division")
    kernel = next(f for f in stage.funcs if f.kind == "kernel")
    assert [d.args[1].value for d in prims(kernel, "div")] == [3.0]
    assert [m.args[1].value for m in prims(kernel, "mul") if isinstance(m.args[1], ir.Lit)] \
        == [0.125]
    op = next(f for f in stage.funcs if f.kind == "op")
    assert len(prims(op, "div")) == 2  # bodies print as written
