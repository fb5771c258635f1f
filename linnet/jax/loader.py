"""`linnet.jax.load_function` and `load_source`: call Linnet entries on JAX arrays.

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

from ..errors import LinnetError
from ..torch.loader import EntryFunction, read_program, read_tuning


WIDER = {"f32": "f64", "i32": "i64", "u32": "u64"}
"""The 64-bit dtype that JAX, with `jax_enable_x64` off, turns into each 32-bit one."""


class JaxEntryFunction(EntryFunction):
    """A callable for one entry on JAX arrays; compiles once per binding of its generics."""
    TARGET = "jax"

    def _build(self, values: dict[str, object], device: str | None = None
               ) -> Callable[..., tuple]:
        return jitted(self._compile(values, target_text=False, device=device).main)

    def _op_names(self, program: Any) -> dict[str, str]:
        from ..emit.jax import function_names
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
    import numpy as np
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


def load_function(path: str, name: str, *, numerics: str = "equivalent",
                  tuning: Any = None, mesh: Any = None,
                  shard: dict[str, Any] | None = None) -> JaxEntryFunction:
    """A callable that runs the entry `name` of the Linnet program at `path` on JAX arrays.

    It returns the entry's result: one array, or a tuple of arrays for a tuple result, in
    exactly the declared dtypes and shapes. `numerics` is `"exact"`, `"equivalent"` or
    `"fast"`, as `--numerics` (it sets the precision of contractions; `"exact"` runs no
    kernel). `tuning` is `linnet.torch.load_function`'s: the recorded kernel
    choices of JAX's default device apply where their op and sizes match. Errors are
    `linnet.torch.load_function`'s, raised as early.

    `mesh` (a `jax.sharding.Mesh`) and `shard` ({op name: mesh axis, or a tuple of axes})
    run the kernel of each named op per shard of its batch axis, under `jax.shard_map`
    (`linnet.jax.mesh`; docs/jax.md, "JAX over a mesh"). An op without a batch axis by the
    rule of `linnet.check.batch_rule` raises a LinnetError here.
    """
    return _checked(path, name, None, numerics, tuning, mesh, shard)


def _checked(path: str, name: str, text: str | None, numerics: str, tuning: Any,
             mesh: Any, shard: Any) -> JaxEntryFunction:
    """The entry function, over a mesh when one is given."""
    tuning = read_tuning(tuning, path)
    if mesh is None and shard is None:
        return JaxEntryFunction.checked(path, name, text=text, numerics=numerics,
                                        tuning=tuning)
    from .mesh import MeshEntryFunction, shard_plan
    fn = MeshEntryFunction.checked(path, name, text=text, numerics=numerics, tuning=tuning,
                                   plan=shard_plan(mesh, shard))
    fn.check_plan()
    return fn


def load_source(source: Any, name: str | None = None, *, numerics: str = "equivalent",
                path: str | None = None, tuning: Any = None, generics: dict[str, Any] | None = None,
                weights: Any = None, root: str | None = None, mesh: Any = None,
                shard: dict[str, Any] | None = None) -> Any:
    """A program's entry, or its root block's model, on JAX arrays.

    With `name`: `load_function` for the program held in the string `source` (`path`
    names it in diagnostics), its module-level entry `name`; `mesh=` and `shard=` as
    `load_function`'s.

    Without `name`: the program's root block (the only block with entries, or `root`) as a
    model (`linnet.jax.block_model.JaxBlockModel`): `source` is the program's path (a
    `Path`, or a string without a newline), or its text (a string with newlines; `path`
    names it). `generics` gives the root block's generics (ints, dtype names; defaults fill
    the rest), `weights` a `.safetensors` path or a mapping of path -> array, checked
    against the parameter manifest (None: zeros). `model.parameters` is the dict by path of
    the params and buffers; each entry is `model.main(params, state, *inputs) -> (result,
    next_state)`, with `state` a dict by path (`model.initial_state()`: zeros), usable
    under `jax.jit` and `jax.grad`. See docs/models.md, "Loading weights". `mesh=` and
    `shard=` run the named ops' kernels per shard in every entry, as `load_function`'s
    (docs/scale_jax.md, "Block models").
    """
    if name is not None:
        given = [k for k, v in (("generics", generics), ("weights", weights), ("root", root))
                 if v is not None]
        if given:
            raise LinnetError(f"load_source(text, name) loads a module-level entry; {given[0]}= "
                              "is for a root block's model: load_source(path, generics=..., "
                              "weights=...) without a name")
        path = path or "<source>.linnet"
        return _checked(path, name, source, numerics, tuning, mesh, shard)
    from ..pipeline import NUMERICS, check_choice
    from .block_model import load_model
    check_choice("numerics", numerics, NUMERICS)
    if isinstance(source, str) and "\n" in source:
        text, path = source, path or "<source>.linnet"
    else:
        path = str(source)
        text = read_program(path)
    return load_model(path, text, generics=generics, weights=weights, root=root,
                      numerics=numerics, tuning=tuning, mesh=mesh, shard=shard)
