"""`linnet.torch.load` of a program with a root block: the model as a `torch.nn.Module`.

The module tree mirrors the root block's instance tree, so that `state_dict()` keys are
the Linnet parameter paths (`layers.0.up`) and a PyTorch model written with the same names
loads with `load_state_dict`: a sub is a child module, a sub array an `nn.ModuleList`, a
param an `nn.Parameter` (trainable when floating), a buffer a persistent buffer, a state a
non-persistent buffer that starts at zeros. An optional member the compilation leaves
absent has no tensor at all.

Entries are methods (`model.logits(x)`); each call runs the compiled entry
(`BlockEntryFunction`) on the inputs and the module's current tensors (after `.to()` as
well), then puts each next state in its buffer, detached: a state carries no graph from
one call to the next. `model(x)` runs the entry `forward`, or the only entry.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

import numpy as np
from ..checkpoint import Checkpoint, check_checkpoint, FLOATING, open_checkpoint, \
    model_manifest
from ..errors import LinnetError
from ..parameters import Manifest, Parameter
from .block_entry_function import BlockEntryFunction, block_entries, block_signature
from .loader import read_tuning

__all__ = ["BlockModel", "BlockPart", "BlockMethod", "load_model", "TORCH_DTYPES"]

TORCH_DTYPES = {"bool": torch.bool, "i8": torch.int8, "i16": torch.int16,
                "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8,
                "u16": torch.uint16, "u32": torch.uint32, "u64": torch.uint64,
                "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
                "f64": torch.float64}


class BlockMethod:
    """`model.logits`: the entry `logits` of one model, called as a method. `source(...)`,
    `prepare(...)` and `ran()` are the entry's (`linnet.torch.EntryFunction`)."""

    def __init__(self, model: "BlockModel", function: BlockEntryFunction) -> None:
        self.model = model
        self.function = function

    def __call__(self, *inputs: Any) -> Any:
        return self.model.run_entry(self.function, inputs)

    def __repr__(self) -> str:
        return f"<entry {self.function.name} of {self.model._linnet_manifest.root}>"

    def source(self, **values: Any) -> str:
        return self.function.source(**values)

    def prepare(self, *inputs: Any, **generics: Any) -> None:
        """Compile the entry's binding for these inputs, running nothing: what
        `torch.compile` of a caller needs first (`EntryFunction.prepare`)."""
        self.function.prepare(*inputs, **generics)

    def ran(self) -> dict[str, dict[str, int]]:
        return self.function.ran()


class BlockPart(nn.Module):
    """A sub block's module (an element of a sub array too): its params, buffers and states
    are listed by its repr, with their kinds and types, as `nn.Linear` lists its sizes."""

    def __init__(self) -> None:
        super().__init__()
        self._linnet_members: list[tuple[str, Parameter]] = []

    def extra_repr(self) -> str:
        return _members_text(self._linnet_members)


def _members_text(members: list[tuple[str, Parameter]]) -> str:
    """`up: param Tensor[8, 4; f32]`, one line per member, in manifest order."""
    return "\n".join(f"{name}: {p.kind} {p.type_text()}" for name, p in members)


class BlockModel(nn.Module):
    """A root block with its parameters, buffers and states (see the module docstring).

    `manifest` is the root block's manifest (`linnet.parameters.Manifest`, no entry
    chosen); `entries` the names of its entries; `entry(name)` the method of any entry,
    whatever its name (`model.entry("train")`, where `model.train` is nn.Module's)."""

    def __init__(self, manifest: Manifest, functions: dict[str, BlockEntryFunction],
                 device: Any = None) -> None:
        super().__init__()
        self._linnet_manifest = manifest
        self._linnet_entries = functions
        self._linnet_slots: dict[str, tuple[nn.Module, str]] = {}
        self._linnet_members: list[tuple[str, Parameter]] = []
        for p in manifest.parameters:
            if p.input is not None:
                self._linnet_slots[p.path] = _register(self, p, device)

    def extra_repr(self) -> str:
        """The root block and its entries, then its own params, buffers and states (each
        sub's are in its own repr below)."""
        head = f"{self._linnet_manifest.root}, entries: {', '.join(self._linnet_entries)}"
        members = _members_text(self._linnet_members)
        return f"{head}\n{members}" if members else head

    @property
    def manifest(self) -> Manifest:
        return self._linnet_manifest

    @property
    def entries(self) -> list[str]:
        return list(self._linnet_entries)

    def entry(self, name: str) -> BlockMethod:
        try:
            return BlockMethod(self, self._linnet_entries[name])
        except KeyError:
            raise LinnetError(f"`{self._linnet_manifest.root}` has no entry named {name!r} "
                              f"(its entries: {', '.join(self._linnet_entries)})") from None

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            entries = self.__dict__.get("_linnet_entries")
            if entries is not None and name in entries:
                return BlockMethod(self, entries[name])
            raise

    def forward(self, *inputs: Any) -> Any:
        """The entry `forward`, else the only entry."""
        entries = self._linnet_entries
        if "forward" in entries:
            return self.run_entry(entries["forward"], inputs)
        if len(entries) == 1:
            return self.run_entry(next(iter(entries.values())), inputs)
        raise LinnetError(f"model(...) runs the entry `forward` or the only entry, and "
                          f"`{self._linnet_manifest.root}` has {len(entries)} entries, none "
                          f"named forward: call one by name ("
                          + ", ".join(f"model.{n}(...)" for n in entries) + ")")

    def run_entry(self, function: BlockEntryFunction, inputs: tuple) -> Any:
        """The entry on the inputs and this module's tensors; its next states kept."""
        result, states = function.run(inputs, self.tensor)
        for path, value in states.items():
            module, name = self._linnet_slots[path]
            setattr(module, name, value.detach())  # a new tensor: a graph may hold the old
        return result

    def tensor(self, p: Parameter) -> torch.Tensor:
        """The module's current tensor for the parameter (after `.to()` too)."""
        module, name = self._linnet_slots[p.path]
        return getattr(module, name)

    def reset_state(self) -> None:
        """Every state back to zeros (where it is now, in its dtype)."""
        for p in self._linnet_manifest.parameters:
            if p.kind == "state" and p.path in self._linnet_slots:
                module, name = self._linnet_slots[p.path]
                setattr(module, name, torch.zeros_like(getattr(module, name)))

    def load_checkpoint(self, weights: Any) -> None:
        """Copy a checkpoint's params and buffers in (a `.safetensors` path or a mapping of
        path -> tensor), after checking every name, shape and dtype against the manifest;
        states in it are checked, not loaded (a state starts at zeros)."""
        checkpoint = weights if isinstance(weights, Checkpoint) else open_checkpoint(weights)
        check_checkpoint(self._linnet_manifest, checkpoint)
        paths = [p.path for p in self._linnet_manifest.parameters
                 if p.input is not None and p.kind != "state"]
        with torch.no_grad():
            for path, value in checkpoint.tensors(paths, "pt").items():
                module, name = self._linnet_slots[path]
                getattr(module, name).copy_(_as_torch(value))


def _register(root: nn.Module, p: Parameter, device: Any) -> tuple[nn.Module, str]:
    """The parameter's tensor made (zeros) and registered where its path says: the child
    modules on the way made as needed (an array position under an `nn.ModuleList`)."""
    *parents, leaf = p.path.split(".")
    module = root
    for k, part in enumerate(parents):
        module = _child(module, part, array=(parents + [leaf])[k + 1].isdigit())
    tensor = torch.zeros(p.shape, dtype=TORCH_DTYPES[p.dtype], device=device)
    try:
        if p.kind == "param":
            module.register_parameter(leaf, nn.Parameter(tensor, requires_grad=p.dtype
                                                         in FLOATING))
        else:
            module.register_buffer(leaf, tensor, persistent=p.kind == "buffer")
    except (KeyError, TypeError) as err:
        raise LinnetError(f"{p.path}: the {p.kind} cannot be a torch module member "
                          f"({err})") from None
    module._linnet_members.append((leaf, p))
    return module, leaf


def _child(module: nn.Module, part: str, array: bool) -> nn.Module:
    if part.isdigit():
        assert isinstance(module, nn.ModuleList)
        while len(module) <= int(part):  # an element without parameters stays empty
            module.append(BlockPart())
        return module[int(part)]
    found = module._modules.get(part)
    if found is None:
        found = nn.ModuleList() if array else BlockPart()
        module.add_module(part, found)
    return found


def _as_torch(value: Any) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    return torch.as_tensor(np.asarray(value))


def load_model(path: str, text: str, analysis: Any, *, generics: Any, weights: Any, root: str | None,
               compile: bool, numerics: str, device: Any, tuning: Any) -> BlockModel:
    """The `BlockModel` of the program at path, whose text is checked as `analysis` (see
    `linnet.torch.load`)."""
    checkpoint = open_checkpoint(weights)
    present = None if checkpoint is None else checkpoint.keys
    manifest, block_bind = model_manifest(analysis, root, generics, present)
    if checkpoint is not None:
        check_checkpoint(manifest, checkpoint)  # before anything is made or copied
    tuning = read_tuning(tuning, path)
    functions = {}
    for name in block_entries(analysis, root):
        fn = BlockEntryFunction(path, text, name, compile, numerics, tuning, root=manifest.root,
                                block_bind=block_bind, present=present)
        fn._sig = block_signature(analysis, manifest.root, name, block_bind)
        functions[name] = fn
    model = BlockModel(manifest, functions, device)
    if checkpoint is not None:
        model.load_checkpoint(checkpoint)
    return model
