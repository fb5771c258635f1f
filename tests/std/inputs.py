"""What the tests of the standard library share: the targets each program runs on, their
runtimes, and seeded float32 inputs."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")


def target_runtimes() -> Any:
    """torch, once the calling test module is skipped where a target's runtime (torch, JAX,
    onnxruntime) is not installed."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")
    pytest.importorskip("onnxruntime")
    return torch


def normals(seed: int) -> Callable[..., np.ndarray]:
    """`normal(*shape)`: standard normal float32 arrays from a generator seeded once, so a
    test module's inputs are the same on every run."""
    rng = np.random.default_rng(seed)
    return lambda *shape: rng.standard_normal(shape).astype(np.float32)
