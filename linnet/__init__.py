"""Linnet: a compiler for a typed tensor language with tile kernels.

The research API: `linnet.compile_source(text, target=..., entry=..., bind=...,
numerics=..., passes=...)` (or `linnet.compile_file(path, ...)`) returns the generated text
and every stage's IR (`.stage("lower-index-notation")`, whose `str()` is its printed IR);
`linnet.pipeline.passes_for(target)` is the pass list to edit. See docs/passes.md.
A block entry's result also carries its parameter manifest, `.parameters` (a
`linnet.parameters.Manifest`; docs/models.md).
Every error the package raises is a `linnet.LinnetError`.
"""

from __future__ import annotations

from typing import Any

from .errors import LinnetError
from .moved import install as _install_moved
from .version import __version__

_install_moved()  # old module names, for one release (linnet/moved.py)

__all__ = ["LinnetError", "compile_source", "compile_file", "passes_for", "__version__"]


def __getattr__(name: str) -> Any:
    """Load the compiler on first use, so `import linnet` stays cheap."""
    if name in ("compile_source", "compile_file", "passes_for"):
        from . import pipeline
        return getattr(pipeline, name)
    raise AttributeError(f"module 'linnet' has no attribute {name!r}")
