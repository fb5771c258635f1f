"""examples/block_model.linnet as the tests of the loaders use it: its path, sizes, random
weights by parameter path, and its `mix` function in NumPy (float64).

`tests/torch/test_block_load.py`, `tests/jax/test_block_load.py` and
`tests/equivalence/test_block_model.py` import it by name (tests/conftest.py puts
`tests/cases` on the path).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

PROGRAM = Path(__file__).resolve().parents[2] / "examples" / "block_model.linnet"
H, V = 4, 5  # the block's defaults


def weights(layers: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Every param and buffer by path, in manifest order (no state)."""
    rng = np.random.default_rng(seed)
    w = {"embed": rng.standard_normal((V, H)).astype(np.float32)}
    for k in range(layers):
        w[f"layers.{k}.up"] = (rng.standard_normal((2 * H, H)) / 2).astype(np.float32)
        w[f"layers.{k}.down"] = (rng.standard_normal((H, 2 * H)) / 2).astype(np.float32)
        w[f"layers.{k}.scale"] = rng.uniform(0.5, 1.5, H).astype(np.float32)
    return w


def mixed(x: np.ndarray, w: dict[str, np.ndarray], layers: int) -> np.ndarray:
    """The block's `mix` of x: each layer's `forward` added in turn."""
    y = x.astype(np.float64)
    for k in range(layers):
        h = np.tanh(y @ w[f"layers.{k}.up"].T.astype(np.float64))
        y = y + (h @ w[f"layers.{k}.down"].T) * w[f"layers.{k}.scale"]
    return y
