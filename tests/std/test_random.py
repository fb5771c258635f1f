"""`std.random` is bit for bit `jax.random` (threefry-2x32, partitionable): bits, split,
fold_in and uniform equal JAX's for the same key on every target; normal and categorical
are what their definitions (Box-Muller, Gumbel-max on those uniforms) compute in NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz.backends import as_numpy, compile_entry, loader

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

PROGRAM = Path(__file__).resolve().parent / "random_uses.linnet"
TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")


def words(key) -> np.ndarray:
    return np.asarray(jax.random.key_data(key)).astype(np.int64)


@pytest.fixture(scope="module", params=TARGETS)
def main(request):
    compiled = compile_entry(PROGRAM.read_text(), str(PROGRAM), "main", {}, request.param)
    return loader(request.param)(compiled, "main")


@pytest.mark.parametrize("seed", [0, 42, 2**31 - 1])
def test_the_same_bits_as_jax_random(main, seed: int) -> None:
    key = jax.random.PRNGKey(seed)
    logits = np.random.default_rng(seed).standard_normal((3, 5)).astype(np.float32)
    got = [as_numpy(r) for r in main(torch.from_numpy(words(key)), torch.from_numpy(logits))]
    np.testing.assert_array_equal(got[0], np.asarray(jax.random.bits(key, (6,))).astype(np.int64))
    np.testing.assert_array_equal(got[1], words(jax.random.split(key, 4)))
    np.testing.assert_array_equal(got[2], words(jax.random.fold_in(key, 7)))
    np.testing.assert_array_equal(got[3], np.asarray(jax.random.uniform(key, (6,))))
    u = np.asarray(jax.random.uniform(key, (8,)), dtype=np.float64)
    normal = np.sqrt(-2 * np.log(1 - u[:4])) * np.cos(2 * np.pi * u[4:])
    np.testing.assert_allclose(got[4], normal, rtol=1e-5, atol=1e-6)
    u = np.asarray(jax.random.uniform(key, (15,)), dtype=np.float64).reshape(3, 5)
    np.testing.assert_array_equal(got[5], np.argmax(logits - np.log(-np.log(1 - u)), axis=1))
