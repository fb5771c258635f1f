"""Block entries for the harness: what a root block's entry takes, at any generic values.

Why apart from `harness.py`: a block entry's inputs are its own parameters, then one per
present param, buffer and state of the root block's instance tree, in manifest order
(docs/models.md, "Parameters and state"); how many there are depends on the root's
generics (`sub layers: [Mlp<H>; L]`) and on which optional members the checkpoint holds
(`present`). The manifest is the compiler's (`linnet.passes.front.block_entry.root_manifest`):
it is the calling convention the compiled entry follows.

One spec serves every tool that runs a block entry: the fuzzer, the reducer and the
oracle's corpus draw the root's generics with the entry's (`target_spec`, through
`block_entry_spec`); `linnet verify --root` fixes the root's generics from `--bind` (else
their defaults) and draws only the entry's (`block_specs`), so a tree of `L` layers is not
redrawn at every size. Either way the spec's `block` (a `BlockEntry`) gives the parameters
at the values drawn (`TargetSpec.inputs`) and the options to compile with
(`TargetSpec.compile_options`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..check.dim_normal_form import Dim
from ..check.instance import Analysis
from ..check.signatures import Binding, substitute
from ..check.types import TensorT, Type
from ..check.value_types import as_tuples
from ..diagnostics import CompileError
from ..passes.front.bind_generics import parse_bindings
from ..passes.front.block_entry import choose_root, root_manifest
from ..syntax import tree as t
from .spec import TargetSpec, analyze_source, backend_params, source_text

__all__ = ["BlockEntry", "block_entries", "block_entry_spec", "block_specs", "root_info"]


@dataclass
class BlockEntry:
    """What makes a spec a root block's entry: the root block, the values of its generics
    fixed ahead (text, as `--bind` takes them; the others are drawn with the entry's), and
    the parameter paths the checkpoint holds (None: every optional member absent)."""
    analysis: Analysis = field(repr=False, compare=False)
    root: str
    generics: tuple[str, ...]
    fixed: dict[str, str] = field(default_factory=dict)
    present: frozenset[str] | None = None
    _cache: dict[tuple, list[tuple[str, Type]]] = field(default_factory=dict, repr=False,
                                                        compare=False)

    def bind(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """compile_source's `bind`: the fixed values of the root's generics, then the
        drawn ones."""
        return {**self.fixed, **values}

    def parameters(self, values: Mapping[str, Any]) -> list[tuple[str, Type]]:
        """The present params, buffers and states at these generic values: their paths
        and concrete types, in manifest order (the inputs after the entry's own)."""
        bound = {k: str(v) for k, v in self.bind(values).items() if k in self.generics}
        key = tuple(sorted(bound.items()))
        if key not in self._cache:
            manifest = root_manifest(self.analysis, self.root, bound, self.present)
            self._cache[key] = [(p.path, TensorT(tuple(Dim.const(n) for n in p.shape),
                                                 p.dtype)) for p in manifest.inputs]
        return self._cache[key]

    def compile_options(self, entry: str, values: Mapping[str, Any]) -> dict[str, Any]:
        return {"entry": entry, "bind": self.bind(values), "root": self.root,
                "present": self.present}

    def every_path(self, values: Mapping[str, Any]) -> frozenset[str] | None:
        """Every parameter path of the tree at these values, a checkpoint that makes each
        optional member present; None when the tree has no optional member."""
        bound = {k: str(v) for k, v in self.bind(values).items() if k in self.generics}
        manifest = root_manifest(self.analysis, self.root, bound, None)
        if not any(p.optional for p in manifest.parameters):
            return None
        return frozenset(p.path for p in manifest.parameters)

    def with_present(self, present: frozenset[str] | None) -> "BlockEntry":
        return BlockEntry(self.analysis, self.root, self.generics, dict(self.fixed), present)


def root_info(analysis: Analysis, root: str | None = None, entry: str | None = None):
    """The root block's `BlockInfo` (the one named, else the only block of the file with
    entries), or None. Raises `CompileError` (E4103) for a name that is no block, or
    several blocks with entries and none named."""
    return choose_root(analysis, root, entry)


def block_entries(analysis: Analysis) -> list[str]:
    """The names of the root block's entries, in declaration order (none when the root
    is not known without a name)."""
    try:
        info = root_info(analysis)
    except CompileError:
        return []
    if info is None:
        return []
    return [m.name for m in info.item.members if isinstance(m, t.Function) and m.kind == "entry"]


def block_entry_spec(analysis: Analysis, path: str, text: str, name: str,
                     root: str | None = None, bind: Mapping[str, str] | None = None,
                     present: frozenset[str] | None = None):
    """The `TargetSpec` of the root block's entry `name`, or None when there is none.

    The root's generics in `bind` (text) are fixed; the others are the spec's generics,
    before the entry's own, drawn like them."""
    try:
        info = root_info(analysis, root, name)
    except CompileError:
        if root is not None:
            raise
        return None
    fn = info.fns.get(name) if info is not None else None
    if fn is None or fn.kind != "entry":
        return None
    fixed = _fixed(info, dict(bind or {}))
    sig = info.sigs[name]
    where = [(l.substitute(fixed.dims), op, r.substitute(fixed.dims))
             for l, op, r, _ in list(info.where) + list(sig.where)]
    params = [substitute(ty, fixed) for ty in sig.params]
    result = substitute(sig.result, fixed) if sig.result is not None else None
    generics = tuple(g for g in info.item.generics if g.name not in (bind or {})) \
        + tuple(fn.generics)
    block = BlockEntry(analysis, info.name, tuple(info.generics), dict(bind or {}), present)
    return TargetSpec(path, text, name, "entry", name, text, generics,
                      backend_params(fn.params, params),
                      as_tuples(result) if result is not None else None, where, block=block)


def _fixed(info, bind: dict[str, str]) -> Binding:
    """The fixed values of the root's generics as a binding. Given any, `bind` gives every
    generic without a default (`UsageError` otherwise, or for one the root does not have)."""
    if not bind:
        return Binding()
    values = {k: v for k, v in parse_bindings(info.item, bind).items() if k in bind}
    return Binding({k: Dim.const(v) for k, v in values.items() if isinstance(v, int)},
                   {k: v for k, v in values.items() if isinstance(v, str)},
                   {k: tuple(Dim.const(n) for n in v) for k, v in values.items()
                    if isinstance(v, tuple)})


def block_specs(path: str, root: str | None, entry: str | None, bind: dict[str, str],
                present: frozenset[str] | None = None, text: str | None = None) -> list:
    """`linnet verify --root`: a spec per entry of the root block (the one `entry` names,
    if given), the root's generics fixed from `bind`, else their defaults. Raises KeyError
    when no block is the root (or it has no such entry), `UsageError` for a generic of the
    root without a value or one it does not have."""
    text = source_text(path, text)
    analysis = analyze_source(path, text)
    info = root_info(analysis, root, entry)
    if info is None:
        raise KeyError(entry or root or "")
    values = parse_bindings(info.item, bind)
    fixed = {k: _text(v) for k, v in values.items()}
    names = [f.name for f in info.fns.values() if f.kind == "entry"
             and (entry is None or f.name == entry)]
    if not names:
        raise KeyError(entry)
    return [block_entry_spec(analysis, path, text, n, info.name, fixed, present)
            for n in names]


def _text(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    return str(value)
