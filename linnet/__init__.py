"""Linnet: a compiler for a typed tensor language with tile kernels.

The research API: `linnet.compile_source(text, target=..., entry=..., bind=...,
numerics=..., passes=...)` returns the generated text and every stage's IR
(`.stage("lower-index-notation")`); `linnet.pipeline.passes_for(target)` is the
pass list to edit. See docs/passes.md.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Load the compiler on first use, so `import linnet` stays cheap."""
    if name in ("compile_source", "passes_for"):
        from . import pipeline
        return getattr(pipeline, name)
    raise AttributeError(f"module 'linnet' has no attribute {name!r}")
