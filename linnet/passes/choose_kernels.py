"""choose-kernels: tensor IR -> tensor IR, each op instance running its kernel or its body.

An op Func keeps its `KernelChoice` (its kernel runs) when all of these hold:

* `--numerics` is not "exact" (exact means op bodies only, no kernels at all),
  and the program is not compiled `--grad` (gradients come from bodies and
  `grad` clauses);
* the target runs kernels (`KERNEL_TARGETS`: generated PyTorch launches Triton,
  generated JAX launches Pallas; every other backend runs bodies);
* the kernel's `where` clauses hold for the bound generics (where they fail the
  body runs, silently: that is the language's rule, not an error).

A kept kernel whose grid, at the bound sizes, has no programs along an axis while a
result written by `store` has elements is an error (E2206, `check/kernel_grids.py`):
launching nothing would return memory nobody wrote.

Otherwise the choice is removed and the op's body runs. The op keeps its body
either way: it is the kernel's definition and its fallback at run time. The
next pass, `instantiate-kernels`, adds the Funcs of the kernels kept. This pass
records ("numerics", mode) in `program.meta`, so later passes and printers know
the numerics (the precision of tile products, for one).
"""

from __future__ import annotations

from dataclasses import replace

from ..diagnostics import CompileError
from ..ir import tensor as ir

KERNEL_TARGETS = ("torch", "jax")


def choose_kernels(program: ir.Program, options) -> ir.Program:
    """Each op instance's kernel kept (it runs) or dropped (its body runs)."""
    library = dict(program.meta).get("kernels")
    numerics = getattr(options, "numerics", "equivalent")
    meta = tuple(m for m in program.meta if m[0] != "numerics") + (("numerics", numerics),)
    runs = (numerics != "exact" and not getattr(options, "grad", False)
            and getattr(options, "target", "torch") in KERNEL_TARGETS)
    funcs = tuple(f if _keeps(f, library, runs) else replace(f, kernel=None)
                  for f in program.funcs)
    return replace(program, funcs=funcs, meta=meta)


def _keeps(f: ir.Func, library, runs: bool) -> bool:
    """Does this Func keep its kernel? (Funcs without one keep nothing to decide.)"""
    if f.kind != "op" or f.kernel is None:
        return True
    if f.kernel.func:  # instantiated by an earlier run of the pipeline: keep or drop
        return runs
    if not (runs and library is not None and library.knows(f.name)
            and library.where_holds(f.name)):
        return False
    problem = library.grid_problem(f.name)
    if problem is not None:
        raise CompileError([problem])
    return True
