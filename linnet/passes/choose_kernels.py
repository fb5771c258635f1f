"""choose-kernels: tensor IR -> tensor IR, each op instance running its kernel or its body.

An op Func with a `KernelChoice` runs its kernel when all of these hold:

* `--numerics` is not "exact" (exact means op bodies only, no kernels at all),
  and the program is not compiled `--grad` (gradients come from bodies and
  `grad` clauses);
* the target runs kernels (`KERNEL_TARGETS`: generated PyTorch launches Triton,
  generated JAX launches Pallas; every other backend runs bodies);
* the kernel's `where` clauses hold for the bound generics (where they fail the
  body runs, silently: that is the language's rule, not an error).

Then the kernel is translated (`elaborate_kernel.py`, once per kernel instance
however many ops bind it), its Func and the fns it calls are added to the
program just before the first op that uses it, and `KernelChoice.func` names
it. Otherwise the choice is removed and the op's body runs. The op keeps its
body either way: it is the kernel's definition and its fallback at run time.

`elaborate` leaves what is needed to translate kernels in `program.meta`
("kernels"); this pass takes it out and records ("numerics", mode) instead, so
printers know the numerics (the precision of tile products, for one).
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import tensor as ir

KERNEL_TARGETS = ("torch", "jax")


def choose_kernels(program: ir.Program, options) -> ir.Program:
    """Each op instance's kernel chosen (its Func added) or dropped (its body runs)."""
    library = dict(program.meta).get("kernels")
    numerics = getattr(options, "numerics", "equivalent")
    meta = tuple(m for m in program.meta if m[0] not in ("kernels", "numerics"))
    meta += (("numerics", numerics),)
    runs = (numerics != "exact" and not getattr(options, "grad", False)
            and getattr(options, "target", "torch") in KERNEL_TARGETS)
    chooser = _Chooser(library if runs else None, {f.name for f in program.funcs}, runs)
    funcs = [g for f in program.funcs for g in chooser.func(f)]
    return replace(program, funcs=tuple(funcs), meta=meta)


class _Chooser:
    """Decides per op Func; memoizes the kernel Func of each kernel instance."""

    def __init__(self, library, taken: set[str], runs: bool) -> None:
        self.library = library
        self.taken = taken
        self.runs = runs
        self.done: dict[tuple, str] = {}  # kernel instance key -> kernel Func name

    def func(self, f: ir.Func) -> list[ir.Func]:
        """f, with its choice settled, preceded by any kernel Func it is the first to use."""
        if f.kind != "op" or f.kernel is None:
            return [f]
        if f.kernel.func:  # chosen by an earlier run of this pass: keep or drop
            return [f] if self.runs else [replace(f, kernel=None)]
        if self.library is None or not self.library.knows(f.name) \
                or not self.library.where_holds(f.name):
            return [replace(f, kernel=None)]
        key = self.library.instance_key(f.name)
        added: list[ir.Func] = []
        if key not in self.done:
            added = list(self.library.elaborate(f.name, self.taken))
            self.taken |= {g.name for g in added}
            self.done[key] = added[-1].name
        return added + [replace(f, kernel=replace(f.kernel, func=self.done[key]))]
