"""The front of the pipeline: parse, check, and bind the entry's generics.

These passes turn a file into a checked program and then into one entry with
concrete generic values, from `--bind R=8 --bind T=f32 --bind S=2,3`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...check.instance import Analysis, Instance, analyze_program, binding_from_values
from ...check.signatures import Binding
from ...deepstack import call_with_deep_stack
from ...diagnostics import CompileError
from ...errors import UsageError
from ...syntax.program import Program, load_program
from ...syntax import tree as t
from .block_entry import block_entry
from .generic_values import parse_bindings, pick_entry
from .grad_checks import grad_diagnostics

__all__ = ["UsageError", "Source", "Bound", "parse", "check", "bind_generics",
           "choose_entry", "parse_bindings", "describe_bound"]


@dataclass(frozen=True)
class Source:
    path: str
    text: str | None = None


@dataclass
class Bound:
    """The 'bound' language: a checked program, its entry, and concrete generics."""
    analysis: Analysis
    entry: t.Function
    binding: Binding
    values: dict[str, object]
    parameters: object | None = None  # a block entry's `linnet.parameters.Manifest`
    instance: Instance | None = field(default=None, compare=False, repr=False)
    """The entry checked with its binding, kept for `elaborate`: checking it again (a
    block entry of 65,536 calls, say) cost as much as checking it here."""

    def __str__(self) -> str:
        return describe_bound(self)


def parse(source: Source, options) -> Program:
    program = load_program(source.path, source.text)
    if program.diagnostics:
        raise CompileError(program.diagnostics, program.sources)
    return program


def check(program: Program, options) -> Analysis:
    analysis = call_with_deep_stack(lambda: analyze_program(program))
    if analysis.diagnostics:
        raise CompileError(analysis.diagnostics, program.sources)
    return analysis


def bind_generics(analysis: Analysis, options) -> Bound:
    name, bind, manifest = options.entry, options.bind, None
    block = block_entry(analysis, getattr(options, "root", None), name, bind,
                        getattr(options, "present", None))
    if block is not None:  # a block's entry, flattened into a plain program
        analysis, name, bind, manifest = block.analysis, block.entry, block.bind, block.manifest
    entry = choose_entry(analysis, name)
    values = parse_bindings(entry, bind)
    dims = {k: v for k, v in values.items() if isinstance(v, int)}
    dtypes = {k: v for k, v in values.items() if isinstance(v, str)}
    packs = {k: v for k, v in values.items() if isinstance(v, tuple)}
    binding = binding_from_values(entry, dims, dtypes, packs)
    instance = analysis.instantiate(entry, binding, analysis.home_of(entry))  # as elaborate
    if instance.diagnostics:
        raise CompileError(instance.diagnostics)
    if getattr(options, "grad", False):  # what keeps --grad from differentiating the entry
        states = len(manifest.assigned) if manifest is not None else 0
        problems = grad_diagnostics(analysis, entry, instance, states)
        if problems:
            raise CompileError(problems)
    return Bound(analysis, entry, binding, values, manifest, instance)


def choose_entry(analysis: Analysis, name: str | None) -> t.Function:
    entries = [i for i in analysis.root.globals.items.values()
               if isinstance(i, t.Function) and i.kind == "entry"
               and i in analysis.program.root_module.items]
    return pick_entry(entries, name, "the file")


def describe_bound(b: Bound) -> str:
    """The entry and its values; for a block entry, first the flattened program."""
    values = ", ".join(f"{k}={v}" for k, v in b.values.items())
    head = f"{b.analysis}\n" if b.parameters is not None else ""
    return f"{head}entry {b.entry.name}<{values}>"
