"""emit-stablehlo (placeholder until written)."""

from __future__ import annotations


def emit_stablehlo(program, options=None):
    raise NotImplementedError("the stablehlo export is not implemented yet")
