"""Entries over a device mesh: the kernel of each op named for sharding runs per shard.

`load_function(path, name, mesh=mesh, shard={"softmax": "data"})`, and a root block's model
(`load_source(path, generics=..., mesh=mesh, shard=...)`), compile each binding with
`compile_source(..., shard=...)`, so that the generated module says what runs
(`linnet/emit/jax_shard.py`). Each instance of a named op that has a kernel (of each op
with a kernel that a named kernel-less op calls, `check/called_kernels.py`) gets a slot for
its per-shard launch and a run that calls it under `jax.shard_map` over the named mesh axes,
its split parameters (by `batch_rule`) and its results split along their leading axis, the
other parameters replicated. XLA cannot partition a `pallas_call` (given sharded inputs it
gathers them and runs the whole kernel on every device); per shard, each device runs the
kernel on its own rows.

This module fills the slots: for each sharded instance it compiles the op's per-shard
instance (the op at the per-shard sizes, through an entry added to the program's text, or
to that of the module declaring the op where the program does not see it,
`batch_rule.shard_entry`), takes the launch of its kernel, and installs the launches and the
mesh with the module's `_ln_install`. Where no per-shard kernel applies (the batch does not
divide by the number of shards, the kernel's `where` fails for the per-shard sizes, or the
op's own `where` does) the slot stays None and the op runs its body at the full size: plain
`jnp`, which XLA's SPMD partitioner splits like the rest of the entry. Under
`numerics="exact"` no op has a kernel, and every op runs its body. Gradients are the op's
own (`jax.custom_vjp`: its grad clause or its body's vjp), at the full size.

The module of a binding is imported under a name of its own for the mesh and the plan (the
loader shares modules by name and text, and the installed mesh is the module's).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import LinnetError
from ..check.batch_rule import ShardedOp, named_axes, op_binding, shard_entry, sharded_ops
from ..diagnostics import CompileError
from ..emit.jax import function_names
from ..emit.jax_shard import declared_op
from ..ir import tensor as ir
from ..pipeline import compile_source
from ..torch.loader import checked
from ..torch.runtime import import_generated
from .block_model import JaxBlockEntryFunction
from .loader import JaxEntryFunction, jitted

WHERE_UNPROVEN = "E2206"  # a callee's `where` not provable at the call


@dataclass(frozen=True)
class ShardPlan:
    """A mesh and, per op named for sharding, the mesh axes its batch axis is split over."""
    mesh: Any
    axes: dict[str, tuple[str, ...]]

    def shards(self, axes: tuple[str, ...]) -> int:
        """How many shards a batch axis split over the mesh axes `axes` falls into."""
        n = 1
        for axis in axes:
            n *= int(self.mesh.shape[axis])
        return n

    def key(self) -> str:
        """A digest of the plan: the mesh's axes, sizes and devices and the ops' axes."""
        devices = [int(d.id) for d in self.mesh.devices.flat]
        text = repr((tuple(self.mesh.axis_names), tuple(self.mesh.devices.shape), devices,
                     sorted(self.axes.items())))
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def shard_plan(mesh: Any, shard: Any) -> ShardPlan:
    """The plan of `mesh=` and `shard=` ({op name: mesh axis or tuple of axes}), checked
    against the mesh's axis names."""
    if mesh is None or not shard:
        raise LinnetError("mesh= and shard= go together: shard={op name: mesh axis} names "
                          "the ops whose kernels run per shard of the mesh")
    axes = named_axes(shard)
    for op, named in axes.items():
        unknown = [a for a in named if a not in mesh.axis_names]
        if unknown:
            raise LinnetError(f"shard: op `{op}` names mesh axis {unknown[0]!r}; the mesh's "
                              f"axes are {', '.join(mesh.axis_names)}")
    return ShardPlan(mesh, axes)


@dataclass(eq=False)
class MeshEntryFunction(JaxEntryFunction):
    """A `JaxEntryFunction` whose named ops run their kernels per shard of a mesh."""
    plan: ShardPlan | None = None
    ops: dict[str, ShardedOp] = field(default_factory=dict)
    _analysis: Any = None
    # per sharded op instance of every binding: its per-shard instance, or None (its body)
    _per_shard: dict[str, str | None] = field(default_factory=dict)

    def check_plan(self, analysis: Any = None) -> None:
        """Each named op exists, is an op, and has a batch axis (`batch_rule`)."""
        assert self.plan is not None
        self._analysis = analysis or checked(self.text, self.path)
        self.ops = {s.rule.op: s for s in sharded_ops(self._analysis, self.plan.axes,
                                                      self.path)}

    def sharded(self) -> dict[str, str | None]:
        """Each instance of a named op with a kernel in the bindings compiled so far, mapped
        to the per-shard instance whose kernel runs on every device (`softmax__R8_C16` ->
        `softmax__R2_C16` over 4 devices), or None where the op runs its body."""
        return dict(self._per_shard)

    def _compiled(self, values: dict[str, object], device: str | None = None, **extra: Any):
        assert self.plan is not None
        return super()._compiled(values, device, shard=self.plan.axes, **extra)

    def _build(self, values: dict[str, object], device: str | None = None
               ) -> Callable[..., tuple]:
        compiled = self._compiled(values, device)
        assert self.plan is not None
        module = self._import(compiled, f"{self.name}_mesh_{self.plan.key()}")
        slots = getattr(module, "_ln_per_shard", None)
        if slots is not None:  # instances of the named ops with kernels
            program = compiled.result.stages[-2].ir
            names = self._op_names(program)
            module._ln_install(self.plan.mesh, {
                fn: self._per_shard_launch(program.func(names[fn]), module, fn, device)
                for fn in slots})
        return jitted(module.main)

    def _per_shard_launch(self, op: Any, module: Any, fn: str, device: str | None
                          ) -> Callable[..., Any] | None:
        """The launch of the kernel of `op`'s per-shard instance (`fn` in `module`), or None
        where none applies."""
        assert self.plan is not None
        base = declared_op(op)
        sharded = self.ops[base]
        shards, rule = self.plan.shards(sharded.axes), sharded.rule
        if shards == 1:  # the instance is its own per-shard instance
            self._per_shard[op.name] = op.name
            return getattr(module, f"{fn}_launch")
        text, path, sig = self._home(sharded)
        b = op_binding(sig, [(p.type.shape, p.type.dtype) for p in op.params])
        launch, name = None, None
        if b.dims[rule.generic].as_int() % shards == 0:
            launch, name = self._compile_per_shard(text, path, shard_entry(
                sig, rule, b, shards, _fresh_entry_name(text, base)), device)
        self._per_shard[op.name] = name
        return launch

    def _home(self, sharded: ShardedOp) -> tuple[str, str, Any]:
        """The text and path that a per-shard entry of the op is added to, and the op's
        signature there: the program's own where it sees the op, else the text of the
        module that declares it (an op reached through a kernel-less one may be private)."""
        declared = self._analysis.modules[sharded.module].signatures[sharded.rule.op]
        seen = self._analysis.root.signatures.get(sharded.rule.op)
        if seen is not None and seen.item is declared.item:
            return self.text, self.path, seen
        program = self._analysis.program
        path = program.files[sharded.module]
        return program.sources[path].text, path, declared

    def _compile_per_shard(self, text: str, path: str, entry: str, device: str | None
                           ) -> tuple[Callable[..., Any] | None, str | None]:
        """The launch of the kernel of the op the `entry` added to `text` calls, and the
        name of that per-shard instance; (None, None) where it has no kernel (its `where`
        fails for the per-shard sizes) or the op cannot be instantiated at them (its own
        `where`)."""
        name = entry.split()[1].split("(")[0]
        try:
            compiled = compile_source(text + entry, path=path, entry=name,
                                      numerics=self.numerics, target="jax", device=device,
                                      tuning=False if self.tuning is None else self.tuning)
        except CompileError as err:  # the op's own `where` refuses the per-shard sizes
            if {d.code for d in err.diagnostics} != {WHERE_UNPROVEN}:
                raise  # anything else is a fault of the per-shard entry, not a fallback
            return None, None
        program = compiled.result.stages[-2].ir
        callee = _called_op(program)
        fn = function_names(program)[callee]
        module = import_generated(compiled.text, f"{callee}_per_shard", "jax")
        if fn not in getattr(module, "_ln_ran", {}):  # no kernel for the per-shard sizes
            return None, None
        return getattr(module, f"{fn}_launch"), callee


@dataclass(eq=False)
class MeshBlockEntryFunction(JaxBlockEntryFunction, MeshEntryFunction):
    """A root block's entry whose named ops run their kernels per shard of a mesh: the
    block entry's compilation (root, generics, checkpoint paths) with `shard=`, and the
    per-shard launches installed as for a module-level entry."""


def _called_op(program: Any) -> str:
    """The op a per-shard entry calls (its body is that one call)."""
    entry = program.func(program.entry)
    return next(b.expr.callee for b in entry.body.binds if isinstance(b.expr, ir.Call))


def _fresh_entry_name(text: str, op: str) -> str:
    """A name for the per-shard entry that the program's text does not use."""
    name = f"linnet_shard_{op}"
    while name in text:
        name += "_"
    return name
