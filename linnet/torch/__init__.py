"""The PyTorch runtime: call Linnet entries on torch tensors.

- `load_function(path, name, *, compile=True, numerics="equivalent")` and `load(path, ...)`
  compile a program's entries for the shapes and dtypes they are called with
  (see `linnet/torch/loader.py`); `load` of a program with a root block gives the model as
  a `torch.nn.Module` with its weights (see `linnet/torch/block_module.py`);
- `run` (the interpreter, `compile=False`) evaluates tensor-core IR directly;
- `import_generated` imports generated source from its text (never from a file or `.pyc`),
  keeping a copy in the private cache folder (see `linnet/torch/runtime.py`).
"""

from __future__ import annotations

from typing import Any

from .loader import EntryFunction, LinnetError, LoadedModule, load_function
from .program import load
from .runtime import cache_dir, import_generated


def run(program: Any, *inputs: Any) -> tuple:
    """Evaluate a tensor-core IR program's entry on `inputs` (the interpreter, `compile=False`)."""
    from .interpreter import run as _run
    return _run(program, *inputs)


__all__ = ["load_function", "load", "run", "import_generated", "cache_dir", "EntryFunction",
           "LoadedModule", "LinnetError"]
