"""Kernel grids must have programs wherever a result has elements to write.

A kernel's results are fresh memory: a result written by `store` starts uninitialized
(an atomic's starts at its identity, which is the right answer for no programs). A grid
with zero or fewer programs along an axis launches nothing, so at sizes where a stored
result has elements the op would return memory nobody wrote. Dims may be 0, so `grid(R)`
with an empty result is fine; the mistake is a grid that may have no programs while a
stored result has elements. It is caught twice:

* by `check` (E2127), when the prover's sample points find sizes that the kernel's `where`
  admits, with every dimension of a stored result at least 1, where a grid size is 0 or
  less: the help names the `where` clause to add (at sizes that fail it, the op's body
  runs instead of the kernel);
* when an op instance is compiled with its kernel (`choose-kernels`, E2206): the grid is
  then a number, and a stored result's element count too. This catches what the samples
  miss (`grid(N / B - 1)` at N = 16, B = 64).
"""

from __future__ import annotations

import math

from ..diagnostics import Diagnostic, DiagnosticBag
from ..syntax import tree as t
from ..syntax.printer import print_expr
from .dim_normal_form import Dim
from .dims import Facts
from .types import TensorT, Val

STORED = "store"


def stored_results(kernel: t.Kernel, writes: dict[str, str]) -> list[t.Param]:
    """The results written by `store` (or not written at all): they start uninitialized."""
    return [r for r in kernel.results if writes.get(r.name, STORED) == STORED]


def check_grid(kernel: t.Kernel, result_types: list, writes: dict[str, str],
               types: dict[int, Val], facts: Facts, bag: DiagnosticBag) -> None:
    """E2127 at the first grid size that the samples show may have no programs while a
    stored result has elements, under the kernel's `where` facts."""
    stored = {r.name for r in stored_results(kernel, writes)}
    for result, ty in zip(kernel.results, result_types):
        if result.name not in stored or not isinstance(ty, TensorT):
            continue
        nonempty = facts
        for d in ty.dims:
            if isinstance(d, Dim):
                nonempty = nonempty.assume(d, ">=", 1)
        for g in kernel.grid:
            v = types.get(id(g))
            if v is None or v.const is None or nonempty.prove(v.const, ">=", 1):
                continue
            sizes = nonempty.counterexample(v.const, ">=", 1)
            if sizes is not None:
                _report(kernel, result, g, v.const, sizes, bag)
                return


def _report(kernel: t.Kernel, result: t.Param, g: t.Expr, size: Dim,
            sizes: dict[str, int], bag: DiagnosticBag) -> None:
    at = ", ".join(f"{k} = {v}" for k, v in sorted(sizes.items()))
    value = size.evaluate(sizes)
    bag.error("E2127", f"grid size `{size}` may have no programs while result "
              f"`{result.name}` has elements: it is {value} at {at}", g.span,
              "not provably at least 1",
              help=f"add `where {size} >= 1` to `{kernel.name}` (at sizes that fail it the "
                   "op's body runs), or make the grid cover the result")


def bound_grid_problem(kernel: t.Kernel, grid: list[int], result_shapes: list,
                       writes: dict[str, str], sizes: dict[str, int]) -> Diagnostic | None:
    """E2206 when, at the bound sizes, a grid size is 0 or less while a stored result has
    elements (`result_shapes` are the concrete shapes of the kernel's results)."""
    empty = next(((g, n) for g, n in zip(kernel.grid, grid) if n < 1), None)
    if empty is None:
        return None
    stored = {r.name for r in stored_results(kernel, writes)}
    for result, shape in zip(kernel.results, result_shapes):
        count = math.prod(shape)
        if result.name in stored and count > 0:
            g, n = empty
            at = ", ".join(f"{k} = {v}" for k, v in sizes.items())
            message = (f"the bound sizes give kernel `{kernel.name}` a grid of {n} programs "
                       f"along an axis ({at}), but its result `{result.name}` has {count} "
                       "elements to write")
            return Diagnostic("E2206", message, g.span, "no programs at these sizes",
                              help=f"add `where {print_expr(g)} >= 1` to `{kernel.name}` (at "
                                   "sizes that fail it the op's body runs), or make the grid "
                                   "cover the result")
    return None


GRID_LIMITS = (2**31 - 1, 65535, 65535)
"""The most programs a launch may have along each grid axis (CUDA's, which Triton's and
Pallas's launches on the GPU inherit)."""


def grid_limit_problem(kernel: t.Kernel, grid: list[int],
                       sizes: dict[str, int]) -> Diagnostic | None:
    """E2134 when, at the bound sizes, a grid axis has more programs than a launch allows:
    the launch would fail, or (in a program id computed past 2^31 - 1) wrap."""
    for axis, (g, n, limit) in enumerate(zip(kernel.grid, grid, GRID_LIMITS)):
        if n > limit:
            at = ", ".join(f"{k} = {v}" for k, v in sizes.items())
            message = (f"the bound sizes give kernel `{kernel.name}` {n} programs along grid "
                       f"axis {axis} ({at}), more than a launch allows there ({limit})")
            help = ("take more elements per program (a larger tile), or move the count to "
                    "grid axis 0, which allows 2^31 - 1" if axis else
                    "take more elements per program (a larger tile or a loop)")
            return Diagnostic("E2134", message, g.span, f"at most {limit} programs",
                              help=help)
    return None

