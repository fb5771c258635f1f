"""A `TargetSpec` named by what remakes it, for a process that did not make it.

Why: a spec holds the checked program (its analysis, the block's instance tree), which is
large and not meant to be pickled; the path, text and name it was made from are small, and
checking them again in the other process gives the same spec. `linnet verify` sends these
to the child that runs its sizes (`linnet/fuzz/verify_trials.py`).
"""

from __future__ import annotations

from typing import Any

from .block_specs import block_entry_spec
from .harness import TargetSpec, analyze_source, target_spec

__all__ = ["spec_ref", "from_ref"]

_MADE: dict[tuple, TargetSpec] = {}


def spec_ref(spec: TargetSpec) -> tuple:
    """Hashable and picklable: the kind of spec and what `from_ref` remakes it from."""
    if spec.block is None:
        return ("plain", spec.path, spec.text, spec.name)
    b = spec.block
    return ("block", spec.path, spec.text, spec.name, b.root,
            tuple(sorted(b.fixed.items())), b.present)


def from_ref(ref: tuple) -> TargetSpec:
    """The spec `spec_ref` named, made once per process."""
    if ref not in _MADE:
        _MADE[ref] = _make(ref)
    return _MADE[ref]


def _make(ref: tuple) -> TargetSpec:
    if ref[0] == "plain":
        _, path, text, name = ref
        return target_spec(path, name, text)
    _, path, text, name, root, fixed, present = ref
    spec: Any = block_entry_spec(analyze_source(path, text), path, text, name, root, dict(fixed),
                                 present)
    if spec is None:
        raise KeyError(name)
    return spec
