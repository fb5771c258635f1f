"""What the tests of the standard library share: the targets each program runs on, and
seeded float32 inputs."""

from __future__ import annotations

from typing import Callable

import numpy as np

TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")


def normals(seed: int) -> Callable[..., np.ndarray]:
    """`normal(*shape)`: standard normal float32 arrays from a generator seeded once, so a
    test module's inputs are the same on every run."""
    rng = np.random.default_rng(seed)
    return lambda *shape: rng.standard_normal(shape).astype(np.float32)
