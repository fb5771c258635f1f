"""The JAX printer's ops run per shard of a device mesh (`compile_source(..., shard=...)`).

XLA cannot partition a `pallas_call`: given inputs split over a mesh, it gathers them and
runs the whole kernel on every device. So an op named in `shard=`, or for a named op
without a kernel each op with one that its body calls (their batch rules and mesh axes
are in the program's state (`state.shard`), `linnet.check.batch_rule.sharded_ops`),
gets, for each of its instances with a kernel, a run that says so in the generated text:
once a mesh is installed, its per-shard launch under `jax.shard_map`, with the parameters the rule splits
and every result split along their leading axis over the named mesh axes and the other
parameters replicated; where no per-shard launch is installed, its body at the full size,
which XLA partitions like the rest of the module. Before a mesh is installed the op runs as
it would without `shard=`.

The per-shard launch is the kernel of the op's per-shard instance (the op compiled for the
per-shard sizes, a program of its own): `linnet.jax.mesh` compiles it and installs it with
the mesh through the module's `_ln_install`. A per-shard kernel run counts in `_ln_ran` as
a kernel run of the op's instance, a body run as a body run.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from ..ir import tensor as ir
from .jax_func import chooser, tuple_expr
from .layout import comment

if TYPE_CHECKING:
    from ..check.batch_rule import ShardedOp

SECTION = '''# Ops run per shard of a device mesh (compiled with shard=): linnet.jax.mesh
# installs the mesh and, for each op function listed here, the launch of its kernel
# compiled for the per-shard sizes, or None where no kernel applies per shard (the batch
# does not divide by the number of shards, or the `where` fails for the per-shard sizes:
# the op's body then runs at the full size). Until a mesh is installed, each runs as it
# would without shard=.
from jax.sharding import PartitionSpec as _P  # noqa: E402

_ln_mesh = None
_ln_per_shard = {SLOTS}


def _ln_install(mesh, launches):
    """Run the sharded ops over `mesh`, each through its per-shard launch in `launches`
    (by the op's function name here), or its body where that is None."""
    global _ln_mesh
    unknown = set(launches) - set(_ln_per_shard)
    if unknown:
        raise KeyError(f"no sharded op function {sorted(unknown)[0]!r} in this module")
    _ln_per_shard.update(launches)
    _ln_mesh = mesh


def _ln_shard_map(launch, in_specs, out_specs):
    """`launch` on every device of the installed mesh under jax.shard_map, each device on
    its blocks of the arguments (`in_specs`) and of the results (`out_specs`). A Pallas
    call has no rule for JAX's replication check, which is off."""
    mapped = jax.shard_map(launch, mesh=_ln_mesh, in_specs=in_specs, out_specs=out_specs,
                           check_vma=False)
    return lambda *args: mapped(*(jnp.asarray(a) for a in args))'''


def declared_op(f: ir.Func) -> str:
    """The name an op instance was declared under: `softmax` for `op softmax<R=8, C=16>`."""
    return f.source.split()[1].split("<")[0]


def shard_section(names: list[str]) -> str:
    """The module's mesh, per-shard launch slots (by op function name), their installer
    and the `shard_map` helper."""
    slots = "{" + ", ".join(f'"{n}": None' for n in names) + "}"
    return SECTION.replace("{SLOTS}", slots)


def sharded_chooser(f: ir.Func, name: str, gpu: bool, sharded: ShardedOp) -> str:
    """The run of an op instance named for sharding: under an installed mesh its per-shard
    launch or its body, else the choice of the op's usual chooser (`gpu` as there)."""
    rule, axes = sharded.rule, sharded.axes
    args = ", ".join(f"v{k}" for k in range(len(f.params)))
    batch = f"_P({axes[0]!r})" if len(axes) == 1 else f"_P({axes!r})"
    in_specs = tuple_expr([batch if s else "_P()" for s in rule.split])
    out_specs = tuple_expr([batch] * rule.results) if rule.results else batch
    split = ", ".join(f"v{k}" for k, s in enumerate(rule.split) if s)
    rest = "" if all(rule.split) else ", the other parameters whole on every device"
    over = (f"mesh axis {axes[0]}" if len(axes) == 1 else f"mesh axes {', '.join(axes)}")
    named = f" through {sharded.through}" if sharded.through else ""
    note = (f"op {f.name}, named in shard={named}: its batch axis {rule.generic} splits over {over}. "
            "Once linnet.jax.mesh has installed a mesh: its kernel per shard where one "
            f"applies and Pallas runs ({split} and the results split by rows{rest}), else "
            "its body. Before that: its kernel where Pallas runs, else its body. Counted in "
            "_ln_ran per trace.")
    under_mesh = [
        "if _ln_mesh is not None:",
        f'    if _ln_per_shard["{name}"] is not None and '
        f"_lp_kernel_ok({'' if gpu else 'gpu=False'}):",
        f"        _ln_ran_{name}[0] += 1",
        f'        return _ln_shard_map(_ln_per_shard["{name}"], {in_specs}, '
        f"{out_specs})({args})",
        f"    _ln_ran_{name}[1] += 1",
        f"    return {name}_body({args})"]
    return chooser(f, name, gpu, [f"# {line}" for line in textwrap.wrap(comment(note), 88)],
                   under_mesh)
