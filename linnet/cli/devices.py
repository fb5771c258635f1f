"""Where the kernels of `linnet verify` and `linnet tune` run: the GPU when there is one,
else the Triton or Pallas interpreter on the CPU.

The interpreter is chosen by the environment (`TRITON_INTERPRET=1`,
`LINNET_PALLAS_INTERPRET=1`), which Triton reads when it is imported: so these run before
anything imports Triton, and import torch or jax themselves (neither imports Triton).
"""

from __future__ import annotations

import os
import sys


def prepare_triton(device: str | None) -> str:
    """Choose the device; with no CUDA device, set TRITON_INTERPRET=1 before Triton imports."""
    import torch  # importing torch does not import triton
    cuda = torch.cuda.is_available()
    if device == "cuda" and not cuda:
        raise ValueError("--device cuda: no CUDA device is available")
    device = device or ("cuda" if cuda else "cpu")
    if device == "cpu" and "triton" not in sys.modules:
        os.environ.setdefault("TRITON_INTERPRET", "1")
    return device


def prepare_pallas() -> str:
    """Without a GPU backend for JAX, run Pallas kernels in its interpreter."""
    import jax
    if jax.default_backend() != "gpu":
        os.environ["LINNET_PALLAS_INTERPRET"] = "1"
        return "cpu"
    return "cuda"
