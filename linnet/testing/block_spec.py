"""What `linnet verify` checks of a block entry: the entry with its parameters as inputs.

A block entry takes its own inputs, then every present param, buffer and state of the
root block's tree in manifest order (docs/models.md, "Parameters and state"). Verifying
it draws the entry's own generics as for a module-level entry and fixes the root block's
(from `--bind`, else their defaults): the tree, and so the manifest, must be known to
give each parameter an input with a shape. Random weights then go through the entry
compiled with the op bodies and with the kernels, like any other input, and the
gradients of the floating params are compared with the inputs'.
"""

from __future__ import annotations

from typing import Any

from ..check.dim_normal_form import Dim
from ..check.signatures import Binding, substitute
from ..check.types import TensorT
from ..check.value_types import as_tuples
from ..passes.block_entry import choose_root, root_manifest
from ..passes.front import parse_bindings
from .harness import TargetSpec, _analysis, _backend_params, _read


def block_specs(path: str, root: str | None, entry: str | None, bind: dict[str, str],
                present: frozenset[str] | None = None, text: str | None = None
                ) -> list[TargetSpec]:
    """A spec per entry of the root block (the one `entry` names, if given). Raises
    KeyError when no block is the root (or it has no such entry), `UsageError` (from
    the binding) for a generic of the root without a value or one it does not have."""
    text = _read(path, text)
    analysis = _analysis(path, text)
    info = choose_root(analysis, root, entry)
    if info is None:
        raise KeyError(entry or root or "")
    manifest = root_manifest(analysis, info.name, bind, present)
    values = parse_bindings(info.item, bind)
    fixed = Binding({k: Dim.const(v) for k, v in values.items() if isinstance(v, int)},
                    {k: v for k, v in values.items() if isinstance(v, str)})
    weights = [(p.path, TensorT(tuple(Dim.const(n) for n in p.shape), p.dtype))
               for p in manifest.inputs]
    fns = [f for f in info.fns.values() if f.kind == "entry"
           and (entry is None or f.name == entry)]
    if not fns:
        raise KeyError(entry)
    block = {"root": info.name, "fixed": {k: str(v) for k, v in values.items()},
             "present": present}
    return [_spec(path, text, f, info.sigs[f.name], fixed, weights, block) for f in fns]


def _spec(path: str, text: str, fn, sig, fixed: Binding, weights: list,
          block: dict[str, Any]) -> TargetSpec:
    params = [substitute(ty, fixed) for ty in sig.params]
    where = [(l.substitute(fixed.dims), op, r.substitute(fixed.dims))
             for l, op, r, _ in sig.where]
    result = substitute(sig.result, fixed) if sig.result is not None else None
    return TargetSpec(path, text, f"{block['root']}.{fn.name}", "entry", fn.name, text,
                      tuple(fn.generics), _backend_params(fn.params, params) + weights,
                      as_tuples(result) if result is not None else None, where, block=block)
