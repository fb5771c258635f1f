"""The primitive `erf` (linnet/prims/math.py): the prelude's `erf(x)`, on every target, in
kernels, in the oracle, and its derivative 2/sqrt(pi) exp(-x^2), against `math.erf`."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from linnet.pipeline import compile_source
from linnet.fuzz.backends import as_numpy, compile_entry, loader
from linnet.fuzz.oracle import evaluate_source
from programs import diagnostics_of

POINTS = [-2.5, -1.0, -0.3, 0.0, 0.2, 0.5, 1.0, 3.0]
EXPECTED = [math.erf(x) for x in POINTS]

ERF = """module e

entry main(x: Tensor[8; f32], y: Tensor[8; f64]) -> (Tensor[8; f32], Tensor[8; f64]) {
    return (erf(x), erf(y))
}
"""
INPUTS = (torch.tensor(POINTS, dtype=torch.float32), torch.tensor(POINTS, dtype=torch.float64))


@pytest.mark.parametrize("target", ["interpreter", "torch", "jax", "onnx", "stablehlo"])
def test_erf_on_every_target(target):
    compiled = compile_entry(ERF, "e.linnet", "main", {}, target)
    f32, f64 = (as_numpy(x) for x in loader(target)(compiled, "main")(*INPUTS))
    assert np.allclose(f32, EXPECTED, rtol=1e-6, atol=1e-7)
    # ONNX computes an f64 erf in f32: onnxruntime has no f64 Erf
    assert np.allclose(f64, EXPECTED, rtol=1e-6 if target == "onnx" else 1e-14, atol=1e-7)


def test_the_oracle_computes_erf():
    f32, f64 = evaluate_source(ERF, "main", {}, [x.numpy() for x in INPUTS])
    assert f64.tolist() == EXPECTED
    # f32: erf of each f32 input, computed in f64 and rounded once
    rounded = [float(np.float32(math.erf(float(np.float32(x))))) for x in POINTS]
    assert f32.tolist() == rounded


def test_erf_takes_floats_only(tmp_path):
    text = "module m\n\nentry main(a: Tensor[4; i32]) -> Tensor[4; i32] {\n    return erf(a)\n}\n"
    assert diagnostics_of(tmp_path, text) == [("E2112", "a")]


def test_the_gradient_of_erf_is_two_over_root_pi_exp_minus_x_squared():
    text = "module g\n\nentry main(x: Tensor[8; f64]) -> f64 {\n    return sum[i] erf(x[i])\n}\n"
    compiled = compile_entry(text, "g.linnet", "main", {}, "torch", grad=True)
    loss, grad = loader("torch")(compiled, "main")(INPUTS[1])
    assert math.isclose(float(loss), sum(EXPECTED), rel_tol=1e-14)
    slope = [2 / math.sqrt(math.pi) * math.exp(-x * x) for x in POINTS]
    assert np.allclose(as_numpy(grad), slope, rtol=1e-14, atol=0)


KERNEL = """module ke

pub kernel erf_blocks<N: Dim, B: Dim>(x: Tensor[N; f32]) -> (y: Tensor[N; f32]) grid((N + B - 1) / B)
where B >= 1 {
    let offs = program_id(0) * B + iota<i32>(B)
    let mask = offs < N
    store(y[offs], erf(load(x[offs], mask, 0.0)), mask)
}

pub op erfs<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel erf_blocks<N, 4> {
    return erf(x)
}

entry main(x: Tensor[8; f32]) -> Tensor[8; f32] {
    return erfs(x)
}
"""


@pytest.mark.parametrize("target, call", [("torch", "tl.erf("), ("jax", "lax.erf(")])
def test_erf_in_a_kernel(target, call, monkeypatch):
    monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    text = compile_source(KERNEL, path="ke.linnet", target=target, entry="main",
                          tuning=False).text
    kernel = text[text.index("_kernel("):]
    assert call in kernel
    compiled = compile_entry(KERNEL, "ke.linnet", "main", {}, target, numerics="equivalent")
    out = loader(target)(compiled, "main")(INPUTS[0])[0]
    assert np.allclose(as_numpy(out), EXPECTED, rtol=1e-6, atol=1e-7)
