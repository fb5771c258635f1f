"""emit-onnx (placeholder until written)."""

from __future__ import annotations


def emit_onnx(program, options=None):
    raise NotImplementedError("the onnx export is not implemented yet")
