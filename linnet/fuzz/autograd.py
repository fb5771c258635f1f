"""Autograd through the runtimes, as a user of `linnet.torch` and `linnet.jax` would take it:
the loss of a case and the gradient of each input it is differentiated with respect to.

Why apart from execute.py: a module-level entry runs through the runtimes' callables
(`EntryFunction`, `JaxEntryFunction`) and is differentiated with respect to its floating
inputs; a root block's entry runs through the model the runtime loads (the `nn.Module` of
`linnet.torch.load`, whose floating params are `nn.Parameter`s; the pure functions of a
params dict that `linnet.jax.load_source` gives) and is differentiated with respect to its
own floating inputs and then the tree's floating params, in manifest order, as `--grad`
is (docs/models.md). A block case's inputs after the entry's own are the checkpoint (its
params and buffers, by path) and the states the model starts from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..checkpoint import model_manifest
from ..ir.prim_types import FLOATS
from ..jax import load_source
from ..jax.loader import JaxEntryFunction
from ..passes.front.block_entry import choose_root
from ..torch.loader import EntryFunction, checked
from . import backends
from .case import Case

__all__ = ["FLOATS", "entry_function", "module_autograd", "BlockCase", "block_case",
           "load_block"]


# ------------------------------------------------------------------ module-level entries

def entry_function(target: str, path: str, case: Case, numerics: str):
    """The runtime's callable for the entry (`linnet.torch.load_function`'s, or
    `linnet.jax`'s), from the text; kernel choices from the op headers only."""
    entry_class = EntryFunction if target == "torch" else JaxEntryFunction
    fn = entry_class(path, case.text, case.entry, True, numerics, None)
    present = case.present
    if present is not None:  # a block entry's checkpoint paths reach each compilation
        compile_for = fn._compile_source
        fn._compile_source = lambda values, **options: compile_for(  # type: ignore
            values, present=present, **options)
    return fn


def module_autograd(target: str, fn, case: Case, floats: Sequence[int], device: str):
    """(loss, [gradient of each floating input]) of a module-level entry."""
    if target == "torch":
        return _torch_autograd(fn, case, floats, device)
    return _jax_autograd(fn, case, floats)


def _call(fn, case: Case, inputs: list) -> Any:
    """The entry's one result through the runtime's callable (`_prime`d with the case's
    generics)."""
    _prime(fn, tuple(inputs), case.generics)
    out = fn(*inputs)
    return out[0] if isinstance(out, tuple) else out


def _torch_autograd(fn, case: Case, floats: Sequence[int], device: str):
    inputs = [backends.to_torch(x, device) for x in case.inputs]
    for k in floats:
        inputs[k] = inputs[k].detach().clone().requires_grad_()
    loss = _call(fn, case, inputs)
    if loss.requires_grad:  # else the loss reads no floating input: every gradient is 0
        loss.backward()
    import torch
    return loss, [inputs[k].grad if inputs[k].grad is not None
                  else torch.zeros_like(inputs[k]) for k in floats]


def _jax_autograd(fn, case: Case, floats: Sequence[int]):
    import jax
    with jax.enable_x64(True):  # linnet.jax scopes 64-bit types to its calls: arrays made
        return _jax_autograd_x64(fn, case, floats)  # here must be made with them on too


def _jax_autograd_x64(fn, case: Case, floats: Sequence[int]):
    import jax
    import jax.numpy as jnp
    inputs = [jnp.asarray(x) for x in case.inputs]

    def loss(*xs):
        args = list(inputs)
        for k, x in zip(floats, xs):
            args[k] = x
        return _call(fn, case, args)

    if not floats:  # nothing to differentiate (jax.grad needs an argument)
        return loss(), []
    value, grads = jax.value_and_grad(loss, argnums=tuple(range(len(floats))))(
        *(inputs[k] for k in floats))
    return value, list(grads)


# ------------------------------------------------------------------ block entries

@dataclass
class BlockCase:
    """A root block's entry case as a loaded model takes it: the root's generics and the
    entry's, the entry's own inputs (and which of them are floating), the checkpoint (params
    and buffers by path), the states by path, and the trainable params' paths in manifest
    order."""
    root_generics: dict[str, Any]
    entry_generics: dict[str, Any]
    own: list[np.ndarray]
    own_floats: list[int]
    weights: dict[str, np.ndarray]
    states: dict[str, np.ndarray]
    trainable: list[str]


def block_case(case: Case, path: str) -> BlockCase | None:
    """The case split as a model takes it (the runtime's manifest decides the split), or
    None when its entry is no root block's."""
    analysis = checked(case.text, path)
    info = choose_root(analysis, None, case.entry)
    if info is None or case.entry not in info.fns:
        return None
    root = {k: v for k, v in case.generics.items() if k in info.generics}
    manifest, _ = model_manifest(analysis, None, root, case.present)
    held = manifest.inputs
    n = len(case.inputs) - len(held)
    own = [np.asarray(x) for x in case.inputs[:n]]
    rest = dict(zip((p.path for p in held), case.inputs[n:]))
    return BlockCase(root, {k: v for k, v in case.generics.items() if k not in root}, own,
                     [k for k, x in enumerate(own) if backends.dtype_name(x) in FLOATS],
                     {p.path: rest[p.path] for p in held if p.kind != "state"},
                     {p.path: rest[p.path] for p in held if p.kind == "state"},
                     [p.path for p in held if p.trainable])


def load_block(target: str, path: str, case: Case, split: BlockCase, numerics: str,
               device: str) -> Callable[[], tuple[Any, list]]:
    """The model loaded with the case's checkpoint and states (`linnet.torch.load`'s
    module, `linnet.jax.load_source`'s functions), as a job that runs the entry and
    differentiates it: (loss, [gradient of each own floating input, then of each
    trainable param])."""
    if target == "torch":
        return _torch_block(path, case, split, numerics, device)
    return _jax_block(path, case, split, numerics)


def _prime(function, inputs: tuple, generics: dict[str, Any]) -> None:
    """Bind what the entry's inputs cannot (a `Dim` only its result has) from the case's
    generics, by preparing that binding ahead of the call (`EntryFunction.prepare`)."""
    values = function.binding_for(inputs, complete=False)
    missing = {k: v for k, v in generics.items() if k not in values}
    if missing:
        function.prepare(*inputs, **missing)


def _torch_block(path: str, case: Case, split: BlockCase, numerics: str, device: str):
    import torch
    from ..torch.block_module import load_model
    weights = {p: backends.to_torch(x, device) for p, x in split.weights.items()}
    model = load_model(path, case.text, checked(case.text, path), generics=split.root_generics,
                       weights=weights, root=None, compile=True, numerics=numerics,
                       device=device, tuning=None)
    with torch.no_grad():
        for p, x in split.states.items():
            model.get_buffer(p).copy_(backends.to_torch(x, device))
    method = model.entry(case.entry)

    def job():
        own = [backends.to_torch(x, device) for x in split.own]
        for k in split.own_floats:
            own[k] = own[k].detach().clone().requires_grad_()
        _prime(method.function, tuple(own), split.entry_generics)
        loss = method(*own)
        if loss.requires_grad:  # else it reads nothing trainable: every gradient is 0
            loss.backward()
        wrt = [own[k] for k in split.own_floats] + [model.get_parameter(p)
                                                    for p in split.trainable]
        return loss, [x.grad if x.grad is not None else torch.zeros_like(x) for x in wrt]
    return job


def _jax_block(path: str, case: Case, split: BlockCase, numerics: str):
    import jax
    with jax.enable_x64(True):
        model = load_source(case.text, path=path, generics=split.root_generics,
                            weights=split.weights, numerics=numerics)
    entry = model[case.entry]

    def job():
        with jax.enable_x64(True):  # 64-bit inputs and states stay 64-bit
            import jax.numpy as jnp
            own = [jnp.asarray(x) for x in split.own]
            state = {p: jnp.asarray(x) for p, x in split.states.items()}
            params = dict(model.parameters)
            _prime(entry.function, tuple(own), split.entry_generics)

            def loss(floats: list, trained: dict):
                args = list(own)
                for k, x in zip(split.own_floats, floats):
                    args[k] = x
                return entry({**params, **trained}, state, *args)[0]

            value, (d_own, d_params) = jax.value_and_grad(loss, argnums=(0, 1))(
                [own[k] for k in split.own_floats], {p: params[p] for p in split.trainable})
            return value, list(d_own) + [d_params[p] for p in split.trainable]
    return job
