"""`std.nn.moe` and the expert and group parts of `std.quant` against NumPy on every
target: each row's chosen experts, shared inputs, the weighted combination, MXFP4 expert
weights, inputs taken in another order, and `Int4GroupLinear` with and without its
optional `order`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz.backends import run_entry

torch = pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

import linnet.torch as lt  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "moe_uses.linnet"
TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")
RNG = np.random.default_rng(11)
FP4 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def run(target: str, entry: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return run_entry(PROGRAM, entry, target, inputs)


def mxfp4_weight(blocks: np.ndarray, scales: np.ndarray) -> np.ndarray:
    values = np.stack([FP4[blocks & 15], FP4[blocks >> 4]], -1).reshape(*blocks.shape[:3], 32)
    power = np.ldexp(1.0, np.clip(scales.astype(np.int64) - 127, -62, 62))[..., None]
    return (values * power).reshape(*blocks.shape[:2], -1)


def assert_close(got: list[np.ndarray], expected: list[np.ndarray]) -> None:
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=2e-6, atol=2e-6 * np.abs(e).max(),
                                   err_msg=f"result {k}")


@pytest.mark.parametrize("target", TARGETS)
def test_experts(target: str) -> None:
    x, xs, w, wt = normal(3, 2, 5), normal(3, 5), normal(4, 6, 5), normal(3, 2)
    experts = RNG.integers(0, 4, (3, 2)).astype(np.int64)
    order = RNG.permutation(5).astype(np.int32)
    chosen = w[experts]  # [R, K, Out, In]
    assert_close(run(target, "main", [x, xs, w, experts, wt, order]), [
        np.einsum("rki,rkoi->rko", x, chosen), np.einsum("ri,rkoi->rko", xs, chosen),
        np.einsum("rk,rki,rkoi->ro", wt, x, chosen), xs[:, order]])


@pytest.mark.parametrize("target", TARGETS)
def test_mxfp4_experts(target: str) -> None:
    x, x1, xs, wt = normal(3, 2, 32), normal(3, 1, 32), normal(3, 32), normal(3, 2)
    blocks = RNG.integers(0, 256, (4, 6, 1, 16)).astype(np.uint8)
    scales = RNG.integers(120, 130, (4, 6, 1)).astype(np.uint8)
    experts = RNG.integers(0, 4, (3, 2)).astype(np.int64)
    chosen = mxfp4_weight(blocks, scales)[experts]
    assert_close(run(target, "mx", [x, x1, xs, blocks, scales, experts, wt]), [
        np.einsum("rki,rkoi->rko", x, chosen), np.einsum("ri,rkoi->rko", x1[:, 0], chosen),
        np.einsum("ri,rkoi->rko", xs, chosen), np.einsum("rk,rki,rkoi->ro", wt, x, chosen)])


@pytest.mark.parametrize("ordered", [False, True], ids=["no-order", "order"])
def test_int4_group_linear(ordered: bool) -> None:
    weights = {"layer.weight": torch.randint(0, 256, (3, 2, 2), dtype=torch.uint8),
               "layer.scale": torch.rand(3, 2), "layer.zero": torch.randint(0, 16, (3, 2),
                                                                          dtype=torch.uint8)}
    order = torch.randperm(8, dtype=torch.int32)
    if ordered:
        weights["layer.order"] = order
    model = lt.load(str(PROGRAM), root="Grouped", weights=weights)
    x = torch.randn(2, 8)
    packed = weights["layer.weight"].numpy()
    nibbles = np.stack([packed & 15, packed >> 4], -1).astype(np.float32)
    dense = ((nibbles - weights["layer.zero"].numpy()[:, :, None, None])
             * weights["layer.scale"].numpy()[:, :, None, None]).reshape(3, 8)
    inputs = x.numpy()[:, order.numpy()] if ordered else x.numpy()
    np.testing.assert_allclose(model.forward(x).detach().numpy(), inputs @ dense.T,
                               rtol=1e-5, atol=1e-5)
