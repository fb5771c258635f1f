"""Tuned kernel choices as pipeline data: tile generics and launch hints per op instance.

An op header binds its kernel's generics (`kernel matmul_tiles<M, N, K, f32, 128, 128, 32>`)
and the kernel writes its launch hints (`warps(8) stages(3)`). The best values depend on
the device and the sizes, so a compilation may carry a `KernelTuning` (`Options.tuning`):
recorded choices, each for one op at one binding of its generics under one numerics, all
measured on one device. `choose-kernels` applies it through `apply_tuning`, before deciding
which kernels run: a matching choice replaces the values of the kernel's tile choices (its
`Dim` generics that none of its parameter or result types mentions, whether the header
binds them to literals or to expressions of the op's sizes) and the hints in the op
instance's `BoundKernel`; the rest of the pipeline sees an ordinary binding.

A choice that no longer fits the program (the op binds another kernel now, a generic it
names is no longer a tile choice of the kernel, the kernel's `where` fails, a tile is not a
power of two, the grid leaves a result unwritten) is ignored: the header's choice is used
and the `TuningReport` left in the program's state (`state.tuning`, printed in the
generated module's header) says why. Never an error: a tuning file is advice, the program is the contract.

`tunable_generics`, `header_hints` and `choice_problem` are what `linnet tune` uses to
build and filter its candidates, so the tuner and the compiler agree on what is valid.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

import math

from ...check.dim_normal_form import Dim
from ...check.kernel_tiles import is_tile_size
from ...check.signatures import Binding
from ...diagnostics import CompileError
from ...ir.walk import all_binds
from ...syntax import tree as t
from ...syntax.edit import nodes
from ..front.elaborate_kernel import KernelChecks
from ..front.instances import (BoundKernel, binding_text, instance_checker, instance_source,
                               module_path)


#: The launch hints and tiles a choice may take: Triton launches at most 32 warps (1024
#: threads) and pipelines a handful of stages; a tile holds at most 2**20 elements
#: (Triton's TRITON_MAX_TENSOR_NUMEL). A tuning file outside them is refused when read.
MAX_WARPS = 32
MAX_STAGES = 8
MAX_TILE_ELEMENTS = 2 ** 20


def hint_problem(name: str, value: object) -> str | None:
    """Why `value` cannot be the launch hint `name` ("warps" or "stages"), or None."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return "a positive integer"
    if name == "warps" and (not is_tile_size(value) or value > MAX_WARPS):
        return f"a power of two up to {MAX_WARPS}"
    if name == "stages" and value > MAX_STAGES:
        return f"an integer from 1 to {MAX_STAGES}"
    return None


def tile_problem(value: object) -> str | None:
    """Why `value` cannot be a tile generic's value, or None."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return "a positive integer"
    if value > MAX_TILE_ELEMENTS:
        return f"at most {MAX_TILE_ELEMENTS} (2**20, the largest tile)"
    return None


@dataclass(frozen=True)
class TunedChoice:
    """Tile generics and launch hints chosen for one op at one binding, under one numerics.

    `op` is the op's module path and name (`examples.matmul.matmul`), `binding` its
    generics as `binding_text` writes them (`M=4096 N=4096 K=4096`), `kernel` the kernel
    the op bound when the choice was made. Hints left None keep the kernel's."""
    op: str
    binding: str
    numerics: str
    kernel: str
    generics: tuple[tuple[str, int], ...] = ()
    warps: int | None = None
    stages: int | None = None

    def describe(self) -> str:
        """`BM=64 BN=128 BK=32 warps=4 stages=3`."""
        parts = [f"{n}={v}" for n, v in self.generics]
        parts += [f"{n}={v}" for n, v in (("warps", self.warps), ("stages", self.stages))
                  if v is not None]
        return " ".join(parts) or "no changes"


@dataclass(frozen=True)
class KernelTuning:
    """The recorded choices of one device, from one source (a tuning file's path).

    `note`, when set, is said for every op instead of a lookup (the file records several
    devices and none was named, say)."""
    choices: tuple[TunedChoice, ...] = ()
    source: str = ""
    device: str = ""
    note: str = ""

    def find(self, op: str, binding: str, numerics: str) -> TunedChoice | None:
        return next((c for c in self.choices if (c.op, c.binding, c.numerics)
                     == (op, binding, numerics)), None)

    def numerics_recorded(self, op: str, binding: str) -> list[str]:
        return sorted(c.numerics for c in self.choices if (c.op, c.binding) == (op, binding))


@dataclass(frozen=True)
class TuningNote:
    """What one op instance's kernel binding came from."""
    op: str  # the op's module path and name, `examples.matmul.matmul`
    binding: str  # `M=4096 N=4096 K=4096`
    label: str  # `op matmul<M=4096, N=4096, K=4096>`
    text: str  # `tuned: BM=64 ... from PATH for DEVICE`, or `header's choice (...)`
    tuned: bool


@dataclass(frozen=True)
class TuningReport:
    """Every op instance's note, one per line (the generated module's header prints it)."""
    notes: tuple[TuningNote, ...]

    def __str__(self) -> str:
        return "\n".join(f"{n.label}: {n.text}" for n in self.notes)


def apply_tuning(library, tuning: KernelTuning, numerics: str):
    """The library with each matching, still valid choice applied, and the report.

    `library` is `elaborate`'s `KernelLibrary`; a new one is returned (the old one is
    unchanged, as passes are pure)."""
    changed: dict[str, BoundKernel] = {}
    notes = []
    for name, bound in library.bindings.items():
        op_id, where = op_identity(library.analysis, bound)
        choice = None if tuning.note else tuning.find(op_id, where, numerics)
        problem = None if choice is None else choice_problem(library.analysis, bound, choice,
                                                             library.checks)
        if choice is None:
            text = _untuned(tuning, op_id, where, numerics)
        elif problem is not None:
            text = f"header's choice (the choice in {tuning.source} is ignored: {problem})"
        else:
            changed[name] = with_choice(bound, choice)
            choice = in_kernel_order(choice, bound.kernel)
            text = f"tuned: {choice.describe()} from {tuning.source} for {tuning.device}"
        label = instance_source("op", bound.op, bound.op_key)
        notes.append(TuningNote(op_id, where, label, text, name in changed))
    return library.with_bindings(changed), TuningReport(tuple(notes))


def _untuned(tuning: KernelTuning, op_id: str, where: str, numerics: str) -> str:
    if tuning.note:
        return f"header's choice ({tuning.note})"
    other = tuning.numerics_recorded(op_id, where)
    elsewhere = (f"; it has one under numerics {', '.join(other)}" if other else "")
    return (f"header's choice ({tuning.source} has no choice for it on {tuning.device} "
            f"under numerics {numerics}{elsewhere})")


def in_kernel_order(choice: TunedChoice, kernel: t.Kernel) -> TunedChoice:
    """The choice with its generics in the kernel's order (files keep them sorted)."""
    order = {g.name: k for k, g in enumerate(kernel.generics)}
    return replace(choice, generics=tuple(sorted(choice.generics,
                                                 key=lambda g: order.get(g[0], len(order)))))


def op_identity(analysis, bound: BoundKernel) -> tuple[str, str]:
    """The op's module path and name, and its binding, as a tuning file keys them."""
    path = module_path(analysis, bound.op)
    return (f"{path}.{bound.op.name}" if path else bound.op.name), binding_text(bound.op_key)


def tunable_generics(bound: BoundKernel) -> dict[str, int]:
    """The kernel's tile choices, with the header's value of each at this binding: its
    `Dim` generics that appear in none of its parameter or result types. Those that do
    (`M`, `N`, `K` in `x: Tensor[M, K; f32]`) are sizes: changing one would change what
    the kernel computes on. A choice's header argument may be a literal (`128`) or an
    expression of the op's sizes (`min(128, next_pow2(M))`); a tuned choice is per
    binding, so the expression's value there is just the header's default."""
    sizes = size_names(bound.kernel)
    args = bound.op.kernel.args or ()
    found = {}
    for g, a in zip(bound.kernel.generics, args):
        if g.kind != "Dim" or g.name in sizes:
            continue
        value = a.value if isinstance(a, t.IntLit) else _bound_value(bound, g.name)
        if value is not None:
            found[g.name] = value
    return found


def size_names(kernel: t.Kernel) -> set[str]:
    """The names that the kernel's parameter and result types mention."""
    return {n.id for p in kernel.params + kernel.results
            for n in nodes(p.type) if isinstance(n, t.Name)}


def not_tunable(kernel: t.Kernel, name: str) -> str:
    """Why `name` is not among the kernel's tile choices."""
    if name not in {g.name for g in kernel.generics}:
        return f"`{name}` is not a generic of `{kernel.name}`"
    if name in size_names(kernel):
        return (f"`{name}` is a size of `{kernel.name}`, not a tile choice (its parameter "
                f"or result types mention it)")
    return f"`{name}` is not a `Dim` tile choice of `{kernel.name}`"


def _bound_value(bound: BoundKernel, name: str) -> int | None:
    dim = bound.binding.dims.get(name)
    return None if dim is None else dim.as_int()


def header_hints(analysis, bound: BoundKernel) -> tuple[int | None, int | None]:
    """The kernel's `warps(...)` and `stages(...)` at this binding (None where unwritten)."""
    checker, _ = instance_checker(analysis, bound.kernel, bound.binding)

    def value(e) -> int | None:
        return None if e is None else checker.expr(e).const.as_int()

    return value(bound.kernel.warps), value(bound.kernel.stages)


def with_choice(bound: BoundKernel, choice: TunedChoice) -> BoundKernel:
    """The binding with the choice's generics and hints in place of the header's."""
    dims = {**bound.binding.dims, **{n: Dim.const(v) for n, v in choice.generics}}
    binding = Binding(dims, dict(bound.binding.dtypes), dict(bound.binding.packs))
    return replace(bound, binding=binding,
                   warps=choice.warps if choice.warps is not None else bound.warps,
                   stages=choice.stages if choice.stages is not None else bound.stages)


def choice_problem(analysis, bound: BoundKernel, choice: TunedChoice,
                   checks=None) -> str | None:
    """Why the choice cannot be used for this binding, or None when it can. `checks` (a
    `KernelChecks`, a library's) keeps the kernel instance checked for the passes after."""
    checks = checks if checks is not None else KernelChecks(analysis)
    if choice.kernel != bound.kernel.name:
        return f"it is for kernel `{choice.kernel}`, and the op binds `{bound.kernel.name}`"
    tunable = tunable_generics(bound)
    for name, value in choice.generics:
        if name not in tunable:
            return not_tunable(bound.kernel, name)
        if tile_problem(value) is not None:
            return f"`{name}={value}` is not {tile_problem(value)}"
    for hint, value in (("warps", choice.warps), ("stages", choice.stages)):
        if value is not None and hint_problem(hint, value) is not None:
            return f"`{hint}={value}` is not {hint_problem(hint, value)}"
    chosen = with_choice(bound, choice)
    failing = checks.failing_where(chosen.kernel, chosen.binding)
    if failing is not None:
        return f"`{bound.kernel.name}`'s `where {failing}` fails"
    if checks.unwritten_problem(chosen.kernel, chosen.binding) is not None:
        return f"the grid leaves a result unwritten with {choice.describe()}"
    try:
        funcs = checks.elaborate(chosen.kernel, chosen.binding)
    except CompileError as err:
        first = err.diagnostics[0]
        return f"{first.code}: {first.message}"
    largest = largest_tile(funcs)
    if largest > MAX_TILE_ELEMENTS:
        return (f"a tile of {largest} elements with {choice.describe()} (a tile holds at "
                f"most {MAX_TILE_ELEMENTS})")
    return None


def largest_tile(funcs) -> int:
    """The most elements any value of the kernel Funcs' bodies holds."""
    shapes = [getattr(b.var.type, "shape", ()) for f in funcs for b in all_binds(f.body)]
    sizes = [math.prod(s) for s in shapes if all(isinstance(d, int) for d in s)]
    return max(sizes, default=1)


def tuned_library(library, options) -> tuple[object, "TuningReport | None"]:
    """choose-kernels' use: the library with `options.tuning` applied, and the report for
    the program's state; the library unchanged and None when no tuning is given."""
    if options.tuning is None or library is None or not library.bindings:
        return library, None
    return apply_tuning(library, options.tuning, options.numerics)


def kernel_generics(library, name: str, fallback: tuple) -> tuple:
    """The op Func's `KernelChoice.generics` after tuning (the library's binding)."""
    bound: Mapping | None = getattr(library, "bindings", None)
    return bound[name].generics if bound is not None and name in bound else fallback
