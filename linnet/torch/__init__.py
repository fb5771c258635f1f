"""The PyTorch runtime: call Linnet entries on torch tensors.

- `load_function(path, name, *, compile=True, numerics="equivalent")` and `load(path, ...)`
  compile a program's entries for the shapes and dtypes they are called with;
- `run` (the interpreter, `compile=False`) evaluates tensor-core IR directly;
- `import_generated` writes generated source to the cache directory and imports it.
"""

from __future__ import annotations

from typing import Any

from .runtime import cache_dir, import_generated


def load_function(path: str, name: str, *, compile: bool = True,
                  numerics: str = "equivalent") -> Any:
    """A callable that runs the entry `name` of the Linnet program at `path` on torch tensors.

    At each call the entry's generics are bound from the inputs: dims and shape packs from
    the tensors' shapes, dtype generics from their dtypes (a Python number is accepted for a
    scalar input and takes its parameter's dtype); the `where` clauses must hold for the
    values found. Each binding is compiled once and cached, so later calls with the same
    shapes and dtypes reuse it. The call returns the entry's result: one tensor, or a tuple
    of tensors for a tuple result, in exactly the dtypes and shapes of its declared type.

    `compile=True` generates a PyTorch module (`linnet torch`), writes it to the cache
    directory (`$LINNET_CACHE`, else `~/.cache/linnet`) and imports it from there; ops with
    a kernel run it through Triton on CUDA tensors and their bodies elsewhere.
    `compile=False` runs the PyTorch interpreter on the tensor IR instead: op bodies only,
    no generated code. `numerics` is `"exact"` (bodies only, no kernels), `"equivalent"`
    (kernels with f32 accumulation and full-precision tile products) or `"fast"` (also TF32
    and framework fast paths), as `--numerics` (LANGUAGE.md section 8).
    """
    raise NotImplementedError("wired by the lead")


def load(path: str, *, compile: bool = True, numerics: str = "equivalent") -> Any:
    """The Linnet program at `path` as a module-like object: one callable per entry.

    `m = load("model.linnet")`; `m.run(x, w)` calls the entry `run` exactly as
    `load_function(path, "run", compile=compile, numerics=numerics)` would, binding
    generics from the inputs at each call, cached per binding.
    """
    raise NotImplementedError("wired by the lead")


def run(program: Any, *inputs: Any) -> tuple:
    """Evaluate a tensor-core IR program's entry on `inputs` (the interpreter, `compile=False`)."""
    from .interpreter import run as _run
    return _run(program, *inputs)


__all__ = ["load_function", "load", "run", "import_generated", "cache_dir"]
