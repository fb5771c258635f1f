"""choose-kernels: decide, for each op instance, whether its kernel or its body runs.

(Placeholder until kernels are elaborated: every op runs its body.)
"""

from __future__ import annotations

import dataclasses

from ..ir import tensor as ir


def choose_kernels(program: ir.Program, options) -> ir.Program:
    funcs = tuple(dataclasses.replace(f, kernel=None) if f.kernel else f for f in program.funcs)
    return dataclasses.replace(program, funcs=funcs)
