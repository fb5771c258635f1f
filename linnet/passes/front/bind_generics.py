"""The front of the pipeline: parse, check, and bind the entry's generics.

These passes turn a file into a checked program and then into one entry with
concrete generic values, from `--bind R=8 --bind T=f32 --bind S=2,3`.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field

from ...check.instance import Analysis, Instance, analyze_program, binding_from_values
from ...check.signatures import Binding
from ...check.types import DTYPE_KINDS
from ...deepstack import call_with_deep_stack
from ...diagnostics import CompileError
from ...errors import MissingGeneric, UsageError, suggest
from ...syntax.program import Program, load_program
from ...syntax import tree as t

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
    from .block_entry import block_entry
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
        from .grad_checks import grad_diagnostics
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


def pick_entry(entries: list[t.Function], name: str | None, owner: str) -> t.Function:
    """The entry named so among `entries` (of `owner`: the file, or a block), or the only
    one when no name is given."""
    names = ", ".join(e.name for e in entries) or "none"
    if name is None:
        if len(entries) != 1:
            head = f"{owner} has {len(entries)} entries ({names}); choose one with "
            raise UsageError(head + "entry=NAME", head + "--entry NAME")
        return entries[0]
    found = next((e for e in entries if e.name == name), None)
    if found is None:
        raise UsageError(f"no entry named `{name}`; {owner}'s entries: {names}"
                         + suggest(name, [e.name for e in entries]))
    return found


def parse_bindings(entry: t.Function, raw: dict[str, str]) -> dict[str, object]:
    """Every generic of the entry gets a value: given by --bind, or its default."""
    generics = {g.name: g for g in entry.generics}
    unknown = sorted(set(raw) - set(generics))
    if unknown:
        why = (f"`{entry.name}` has no generic named `{unknown[0]}` (its generics: "
               f"{', '.join(generics) or 'none'})")
        raise UsageError(f"bind {unknown[0]!r}: {why}", f"--bind {unknown[0]}: {why}")
    values: dict[str, object] = {}
    for name, g in generics.items():
        if name in raw:
            values[name] = _parse_value(g, raw[name])
        elif g.default is not None:
            values[name] = _default_value(g)
        else:
            head = f"generic `{name}: {g.kind}` of `{entry.name}` needs a value: "
            raise MissingGeneric(head + f"bind={{{name!r}: {_example(g, True)}}}",
                                 head + f"--bind {name}={_example(g)}", g)
    return values


def _parse_value(g: t.Generic, text: str) -> object:
    if g.kind == "Dim":
        if not _is_extent(text):
            raise _bad_value(g, text, "a Dim takes a non-negative integer below 2^63",
                             " written in ASCII digits")
        return int(text)
    if g.kind == "Shape":
        parts = [p.strip() for p in text.split(",")] if text.strip() else []
        if not all(_is_extent(p) for p in parts):
            raise _bad_value(g, text, "a Shape takes non-negative integers",
                             " separated by commas, such as 2,3", " (a tuple, such as (2, 3))")
        return tuple(int(p) for p in parts)
    if text not in DTYPE_KINDS[g.kind]:
        raise _bad_value(g, text, f"`{g.name}` is a {g.kind}; choose one of "
                         f"{', '.join(DTYPE_KINDS[g.kind])}")
    return text


def _bad_value(g: t.Generic, text: str, why: str, cli: str = "", lib: str = "") -> UsageError:
    """A value that cannot be a generic's, worded for the library (`bind R='x'`) and for
    the command line (`--bind R=x`)."""
    return UsageError(f"bind {g.name}={text!r}: {why}{lib}", f"--bind {g.name}={text}: {why}{cli}")


def _is_extent(text: str) -> bool:
    """A dimension as the command line writes it: ASCII decimal digits (`str.isdigit`
    would also take `²` and `٣`), small enough for an i64."""
    return re.fullmatch(r"[0-9]+", text) is not None and int(text) < 2**63


def _default_value(g: t.Generic) -> object:
    d = g.default
    if isinstance(d, t.IntLit):
        return d.value
    if isinstance(d, t.Name):
        return d.id
    head = f"generic `{g.name}` has a default this version cannot evaluate; "
    raise UsageError(head + "give it a value in bind", head + "--bind it")


def _example(g: t.Generic, python: bool = False) -> str:
    """A value of the generic's kind, as `--bind` (or, with python, `bind=`) takes it."""
    if python:
        return {"Dim": "8", "Shape": "(2, 3)", "Integer": "'i32'"}.get(g.kind, "'f32'")
    return {"Dim": "8", "Shape": "2,3", "Integer": "i32"}.get(g.kind, "f32")


def describe_bound(b: Bound) -> str:
    """The entry and its values; for a block entry, first the flattened program."""
    values = ", ".join(f"{k}={v}" for k, v in b.values.items())
    head = f"{b.analysis}\n" if b.parameters is not None else ""
    return f"{head}entry {b.entry.name}<{values}>"
