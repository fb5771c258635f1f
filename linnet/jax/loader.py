"""`linnet.jax.load_function` and `load_source`: call Linnet entries on JAX arrays.

The binding of generics is the PyTorch runtime's (`linnet.torch.loader.EntryFunction`):
at each call, dims and shape packs come from the inputs' shapes and dtype generics from
their dtypes, each binding is compiled once (`linnet jax`) and the module imported from
the cache. Shapes and dtypes are all a traced array has, so an entry works under
`jax.jit`, `jax.grad` and `jax.vmap`'s batching of whole calls alike: inside a trace the
generated `main` is traced like any JAX function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..torch.loader import EntryFunction


class JaxEntryFunction(EntryFunction):
    """A callable for one entry on JAX arrays; compiles once per binding of its generics."""
    TARGET = "jax"

    def _build(self, values: dict[str, object]) -> Callable[..., tuple]:
        return self._compile(values, target_text=False).main


def load_function(path: str, name: str, *, numerics: str = "equivalent") -> JaxEntryFunction:
    """A callable that runs the entry `name` of the Linnet program at `path` on JAX arrays.

    It returns the entry's result: one array, or a tuple of arrays for a tuple result, in
    exactly the declared dtypes and shapes. `numerics` is `"exact"`, `"equivalent"` or
    `"fast"`, as `--numerics` (today it sets the precision of contractions: every op runs
    its body in JAX).
    """
    return JaxEntryFunction(str(path), Path(path).read_text(), name, True, numerics)


def load_source(text: str, name: str, *, numerics: str = "equivalent",
                path: str = "<source>.linnet") -> JaxEntryFunction:
    """`load_function` for a program held in a string (`path` names it in diagnostics)."""
    return JaxEntryFunction(path, text, name, True, numerics)
