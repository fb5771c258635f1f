"""choose-kernels: tensor -> tensor, each op instance running its kernel or its body.

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
launching nothing would return memory nobody wrote. So is one whose stores, evaluated at
the bound sizes, miss elements of such a result (E2132, `check/kernel_cover_sizes.py`).
So is one that, at the bound sizes, launches more programs along a grid axis than the GPU
allows (E2134), or computes a signed integer outside its dtype's range, which the
memory-safety proofs assume never happens (E2133, `check/kernel_wrap.py`).

Before deciding, a tuned choice (`Options.tuning`, a `KernelTuning`; see
`kernel_tuning.py`) that matches an op instance replaces the tile generics its
header binds to literals and the kernel's launch hints; the decision above is
then made for the tuned binding. What each op instance's binding came from is
left in the program's state (`state.tuning`, a `TuningReport`) when tuning is given,
for the generated module's header.

Otherwise the choice is removed and the op's body runs. The op keeps its body
either way: it is the kernel's definition and its fallback at run time. The
next pass, `instantiate-kernels`, adds the Funcs of the kernels kept. The numerics,
the target and `--grad` are read from the compilation's `Options`, as every later pass
and printer reads them.
"""

from __future__ import annotations

from dataclasses import replace

from ...diagnostics import CompileError
from ...ir import tensor as ir
from ...ir.numerics import KERNEL_TARGETS, kernels_may_run
from .kernel_tuning import kernel_generics, tuned_library

__all__ = ["choose_kernels", "KERNEL_TARGETS"]


def choose_kernels(program: ir.Program, options) -> ir.Program:
    """Each op instance's kernel kept (it runs) or dropped (its body runs)."""
    library = program.state.kernels
    runs = kernels_may_run(options)
    report = None
    if runs:
        library, report = tuned_library(library, options)
    funcs = tuple(_tuned_choice(f, library) if _keeps(f, library, runs)
                  else replace(f, kernel=None) for f in program.funcs)
    return replace(program, funcs=funcs,
                   state=program.state.set(kernels=library, tuning=report))


def _tuned_choice(f: ir.Func, library) -> ir.Func:
    """f with its `KernelChoice` showing the generics of its (possibly tuned) binding."""
    if f.kind != "op" or f.kernel is None or f.kernel.func:
        return f
    generics = kernel_generics(library, f.name, f.kernel.generics)
    return f if generics == f.kernel.generics else replace(
        f, kernel=replace(f.kernel, generics=generics))


def _keeps(f: ir.Func, library, runs: bool) -> bool:
    """Does this Func keep its kernel? (Funcs without one keep nothing to decide.)"""
    if f.kind != "op" or f.kernel is None:
        return True
    if f.kernel.func:  # instantiated by an earlier run of the pipeline: keep or drop
        return runs
    if not (runs and library is not None and library.knows(f.name)
            and library.where_holds(f.name)):
        return False
    problem = library.overflow_problem(f.name) or library.unwritten_problem(f.name)
    if problem is not None:
        raise CompileError([problem])
    return True
