"""Float max and min reductions give NaN where the reduced slice holds one, on every target.

XLA's vectorised CPU reductions can skip a NaN (a row of 1000 f32 holding NaNs reduced to
-inf or to a number, seen with JAX 0.10), while PyTorch, the interpreter and onnxruntime
(through the export's `IsNaN` guard) give NaN: the JAX and StableHLO printers guard their
max and min reductions the same way.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated

jax = pytest.importorskip("jax")

PROGRAM = """module nan_rows

entry main(x: Tensor[10, 1000; f32], h: Tensor[3, 64; f64]) -> (Tensor[10; f32], Tensor[10; f32], Tensor[3; f64]) {
    let top[r] = max[c] x[r, c]
    let low[r] = min[c] x[r, c]
    let hm[r] = max[c] h[r, c]
    return (top, low, hm)
}
"""


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((10, 1000)).astype(np.float32)
    x[::2, rng.integers(0, 1000, 5)] = np.nan  # NaNs in the even rows
    h = rng.standard_normal((3, 64))
    h[1, 7] = np.nan
    return [x, h]


def _expected(x: np.ndarray, h: np.ndarray) -> list[np.ndarray]:
    return [x.max(axis=1), x.min(axis=1), h.max(axis=1)]  # NumPy propagates NaN


def _run(target: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    text = compile_source(PROGRAM, path="nan_rows.linnet", target=target).text
    if target == "stablehlo":
        from linnet.fuzz.stablehlo_run import run_stablehlo
        return list(run_stablehlo(text, *inputs))
    if target == "onnx":
        from linnet.fuzz.onnx_run import load_onnx
        return load_onnx(text)(*inputs)
    main = import_generated(text, "nan_rows", target).main
    if target == "torch":
        return [r.numpy() for r in main(*(torch.from_numpy(x) for x in inputs))]
    return [np.asarray(r) for r in main(*inputs)]


@pytest.mark.parametrize("target", ["torch", "jax", "onnx", "stablehlo"])
def test_max_and_min_reductions_are_nan_where_a_nan_is_reduced(target: str) -> None:
    if target == "onnx":
        pytest.importorskip("onnxruntime")
    inputs = _inputs()
    for got, want in zip(_run(target, inputs), _expected(*inputs)):
        assert np.array_equal(got, want, equal_nan=True), (got, want)
        assert np.isnan(got).any() and not np.isnan(got).all()


def test_the_jax_guard_is_in_bodies_and_not_in_pallas_kernels() -> None:
    text = compile_source(PROGRAM, path="nan_rows.linnet", target="jax").text
    assert text.count("jnp.isnan(") == 3
