"""One entry of a root block, callable with the model's parameters: shared by the PyTorch
module (`block_module.py`) and the JAX model (`linnet.jax.block_model`).

It is an `EntryFunction` whose signature is the block entry's own, with the root block's
generics replaced by the model's values: at a call the entry's generics are bound from its
inputs as for any entry, each binding is compiled once (with the root block, the root's
generics and the checkpoint's paths), and the compiled entry is run on the inputs followed
by the model's tensors in manifest order (`Manifest.inputs`). It gives back the entry's
results and, apart, the next value of each state the entry assigns (`Manifest.assigned`):
the caller keeps them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from ..check.dim_normal_form import Dim
from ..check.signatures import Binding, substitute
from ..check.value_types import as_tuples, leaves
from ..parameters import Manifest, Parameter
from ..passes.front.bind_generics import parse_bindings
from ..passes.front.block_entry import choose_root
from ..pipeline import compile_source
from .loader import EntryFunction, checked

__all__ = ["BlockEntryFunction", "CompiledBinding", "block_entries"]


@dataclass(frozen=True)
class CompiledBinding:
    """One binding of a block entry: the compiled `main` and its manifest (the parameters
    it takes after the entry's own inputs, the states it returns after its results)."""
    main: Callable[..., tuple]
    manifest: Manifest


@dataclass(eq=False)  # hashed by identity, as EntryFunction
class BlockEntryFunction(EntryFunction):
    """An entry of the root block `root`, with the root's generics given as `block_bind`
    (text, as `--bind` takes them) and the checkpoint's paths as `present`."""
    root: str | None = None
    block_bind: dict[str, str] = field(default_factory=dict)
    present: frozenset[str] | None = None
    manifests: dict[tuple, Manifest] = field(default_factory=dict)

    def __repr__(self) -> str:
        return super().__repr__().replace(" entry ", " block entry ", 1)

    def __call__(self, *inputs: Any) -> Any:
        raise TypeError(f"the block entry {self.name} runs through its model: "
                        f"model.{self.name}(...)")

    def run(self, inputs: tuple, tensor: Callable[[Parameter], Any]) -> tuple[Any, dict]:
        """The entry on `inputs`, with `tensor(p)` the model's value of each parameter it
        takes: (its result, as a module-level entry gives it; {state path: next value})."""
        try:
            bound = self.by_inputs[self._input_key(inputs)]
        except (KeyError, TypeError):
            bound = self._run_for(inputs)
        manifest = bound.manifest
        outputs = bound.main(*inputs, *(tensor(p) for p in manifest.inputs))
        n = len(outputs) - len(manifest.assigned)
        result = tuple(outputs[:n]) if self._tuple_result else outputs[0]
        return result, dict(zip(manifest.assigned, outputs[n:]))

    def _check_signature(self):
        return block_signature(checked(self.text, self.path), self.root, self.name,
                               self.block_bind)

    def _compile_source(self, values: dict[str, object], **options: Any):
        compiled = compile_source(self.text, path=self.path, entry=self.name, root=self.root,
                                  bind={**self.block_bind, **values}, present=self.present,
                                  **options)
        self.manifests[_key(values)] = compiled.parameters
        return compiled

    def _build(self, values: dict[str, object], device: str | None = None) -> CompiledBinding:
        main = super()._build(values, device)
        return CompiledBinding(main, self.manifests[_key(values)])


def _key(values: dict[str, object]) -> tuple:
    return tuple(sorted(values.items()))


def block_signature(analysis: Any, root: str | None, name: str, block_bind: dict[str, str]):
    """The signature of the root block's entry `name`, as the compiled entry takes its own
    inputs: the root's generics replaced by their values, a struct parameter spread into its
    fields, a struct result a tuple. Its generics are the entry's own."""
    info = choose_root(analysis, root, None)
    values = parse_bindings(info.item, block_bind)
    b = Binding()
    for generic, value in values.items():
        if isinstance(value, int):
            b.dims[generic] = Dim.const(value)
        elif isinstance(value, str):
            b.dtypes[generic] = value
        else:
            b.packs[generic] = tuple(Dim.const(n) for n in value)
    sig = info.sigs[name]
    params = [leaf for ty in sig.params for leaf in leaves(substitute(ty, b))]
    return dataclasses.replace(sig, params=params, result=as_tuples(substitute(sig.result, b)))


def block_entries(analysis: Any, root: str | None) -> list[str]:
    """The names of the root block's entries, in declaration order."""
    info = choose_root(analysis, root, None)
    return [f.name for f in info.fns.values() if f.kind == "entry"]
