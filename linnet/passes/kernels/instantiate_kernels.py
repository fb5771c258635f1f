"""instantiate-kernels: tensor -> tensor-kernels, a Func for every kernel an op runs.

`elaborate` leaves a `KernelLibrary` in the program's state (`state.kernels`) and a
`KernelChoice` on each op instance that binds a kernel; `choose-kernels` has
removed the choices whose body runs instead. For each choice left, the kernel is
translated (`elaborate_kernel.py`, once per kernel instance however many ops bind
it), its Func and the fns it calls are added to the program just before the first
op that uses it, and `KernelChoice.func` names it. The library leaves the state: no later pass or printer
reads the checker's analysis.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import tensor as ir


def instantiate_kernels(program: ir.Program) -> ir.Program:
    """Each kept kernel choice given its kernel Func."""
    adder = _Instances(program.state.kernels, {f.name for f in program.funcs})
    funcs = tuple(g for f in program.funcs for g in adder.func(f))
    return replace(program, funcs=funcs, state=program.state.set(kernels=None))


class _Instances:
    """Memoizes the kernel Func of each kernel instance."""

    def __init__(self, library, taken: set[str]) -> None:
        self.library = library
        self.taken = taken
        self.done: dict[tuple, str] = {}  # kernel instance key -> kernel Func name

    def func(self, f: ir.Func) -> list[ir.Func]:
        """f, its kernel named, preceded by any kernel Func it is the first to use."""
        if f.kind != "op" or f.kernel is None or f.kernel.func:
            return [f]
        if self.library is None or not self.library.knows(f.name):
            raise ValueError(f"{f.name}: a kernel choice with no kernel in the library")
        key = self.library.instance_key(f.name)
        added: list[ir.Func] = []
        if key not in self.done:
            added = list(self.library.elaborate(f.name, self.taken))
            self.taken |= {g.name for g in added}
            self.done[key] = added[-1].name
        return added + [replace(f, kernel=replace(f.kernel, func=self.done[key]))]
