"""Printers from the last IR to target code.

`torch_ops` is the table of how each tensor-IR primitive is computed with PyTorch, shared
by the PyTorch printer (`emit_torch`) and the PyTorch interpreter (`linnet.torch.interpreter`).
"""

from .torch import emit_torch

__all__ = ["emit_torch"]
