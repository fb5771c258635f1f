"""Block entries for the harness: what a root block's entry takes, at any generic values.

Why apart from `harness.py`: a block entry's inputs are its own parameters, then one per
present param, buffer and state of the root block's instance tree, in manifest order
(docs/models.md, "Parameters and state"); how many there are depends on the root's
generics (`sub layers: [Mlp<H>; L]`). The manifest is the compiler's
(`linnet.passes.block_entry.root_manifest`): it is the calling convention the compiled
entry follows. The spec's `parameters(values)` gives them, after the entry's own.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..check.dim_normal_form import Dim
from ..check.instance import Analysis
from ..check.types import TensorT, Type
from ..check.value_types import as_tuples, leaves
from ..syntax import tree as t

__all__ = ["block_entries", "block_entry_spec", "root_info"]


def root_info(analysis: Analysis):
    """The root block's `BlockInfo` (the only block of the file with entries), or None."""
    from ..passes.block_entry import blocks_with_entries
    found = blocks_with_entries(analysis.program.root_module)
    if len(found) != 1:
        return None
    return analysis.root.globals.blocks.get(found[0].name)


def block_entries(analysis: Analysis) -> list[str]:
    """The names of the root block's entries, in declaration order."""
    info = root_info(analysis)
    if info is None:
        return []
    return [m.name for m in info.item.members if isinstance(m, t.Function) and m.kind == "entry"]


def block_entry_spec(analysis: Analysis, path: str, text: str, name: str):
    """The `TargetSpec` of the root block's entry `name`, or None when there is none."""
    from .harness import TargetSpec
    info = root_info(analysis)
    fn = info.fns.get(name) if info is not None else None
    if fn is None or fn.kind != "entry":
        return None
    sig = info.sigs[name]
    where = [(l, op, r) for l, op, r, _ in list(info.where) + list(sig.where)]
    params = [(p.name if len(leaves(ty)) == 1 else f"{p.name}_{k}", leaf)
              for p, ty in zip(fn.params, sig.params) for k, leaf in enumerate(leaves(ty))]
    generics = tuple(info.item.generics) + tuple(fn.generics)
    block_generics = tuple(info.generics)
    return TargetSpec(path, text, name, "entry", name, text, generics, params,
                      as_tuples(sig.result),
                      where, parameters=_parameters(analysis, block_generics))


def _parameters(analysis: Analysis, block_generics: tuple[str, ...]):
    cache: dict[tuple, list[tuple[str, Type]]] = {}

    def at(values: Mapping[str, Any]) -> list[tuple[str, Type]]:
        from ..passes.block_entry import root_manifest
        bound = {k: str(values[k]) for k in block_generics if k in values}
        key = tuple(sorted(bound.items()))
        if key not in cache:
            manifest = root_manifest(analysis, None, bound)
            cache[key] = [(p.path, TensorT(tuple(Dim.const(n) for n in p.shape), p.dtype))
                          for p in manifest.parameters if p.input is not None]
        return cache[key]
    return at
