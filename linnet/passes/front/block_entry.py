"""Choosing the root block and its entry, and turning them into a plain checked program.

The root block is the one `--root` names, or else the only block of the file with
entries (a file whose blocks have no entries, or whose `--entry` names a module-level
entry, compiles as before). `--bind` gives values to the root block's generics and to
the entry's; the block's are used to build the instance tree and flatten it
(`passes/front/flatten_blocks.py`), the entry's are bound as for any entry.
"""

from __future__ import annotations

import dataclasses

from ...check.blocks import BlockInfo
from ...check.instance import Analysis, analyze_program
from ...diagnostics import CompileError, Diagnostic, Span
from ...errors import UsageError, suggest
from ...parameters import Manifest
from ...syntax.program import Program
from ...syntax import tree as t
from .block_instances import instance_tree, parameters
from .flatten_blocks import flatten
from .generic_values import parse_bindings, pick_entry


@dataclasses.dataclass
class BlockEntry:
    """A block entry made plain: the flattened program, what remains of `--bind` for
    the entry itself, and the parameter manifest."""
    analysis: Analysis
    entry: str
    bind: dict[str, str]
    manifest: Manifest


def block_entry(analysis: Analysis, root: str | None, entry: str | None,
                bind: dict[str, str], present: frozenset[str] | None = None
                ) -> BlockEntry | None:
    """The root block's entry as a plain program, or None when no block is the root.
    `present`: the parameter paths a checkpoint holds (None: optional members absent)."""
    info = choose_root(analysis, root, entry)
    if info is None:
        return None
    fn = _choose_entry(info, entry)
    generics = set(info.generics)
    unknown = sorted(set(bind) - generics - {g.name for g in fn.generics})
    if unknown:
        names = [*info.generics, *(g.name for g in fn.generics)]
        why = (f"neither `{info.name}` nor its entry `{fn.name}` has a generic named "
               f"`{unknown[0]}` (theirs: {', '.join(names)})")
        raise UsageError(f"bind {unknown[0]!r}: {why}", f"--bind {unknown[0]}: {why}")
    values = parse_bindings(info.item, {k: v for k, v in bind.items() if k in generics})
    tree = instance_tree(info, {k: v for k, v in values.items() if isinstance(v, int)},
                         {k: v for k, v in values.items() if isinstance(v, str)}, present)
    program = analysis.program
    modules, assigned = flatten(dict(program.modules), tree, fn, program.links)
    new = Program(program.root, modules, dict(program.files), dict(program.sources),
                  links=dict(program.links))
    checked = analyze_program(new)
    if checked.diagnostics:
        raise CompileError(checked.diagnostics, program.sources)
    manifest = Manifest(info.name, fn.name, parameters(tree), assigned)
    return BlockEntry(checked, fn.name, {k: v for k, v in bind.items() if k not in generics},
                      manifest)


def root_manifest(analysis: Analysis, root: str | None, generics: dict[str, str],
                  present: frozenset[str] | None = None) -> Manifest:
    """The root block's manifest for these values of its generics (text, as `--bind`
    gives them; defaults fill the rest), before any entry is chosen: what a loader checks
    a checkpoint against. `entry` is empty and `assigned` lists no state."""
    info = choose_root(analysis, root, None)
    if info is None:
        module = analysis.program.root_module
        raise CompileError([Diagnostic(
            "E4103", "no root block: no block of the file has entries", Span(
                analysis.program.root, module.span.start, module.span.start),
            "in this file", help="name the block with --root (root= in the library)")])
    unknown = sorted(set(generics) - set(info.generics))
    if unknown:
        why = (f"`{info.name}` has no generic named `{unknown[0]}` (its generics: "
               f"{', '.join(info.generics) or 'none'})")
        raise UsageError(f"generic {unknown[0]!r}: {why}", f"--bind {unknown[0]}: {why}")
    values = parse_bindings(info.item, generics)
    tree = instance_tree(info, {k: v for k, v in values.items() if isinstance(v, int)},
                         {k: v for k, v in values.items() if isinstance(v, str)}, present)
    return Manifest(info.name, "", parameters(tree))


def blocks_with_entries(module: t.Module) -> list[t.BlockDef]:
    return [b for b in module.items if isinstance(b, t.BlockDef)
            and any(isinstance(m, t.Function) and m.kind == "entry" for m in b.members)]


def choose_root(analysis: Analysis, root: str | None, entry: str | None) -> BlockInfo | None:
    """The root block (E4103 when `--root` names no block, or several blocks have entries
    and none is named)."""
    module = analysis.program.root_module
    blocks = analysis.root.globals.blocks
    path = analysis.program.root
    if root is not None:
        if root not in blocks:
            raise CompileError([Diagnostic(
                "E4103", f"no block named `{root}` (--root){suggest(root, sorted(blocks))}",
                Span(path, module.span.start, module.span.start), "in this program",
                help="the program's blocks: " + (", ".join(sorted(blocks)) or "none"))])
        return blocks[root]
    candidates = blocks_with_entries(module)
    if not candidates:
        return None
    plain = [i.name for i in module.items if isinstance(i, t.Function) and i.kind == "entry"]
    if entry is not None and entry in plain:
        return None
    if len(candidates) > 1:
        names = ", ".join(b.name for b in candidates)
        raise CompileError([Diagnostic(
            "E4103", f"{len(candidates)} blocks have entries ({names}): which is the root?",
            candidates[1].span, "also has entries",
            help=f"name the root block: `--root {candidates[0].name}` (root= in the library)")])
    return blocks[candidates[0].name]


def _choose_entry(info: BlockInfo, name: str | None) -> t.Function:
    entries = [f for f in info.fns.values() if f.kind == "entry"]
    return pick_entry(entries, name, f"the block `{info.name}`")
