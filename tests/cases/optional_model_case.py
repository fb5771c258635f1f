"""examples/optional_model.linnet as the loader tests use it: checkpoints holding different
sets of its optional members, and its entries in NumPy (float64) reading the same set.

`tests/torch/test_block_load.py`, `tests/jax/test_block_load.py` and
`tests/equivalence/test_optional_model.py` import it by name (tests/conftest.py puts
`tests/cases` on the path).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

PROGRAM = Path(__file__).resolve().parents[2] / "examples" / "optional_model.linnet"
L, H, V = 2, 4, 5  # the block's defaults
REQUIRED = ["embed"] + [f"layers.{k}.{n}" for k in range(L) for n in ("up", "down")]
HEAD = ["head.up", "head.down"]
CHECKPOINTS = {
    "bare": REQUIRED,
    "everything": REQUIRED + ["out_bias", "layers.0.up_bias", "layers.1.up_bias", *HEAD,
                              "head.up_bias"],
    "mixed": REQUIRED + ["out_bias", "layers.1.up_bias", *HEAD],
    "half a head": REQUIRED + ["layers.0.up_bias", "head.up", "head.up_bias"],
}


def checkpoint(name: str | list[str], seed: int = 0) -> dict[str, np.ndarray]:
    """The weights of the checkpoint `name` (or holding exactly these paths), in manifest
    order (f32)."""
    paths = CHECKPOINTS[name] if isinstance(name, str) else name
    rng = np.random.default_rng(seed)
    full = {"embed": rng.standard_normal((V, H)), "out_bias": rng.standard_normal(V)}
    for prefix in [f"layers.{k}." for k in range(L)] + ["head."]:
        full[prefix + "up"] = rng.standard_normal((2 * H, H)) / 2
        full[prefix + "up_bias"] = rng.standard_normal(2 * H) / 2
        full[prefix + "down"] = rng.standard_normal((H, 2 * H)) / 2
    return {p: v.astype(np.float32) for p, v in full.items() if p in paths}


def has_head(w: dict) -> bool:
    return all(p in w for p in HEAD)


def _mlp(x: np.ndarray, w: dict, prefix: str) -> np.ndarray:
    pre = x @ np.asarray(w[prefix + "up"], np.float64).T
    if prefix + "up_bias" in w:
        pre = pre + np.asarray(w[prefix + "up_bias"], np.float64)
    return np.tanh(pre) @ np.asarray(w[prefix + "down"], np.float64).T


def _out(z: np.ndarray, w: dict) -> np.ndarray:
    y = z @ np.asarray(w["embed"], np.float64).T
    return y + np.asarray(w["out_bias"], np.float64) if "out_bias" in w else y


def main(x: np.ndarray, w: dict) -> np.ndarray:
    """The entry `main`: each layer added in turn, the head if present, the logits."""
    y = np.asarray(x, np.float64)
    for k in range(L):
        y = y + _mlp(y, w, f"layers.{k}.")
    return _out(_mlp(y, w, "head.") if has_head(w) else y, w)


def loss(x: np.ndarray, w: dict) -> tuple[float, np.ndarray, np.ndarray | None]:
    """The entry `loss`, and its gradients with respect to `embed` and `out_bias` (None
    when absent): the loss is sum(y * y) of y = z embed^T + out_bias."""
    x = np.asarray(x, np.float64)
    z = _mlp(x, w, "head.") if has_head(w) else x
    y = _out(z, w)
    d_out = 2 * y.sum(0) if "out_bias" in w else None
    return float((y * y).sum()), 2 * y.T @ z, d_out
