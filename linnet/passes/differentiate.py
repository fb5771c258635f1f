"""differentiate: under `--grad`, the entry's reverse mode (placeholder until written)."""

from __future__ import annotations

from ..ir import tensor as ir


def differentiate(program: ir.Program, options) -> ir.Program:
    if not getattr(options, "grad", False):
        return program
    raise NotImplementedError("--grad is not implemented yet")
