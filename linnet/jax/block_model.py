"""`linnet.jax.load_source` of a program with a root block: the model's entries as pure
functions of a params dict and a state dict, usable under `jax.jit` and `jax.grad`.

    model = load_source("model.linnet", generics={"L": 2}, weights="model.safetensors")
    logits, state = model.main(model.parameters, model.initial_state(), x)

- `model.parameters` is a dict by path of the checkpoint's params and buffers (checked
  against the manifest, as the PyTorch runtime checks them) as JAX arrays; every entry
  function carries it too (`model.main.parameters`).
- An entry is `f(params, state, *inputs) -> (result, next_state)`: `params` a dict by path
  of the params and buffers, `state` a dict by path of every state (`initial_state()`:
  zeros), and `next_state` the same dict with the states the entry assigns replaced.
  Nothing is kept between calls: the caller threads the state.
- `jax.grad(lambda p: model.loss(p, state, x)[0])(model.parameters)` differentiates with
  respect to every entry of the params dict (buffers get a gradient too, which training
  ignores; an integer param needs `allow_int=True`, as for any JAX function).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import LinnetError
from ..parameters import Manifest
from ..torch.block_entry_function import BlockEntryFunction
from .loader import JaxEntryFunction

__all__ = ["JaxBlockModel", "JaxBlockEntry", "load_model"]


@dataclass(eq=False)
class JaxBlockEntryFunction(BlockEntryFunction, JaxEntryFunction):
    """A root block's entry compiled for JAX, each binding's `main` jitted."""
    TARGET = "jax"


class JaxBlockEntry:
    """One entry of a model: `f(params, state, *inputs) -> (result, next_state)`."""

    def __init__(self, function: JaxBlockEntryFunction, manifest: Manifest,
                 parameters: dict[str, Any]) -> None:
        self.function = function
        self.manifest = manifest
        self.parameters = parameters

    def __repr__(self) -> str:
        return f"<linnet.jax entry {self.function.name} of {self.manifest.root}: " \
               f"f(params, state, *inputs) -> (result, next_state)>"

    def __call__(self, params: dict[str, Any], state: dict[str, Any], *inputs: Any
                 ) -> tuple[Any, dict[str, Any]]:
        def tensor(p):
            held = state if p.kind == "state" else params
            try:
                return held[p.path]
            except (KeyError, TypeError):
                what = "state" if p.kind == "state" else "params"
                raise LinnetError(f"{self.function.name}(): the {what} dict has no "
                                  f"{p.path!r} ({p.kind} {p.type_text()})") from None
        result, next_states = self.function.run(inputs, tensor)
        return result, {**state, **next_states}

    def initial_state(self) -> dict[str, Any]:
        return initial_state(self.manifest)

    def source(self, **values: Any) -> str:
        return self.function.source(**values)

    def ran(self) -> dict[str, dict[str, int]]:
        """What the calls so far ran, per op instance with a kernel (`EntryFunction.ran`)."""
        return self.function.ran()


class JaxBlockModel:
    """A root block loaded for JAX: `parameters`, `initial_state()`, `manifest`, and one
    `JaxBlockEntry` per entry (`model.main`, or `model["main"]` for any name)."""

    def __init__(self, manifest: Manifest, functions: dict[str, JaxBlockEntryFunction],
                 parameters: dict[str, Any]) -> None:
        self.manifest = manifest
        self.parameters = parameters
        self._entries = {name: JaxBlockEntry(fn, manifest, parameters)
                         for name, fn in functions.items()}

    def __repr__(self) -> str:
        """The root, its entries, and each present param, buffer and state with its type
        (what `params` and `initial_state()` hold), one a line."""
        members = "".join(f"\n  {p.path}: {p.kind} {p.type_text()}" for p in self.manifest.inputs)
        return f"<linnet.jax model {self.manifest.root}: entries {', '.join(self.entries)}" \
               f"{members}>"

    @property
    def entries(self) -> list[str]:
        return list(self._entries)

    def __getattr__(self, name: str) -> JaxBlockEntry:
        entries = self.__dict__.get("_entries")
        if entries is None or name not in entries:
            raise AttributeError(f"no entry named {name!r}")
        return entries[name]

    def __getitem__(self, name: str) -> JaxBlockEntry:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"no entry named {name!r} (entries: "
                           f"{', '.join(self._entries)})") from None

    def initial_state(self) -> dict[str, Any]:
        return initial_state(self.manifest)


def initial_state(manifest: Manifest) -> dict[str, Any]:
    """Every present state of the manifest, by path, at zeros."""
    return zeros(manifest, ("state",))


JAX_DTYPES = {"bool": "bool_", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
              "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
              "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def _jax_dtype(name: str) -> Any:
    import jax.numpy as jnp
    return getattr(jnp, JAX_DTYPES[name])


def zeros(manifest: Manifest, kinds: tuple[str, ...]) -> dict[str, Any]:
    """Every present parameter of these kinds, by path, at zeros (64-bit types kept)."""
    import jax
    import jax.numpy as jnp
    with jax.enable_x64(True):
        return {p.path: jnp.zeros(p.shape, dtype=_jax_dtype(p.dtype))
                for p in manifest.parameters if p.kind in kinds and p.input is not None}


def as_jax(value: Any) -> Any:
    """A tensor of a mapping, or read from a file, as a JAX array of its own dtype (a
    torch tensor through NumPy; bfloat16 by its bits, which NumPy cannot hold)."""
    import jax.numpy as jnp
    if hasattr(value, "detach"):  # a torch tensor
        import torch
        value = value.detach().cpu()
        if value.dtype == torch.bfloat16:
            return jnp.asarray(value.view(torch.int16).numpy()).view(jnp.bfloat16)
        value = value.numpy()
    return jnp.asarray(value)
