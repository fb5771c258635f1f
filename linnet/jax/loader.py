"""The entry functions of the JAX runtime: call Linnet entries on JAX arrays
(`linnet.jax.load_function` and `load_source`, in `program.py`, make them).

The binding of generics is the PyTorch runtime's (`linnet.torch.loader.EntryFunction`):
at each call, dims and shape packs come from the inputs' shapes and dtype generics from
their dtypes, each binding is compiled once (`linnet jax`) and the module imported from
the cache. Shapes and dtypes are all a traced array has, so an entry works under
`jax.jit`, `jax.grad` and `jax.vmap`'s batching of whole calls alike: inside a trace the
generated `main` is traced like any JAX function.

64-bit types are on only inside a call (`jax.enable_x64(True)`, entered around the jitted
call, so jit's cache holds the 64-bit trace): loading or calling an entry never changes the
process's `jax_enable_x64`.

Each binding's `main` is called through `jax.jit`: run eagerly, every `jnp` operation of
it is a dispatch of its own (hundreds of microseconds for a small softmax, and a Pallas
kernel traced again at each call), where a jitted call is one dispatch of one compiled
computation. Inputs that `jax.jit` cannot take as arguments (anything but JAX and NumPy
arrays and Python or NumPy numbers: a list, a torch tensor) go to `main` unjitted, which
converts them with `jnp.asarray` as before.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from ..emit.jax import function_names
from ..torch.loader import EntryFunction


WIDER = {"f32": "f64", "i32": "i64", "u32": "u64"}
"""The 64-bit dtype that JAX, with `jax_enable_x64` off, turns into each 32-bit one."""


class JaxEntryFunction(EntryFunction):
    """A callable for one entry on JAX arrays; compiles once per binding of its generics."""
    TARGET = "jax"

    def _build(self, values: dict[str, object], device: str | None = None
               ) -> Callable[..., tuple]:
        return jitted(self._compile(values, target_text=False, device=device).main)

    def _op_names(self, program: Any) -> dict[str, str]:
        return {mangled: name for name, mangled in function_names(program).items()}

    def dtype_hint(self, got: str, want: str) -> str:
        """With `jax_enable_x64` off, JAX makes a 64-bit array 32-bit (`jnp.asarray`, or a
        `jax.jit` of the caller's) before Linnet sees it: an `f64` input arrives as `f32`.
        Say so, and how to keep 64 bits, instead of "cast it"."""
        import jax
        if WIDER.get(got) != want or jax.config.jax_enable_x64:
            return ""
        return (f"with `jax_enable_x64` off, JAX turns {want} arrays into {got} before Linnet "
                f"sees them: to pass {want}, create the array (and call under your own "
                "`jax.jit`) inside `with jax.enable_x64(True):`, pass a NumPy array, or turn "
                "64-bit types on for the process with "
                "`jax.config.update(\"jax_enable_x64\", True)`; else cast it")

    def device_name(self, inputs: tuple) -> str:
        """JAX's default device, named as tuning files name it: a GPU's kind (the name
        `torch.cuda.get_device_name` gives, "NVIDIA H200"), else "cpu". Inputs may be
        tracers, which have no device, so the default device stands for them."""
        import jax
        device = jax.devices()[0]
        return device.device_kind if device.platform == "gpu" else device.platform


def jitted(main: Callable[..., tuple]) -> Callable[..., tuple]:
    """`main` under `jax.jit` for the inputs jit can take, else `main` itself."""
    import jax
    fast = jax.jit(main)
    arrays = (jax.Array, np.ndarray, np.generic, bool, int, float, complex)

    x64 = jax.enable_x64  # a context manager in JAX 0.10 and 0.11: the setting of this call

    def run(*inputs):
        with x64(True):
            for x in inputs:
                if not isinstance(x, arrays):
                    return main(*inputs)
            return fast(*inputs)
    return run
