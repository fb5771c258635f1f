"""What an op or entry takes, ready to be compiled at any sizes: `TargetSpec`, and reading
a program for one (`analyze_source`, its errors as a `ProgramError`).

Why a module of its own: the harness (`harness.py`) builds the spec of an op or a plain
entry, `block_specs.py` that of a block entry, and `jax_compare.py` runs one through JAX;
all three read this module, which reads none of them, so they form no import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ..check.dim_normal_form import Dim
from ..check.dims import Facts
from ..check.instance import Analysis, analyze_program
from ..check.types import DTYPE_KINDS, TensorT, Type
from ..check.value_types import leaves
from ..diagnostics import render
from ..errors import LinnetError
from ..syntax import tree as t
from ..syntax.program import load_program

if TYPE_CHECKING:
    from .block_specs import BlockEntry


@dataclass
class TargetSpec:
    """An op (with the entry that calls it) or an entry, ready to be compiled at any sizes.

    `where` holds the op's (or entry's) own clauses, `kernel_where` the kernel's clauses
    written in the op's generics (through the binding `kernel name<...>`), both as
    `(left, op, right)` comparisons of `Dim`s. `source` is the text to compile: the file's
    text, plus for an op a generic entry named `entry` that calls it.
    """
    path: str
    text: str = field(repr=False)
    name: str
    kind: str  # "op" or "entry"
    entry: str
    source: str = field(repr=False)
    generics: tuple[t.Generic, ...]
    params: list[tuple[str, Type]]
    result: Type | None
    where: list[tuple[Dim, str, Dim]]
    kernel: str | None = None
    kernel_where: list[tuple[Dim, str, Dim]] = field(default_factory=list)
    kernel_args: dict[str, Dim] = field(default_factory=dict)
    # an op without a `grad` clause is differentiated through its body, with or without its
    # kernel: comparing the two gradients compares the body with itself
    grad_clause: bool = True
    block: BlockEntry | None = field(default=None, repr=False, compare=False)
    """A root block's entry: its parameters at given generic values, the inputs after the
    entry's own, and how it compiles (`block_specs.py`)."""
    _facts: Facts | None = field(default=None, repr=False, compare=False)
    _op_facts: Facts | None = field(default=None, repr=False, compare=False)

    def compile_options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """compile_source's `entry`, `bind` (and, for a block entry, `root` and `present`)
        for the drawn generic values."""
        if self.block is None:
            return {"entry": self.entry, "bind": dict(values)}
        return self.block.compile_options(self.entry, values)

    @property
    def dim_generics(self) -> list[str]:
        return [g.name for g in self.generics if g.kind == "Dim"]

    @property
    def dtype_generics(self) -> list[t.Generic]:
        return [g for g in self.generics if g.kind in DTYPE_KINDS]

    @property
    def label(self) -> str:
        name = f"{self.block.root}.{self.name}" if self.block is not None else self.name
        return f"{self.kind} {name}" + (f" (kernel {self.kernel})" if self.kernel else "")

    def _facts_for(self, clauses) -> Facts:
        return Facts(self.dim_generics).assume_all(clauses)

    def allows(self, values: Mapping[str, Any]) -> bool:
        """Do the op's (or entry's) own `where` clauses hold at `values`?"""
        if self._op_facts is None:
            self._op_facts = self._facts_for(self.where)
        return self._consistent(self._op_facts, values)

    def satisfies(self, values: Mapping[str, Any]) -> bool:
        """Do both the op's and its kernel's `where` clauses hold (so the kernel applies)?"""
        if self._facts is None:
            self._facts = self._facts_for(self.where + self.kernel_where)
        return self._consistent(self._facts, values)

    def _consistent(self, facts: Facts, values: Mapping[str, Any]) -> bool:
        env = {n: values[n] for n in self.dim_generics}
        try:
            return facts.is_consistent_with(env) and all(
                n >= 0 for shape, _ in self.shapes(values) for n in shape)
        except (KeyError, ZeroDivisionError):
            return False

    def inputs(self, values: Mapping[str, Any]) -> list[tuple[str, Type]]:
        """Every input at `values`: the parameters, then a block entry's parameters."""
        extra = self.block.parameters(values) if self.block is not None else []
        return list(self.params) + extra

    def shapes(self, values: Mapping[str, Any]) -> list[tuple[tuple[int, ...], str]]:
        """Each input's concrete shape and dtype at `values`."""
        out = []
        for _, ty in self.inputs(values):
            if not isinstance(ty, TensorT) or ty.has_pack:
                raise LinnetError(f"{self.label}: parameters of type {ty} are not supported")
            shape = tuple(d.evaluate(values) for d in ty.dims)  # type: ignore[union-attr]
            out.append((shape, str(values.get(ty.dtype, ty.dtype))))
        return out

    def tile_sizes(self) -> list[int]:
        """The constant kernel generics and the constants of the `where` clauses: the sizes
        around which ragged edges are worth trying."""
        sizes = {d.as_int() for d in self.kernel_args.values()}
        for left, _, right in self.where + self.kernel_where:
            sizes |= {left.as_int(), right.as_int()}
        return sorted(s for s in sizes if s is not None and s > 1)

    def candidates(self, name: str, max_dim: int) -> list[int]:
        """Interesting values for one `Dim` generic, up to `max_dim`: 1 and other small
        sizes, and each tile size and constant bound minus one, itself, plus one."""
        picks = {1, 2, 3, 5, 7, 8, 13}
        for s in self.tile_sizes():
            picks |= {s - 1, s, s + 1, 2 * s + 1}
        picks.add(max_dim)
        return sorted(v for v in picks if 1 <= v <= max_dim)

    def describe(self, values: Mapping[str, Any]) -> str:
        """`R=3 C=5` (generics in declaration order)."""
        return " ".join(f"{g.name}={values[g.name]}" for g in self.generics if g.name in values)

    def describe_inputs(self, values: Mapping[str, Any]) -> str:
        parts = []
        for (name, _), (shape, dtype) in zip(self.inputs(values), self.shapes(values)):
            parts.append(f"{name}: {dtype}[{', '.join(map(str, shape))}]" if shape
                         else f"{name}: {dtype}")
        return ", ".join(parts)


def source_text(path: str, text: str | None) -> str:
    return Path(path).read_text(encoding="utf-8") if text is None else text


def analyze_source(path: str, text: str) -> Analysis:
    program = load_program(path, text)
    if program.diagnostics:
        raise program_error(program.diagnostics, program.sources)
    analysis = analyze_program(program)
    if analysis.diagnostics:
        raise program_error(analysis.diagnostics, program.sources)
    return analysis


class ProgramError(LinnetError):
    """The program has errors; `diagnostics` and `sources` render them."""

    def __init__(self, message: str = "", diagnostics=None, sources=None) -> None:
        super().__init__("", diagnostics, sources)  # defaults: it pickles (verify's child)


def program_error(diagnostics, sources) -> ProgramError:
    text = "\n\n".join(render(d, sources) for d in diagnostics)
    return ProgramError(text, diagnostics, sources)


def backend_params(params: tuple[t.Param, ...], types: list) -> list[tuple[str, Type]]:
    """An entry's inputs as a backend takes them: a struct parameter is its fields."""
    return [(p.name if len(leaves(ty)) == 1 else f"{p.name}_{k}", leaf)
            for p, ty in zip(params, types) for k, leaf in enumerate(leaves(ty))]
