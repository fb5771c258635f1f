"""`std.quant` against NumPy on every target: int8 and int4 rows, int4 groups with zero
points (and `linear_int4_groups` with a bias), and MXFP4 blocks with scales at both ends
of their clamp."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz.backends import run_entry

torch = pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

PROGRAM = Path(__file__).resolve().parent / "quant_uses.linnet"
TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")
RNG = np.random.default_rng(3)
FP4 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def run(entry: str, target: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return run_entry(PROGRAM, entry, target, inputs)


def signed_nibbles(packed: np.ndarray) -> np.ndarray:
    u = packed.view(np.uint8)
    low, high = (u & 15).astype(np.int8), (u >> 4).astype(np.int8)
    low, high = np.where(low > 7, low - 16, low), np.where(high > 7, high - 16, high)
    return np.stack([low, high], -1).reshape(packed.shape[0], -1).astype(np.int8)


@pytest.mark.parametrize("target", TARGETS)
def test_int8_and_int4_weights(target: str) -> None:
    q = RNG.integers(-128, 128, (3, 4)).astype(np.int8)
    s = RNG.random(3).astype(np.float32)
    p = RNG.integers(-128, 128, (3, 2)).astype(np.int8)
    g = RNG.integers(0, 256, (2, 3, 2)).astype(np.uint8)
    gs = RNG.random((2, 3)).astype(np.float32)
    gz = RNG.integers(0, 16, (2, 3)).astype(np.uint8)
    x, b = RNG.standard_normal((5, 12)).astype(np.float32), RNG.standard_normal(2).astype(np.float32)
    unpacked = signed_nibbles(p)
    nibbles = np.stack([g & 15, g >> 4], -1).astype(np.float32)
    groups = ((nibbles - gz[:, :, None, None]) * gs[:, :, None, None]).reshape(2, 12)
    got = run("main", target, [q, s, p, g, gs, gz, x, b])
    np.testing.assert_array_equal(got[0], q * s[:, None])
    np.testing.assert_array_equal(got[1], unpacked)
    np.testing.assert_array_equal(got[2], unpacked * s[:, None])
    np.testing.assert_array_equal(got[3], groups)
    np.testing.assert_allclose(got[4], x @ groups.T + b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_mxfp4_blocks(target: str) -> None:
    blocks = RNG.integers(0, 256, (2, 3, 2, 16)).astype(np.uint8)
    scales = RNG.integers(110, 140, (2, 3, 2)).astype(np.uint8)
    scales[0, 0] = [0, 255]  # clamped to 2^-62 and 2^62
    values = np.stack([FP4[blocks & 15], FP4[blocks >> 4]], -1).reshape(2, 3, 2, 32)
    power = np.ldexp(1.0, np.clip(scales.astype(np.int64) - 127, -62, 62))[..., None]
    expected = (values * power).reshape(2, 3, 64).astype(np.float32)
    (got,) = run("mxfp4", target, [blocks, scales])
    np.testing.assert_array_equal(got, expected)
