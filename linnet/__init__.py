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

import importlib
from typing import Any

from .errors import LinnetError
from .moved import install as _install_moved
from .version import __version__

_install_moved()  # old module names, for one release (linnet/moved.py)

__all__ = ["LinnetError", "compile_source", "compile_file", "passes_for", "__version__"]

LAZY = {"compile_source": "linnet.pipeline", "compile_file": "linnet.pipeline",
        "passes_for": "linnet.pipeline"}
"""The package's names that live in a module loaded at their first use: importing the
pipeline loads the whole compiler, which `import linnet` (and `linnet --help`) should not."""


def __getattr__(name: str) -> Any:
    """Load the compiler on first use, so `import linnet` stays cheap."""
    if name in LAZY:
        return getattr(importlib.import_module(LAZY[name]), name)
    raise AttributeError(f"module 'linnet' has no attribute {name!r}")
