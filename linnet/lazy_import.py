"""A module bound to a name but imported at its first use.

Printing PyTorch or JAX source needs no torch and no jax: importing torch alone takes
seconds. Code that names a heavy module at top level, for the few callers that run it
(the torch helpers, called directly by tests), binds a `LazyModule` instead, so that
`linnet torch FILE` imports it never and a direct call imports it on its first attribute.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for module `name`; the first attribute read imports it."""

    def __init__(self, name: str) -> None:
        self._lazy_name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._lazy_name)  # cached in sys.modules after once

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_lazy_"):
            raise AttributeError(attr)
        return getattr(self._module(), attr)

    def __repr__(self) -> str:
        return f"<lazily imported module {self._lazy_name!r}>"
