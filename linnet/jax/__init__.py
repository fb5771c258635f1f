"""The JAX runtime: call Linnet entries on JAX arrays (and anything `jnp.asarray` takes).

- `load_function(path, name, *, numerics="equivalent")` and `load_source(text, name, ...)`
  compile an entry for the shapes and dtypes it is called with (`program.py`, `loader.py`); with
  `mesh=` and `shard=`, the named ops' kernels run per shard of a device mesh (`mesh.py`);
- `load_source(path, generics=..., weights=...)` (no entry name) loads a root block's model,
  its entries pure functions of params and state dicts (see `block_model.py`); `mesh=` and
  `shard=` run the named ops' kernels per shard there too.

Generated modules are imported from the cache directory, as the PyTorch runtime's are.
"""

from __future__ import annotations

from .loader import JaxEntryFunction
from .program import load_function, load_source

__all__ = ["load_function", "load_source", "JaxEntryFunction"]
