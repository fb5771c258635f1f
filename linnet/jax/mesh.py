"""Entries over a device mesh: the kernel of each op named for sharding runs per shard.

`load_function(path, name, mesh=mesh, shard={"softmax": "data"})` compiles each binding as
the plain loader does, and then, for each instance of a named op that has a kernel, makes
the op run under `jax.shard_map` over the named mesh axes: its split parameters (by
`batch_rule`) are split along their leading axis, the others replicated, and its results
are split along theirs. Each shard calls the op's per-shard instance, compiled for the
per-shard sizes, whose kernel is the Pallas call (XLA cannot partition a `pallas_call`:
given sharded inputs it gathers them and runs the whole kernel on every device).

Where no per-shard kernel applies (the batch does not divide by the number of shards, the
kernel's `where` fails for the per-shard sizes, or `numerics="exact"`), the op runs its body
at the full size: plain `jnp`, which XLA's SPMD partitioner splits like the rest of the
entry. Gradients are the op's own (`jax.custom_vjp`: its grad clause or its body's vjp), at
the full size.

The module of a binding is imported under a name of its own for the mesh and the shard
plan (the loader shares modules by their text), and the run function of each sharded op
(`f1_op_run`, the kernel-or-body chooser the op's `custom_vjp` calls) is replaced in it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import LinnetError
from .batch_rule import BatchSplit, batch_split, op_binding, shard_entry
from .loader import JaxEntryFunction, jitted


@dataclass(frozen=True)
class ShardPlan:
    """A mesh and, per op named for sharding, the mesh axes its batch axis is split over."""
    mesh: Any
    axes: dict[str, tuple[str, ...]]

    def shards(self, op: str) -> int:
        """How many shards the op's batch axis is split into."""
        n = 1
        for axis in self.axes[op]:
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
    if not isinstance(shard, dict):
        raise LinnetError("shard= is a dict {op name: mesh axis name or tuple of names}")
    axes: dict[str, tuple[str, ...]] = {}
    for op, named in shard.items():
        named = (named,) if isinstance(named, str) else tuple(named)
        unknown = [a for a in named if a not in mesh.axis_names]
        if unknown or not named:
            raise LinnetError(f"shard: op `{op}` names mesh axis {unknown[0] if unknown else ''!r}"
                              f"; the mesh's axes are {', '.join(mesh.axis_names)}")
        axes[str(op)] = named
    return ShardPlan(mesh, axes)


@dataclass(eq=False)
class MeshEntryFunction(JaxEntryFunction):
    """A `JaxEntryFunction` whose named ops run their kernels per shard of a mesh."""
    plan: ShardPlan | None = None
    rules: dict[str, BatchSplit] = field(default_factory=dict)
    _analysis: Any = None

    def check_plan(self) -> None:
        """Each named op exists, is an op, and has a batch axis (`batch_rule`)."""
        from ..torch.loader import checked
        analysis = checked(self.text, self.path)
        assert self.plan is not None
        for op in self.plan.axes:
            sig = analysis.root.signatures.get(op)
            if sig is None or type(sig.item).__name__ != "Op":
                raise LinnetError(f"shard: `{op}` is not an op of {self.path}")
            self.rules[op] = batch_split(sig, op)
        self._analysis = analysis

    def _build(self, values: dict[str, object], device: str | None = None
               ) -> Callable[..., tuple]:
        compiled = self._compiled(values, device)
        assert self.plan is not None
        module = self._import(compiled, f"{self.name}_mesh_{self.plan.key()}")
        program = compiled.result.stages[-2].ir
        names = self._op_names(program)
        for fn in getattr(module, "_ln_ran", {}):
            op = program.func(names[fn])
            base = op.source.split()[1].split("<")[0]  # "op softmax<R=8, C=16>"
            if base in self.plan.axes:
                setattr(module, f"{fn}_run", self._sharded_run(module, fn, op, base, device))
        return jitted(module.main)

    def _sharded_run(self, module: Any, fn: str, op: Any, base: str,
                     device: str | None) -> Callable[..., Any]:
        """The op's run: its per-shard instance under `shard_map`, or else its body."""
        assert self.plan is not None
        rule, shards = self.rules[base], self.plan.shards(base)
        sig = self._analysis.root.signatures[base]
        b = op_binding(sig, [(p.type.shape, p.type.dtype) for p in op.params])
        batch = b.dims[rule.generic].as_int()
        per_shard = None
        if batch % shards == 0:
            per_shard = self._per_shard(sig, rule, b, shards, device)
        if per_shard is None:
            return _body_run(module, fn)
        return _shard_mapped(per_shard, self.plan.mesh, self.plan.axes[base], rule)

    def _per_shard(self, sig: Any, rule: BatchSplit, b: Any, shards: int,
                   device: str | None) -> Callable[..., Any] | None:
        """The op's per-shard instance as a function of its arguments, when a kernel
        applies to it (else None)."""
        from ..emit.jax import function_names
        from ..pipeline import compile_source
        name = _fresh_entry_name(self.text, rule.op)
        text = self.text + shard_entry(sig, rule, b, shards, name)
        compiled = compile_source(text, path=self.path, entry=name, numerics=self.numerics,
                                  target="jax", device=device,
                                  tuning=False if self.tuning is None else self.tuning)
        module = self._import(compiled, f"{rule.op}_per_shard")
        program = compiled.result.stages[-2].ir
        if not getattr(module, "_ln_ran", {}):  # no kernel for the per-shard sizes
            self._modules.pop()
            return None
        return getattr(module, function_names(program)[program.entry])


def _fresh_entry_name(text: str, op: str) -> str:
    """A name for the per-shard entry that the program's text does not use."""
    name = f"linnet_shard_{op}"
    while name in text:
        name += "_"
    return name


def _body_run(module: Any, fn: str) -> Callable[..., Any]:
    """The op's body at the full size, counted as a body run in the module's `_ln_ran`."""
    body, counts = getattr(module, f"{fn}_body"), module._ln_ran[fn]

    def run(*args: Any) -> Any:
        counts[1] += 1
        return body(*args)
    return run


def _shard_mapped(per_shard: Callable[..., Any], mesh: Any, axes: tuple[str, ...],
                  rule: BatchSplit) -> Callable[..., Any]:
    """`per_shard` under `jax.shard_map`: split parameters and every result along their
    leading axis over `axes`, the other parameters replicated."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P
    batch = P(axes if len(axes) > 1 else axes[0])
    in_specs = tuple(batch if s else P() for s in rule.split)

    out_specs = tuple(batch for _ in range(rule.results)) if rule.results else batch
    mapped = jax.shard_map(per_shard, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                           check_vma=False)

    def run(*args: Any) -> Any:
        return mapped(*(jnp.asarray(a) for a in args))
    return run
