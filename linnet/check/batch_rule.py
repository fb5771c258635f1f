"""Which axes of an op split over a device mesh: the batch rule, and the per-shard call.

An op named for sharding (`linnet.jax.load_function(..., mesh=..., shard={"softmax":
"data"})`) runs once per shard of its batch axis, so the rule reads the op's declared
signature, not its body:

- every result is a tensor whose leading axis is one plain generic `Dim` of the op, the
  same for all results (the batch generic, `R` in `softmax<R, C>(x: Tensor[R, C; f32]) ->
  Tensor[R, C; f32]`);
- each parameter whose leading axis is that generic is split along it; every other
  parameter (a weight `w: Tensor[C; f32]`, a scalar `eps: f32`) is passed whole to every
  shard, and must not mention the generic anywhere;
- no result or parameter mentions the generic except as its leading axis, and at least one
  parameter is split.

What the signature cannot say is whether a result's row depends on that row of the inputs
alone (a softmax over rows, a layer norm: yes; a normalisation by column sums: no), so
naming the op asserts it; the rule refuses every op whose types already show otherwise
(`layer_norm_backward`, whose `dw: Tensor[C; f32]` sums over the rows).

An op declared without a kernel runs none of its own: naming it names the ops with kernels
that its body calls (`called_kernels`), each of which must have a batch axis by this rule,
so that `shard={"attention_causal": "data"}` splits `attention_causal_lse`, the op whose
kernel runs for it. The user keeps naming the op the program calls.

The compiler reads the rule too: `compile_source(..., target="jax", shard={"softmax":
"data"})` leaves each named op's rule and mesh axes in the program (`sharded_ops`), and the
JAX printer gives each instance of one with a kernel a `jax.shard_map` of its per-shard
launch (`linnet/emit/jax_shard.py`).

The per-shard instance of the op is compiled through an entry made for it: the op called
with its arguments' per-shard types, all concrete, so that the per-shard sizes bind the
kernel's generics and its `where` is checked for them. The entry is added to the text of
the module that declares the op, where the op is in scope even if it is not `pub`: the
program's own text for its ops and those it `use`s (`examples/gpt/gpt.linnet` calls
`gpt_ops`'s `linear`), the library module's for an op reached through a kernel-less one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import LinnetError, UsageError
from .called_kernels import declaring_module, kernel_ops_called
from .dim_normal_form import Dim
from .signatures import Binding, bind_shape, match_dims, substitute
from .types import TensorT, TupleT


@dataclass(frozen=True)
class BatchSplit:
    """The batch generic of an op and which of its parameters are split along it."""
    op: str
    generic: str
    split: tuple[bool, ...]
    results: int  # the number of items of a tuple result; 0 for one tensor


def batch_split(sig: Any, op: str) -> BatchSplit:
    """The op's batch axis by the rule of this module; a LinnetError says why there is none."""
    results = sig.result.items if isinstance(sig.result, TupleT) else (sig.result,)
    dims = {g.name for g in sig.generics if g.kind == "Dim" and not g.pack}
    leads = {_leading_generic(r, dims) for r in results}
    if len(leads) != 1 or None in leads:
        raise LinnetError(f"shard: op `{op}` cannot be split over a mesh: each of its results "
                          "must be a tensor whose leading axis is the same generic Dim")
    (generic,) = leads
    for k, ty in enumerate([*results, *sig.params]):
        if not isinstance(ty, TensorT) or ty.has_pack:
            raise LinnetError(f"shard: op `{op}` cannot be split over a mesh: it takes or "
                              f"gives {ty}, not a tensor of fixed rank")
        later = ty.dims[1:] if ty.dims and ty.dims[0] == Dim.sym(generic) else ty.dims
        if any(generic in d.symbols() for d in later):
            raise LinnetError(f"shard: op `{op}` cannot be split over a mesh: `{generic}` "
                              f"(the leading axis of its result) is another axis of {ty}")
    split = tuple(bool(p.dims) and p.dims[0] == Dim.sym(generic) for p in sig.params)
    if not any(split):
        raise LinnetError(f"shard: op `{op}` cannot be split over a mesh: no parameter has "
                          f"`{generic}` as its leading axis")
    return BatchSplit(op, generic, split,
                      len(results) if isinstance(sig.result, TupleT) else 0)


@dataclass(frozen=True)
class ShardedOp:
    """An op whose kernel runs per shard: its batch rule, the mesh axes its batch axis
    splits over (several: split over all of them, in this order), the key of the module
    that declares it, and the op `shard=` named, where that has no kernel and calls this
    one (else empty)."""
    rule: BatchSplit
    axes: tuple[str, ...]
    module: tuple[str, ...] = ()
    through: str = ""

    def __str__(self) -> str:
        """`rows_sum over data (batch axis R)`, as a dump of the program's state shows it."""
        named = f", named through {self.through}" if self.through else ""
        return (f"{self.rule.op} over {', '.join(self.axes)} (batch axis "
                f"{self.rule.generic}){named}")


def named_axes(shard: Any) -> dict[str, tuple[str, ...]]:
    """`shard=` ({op name: mesh axis name, or a tuple of names}) with every value a tuple."""
    if not isinstance(shard, Mapping):
        raise UsageError("shard= is a dict {op name: mesh axis name or tuple of names}")
    axes: dict[str, tuple[str, ...]] = {}
    for op, named in shard.items():
        named = (named,) if isinstance(named, str) else tuple(named)
        if not named or not all(isinstance(a, str) for a in named):
            raise UsageError(f"shard: op `{op}` names no mesh axis ({shard[op]!r}); give an "
                             "axis name or a tuple of names")
        axes[str(op)] = named
    return axes


def sharded_ops(analysis: Any, shard: Mapping[str, tuple[str, ...]], path: str
                ) -> tuple[ShardedOp, ...]:
    """The ops whose kernels run per shard, with their rules and mesh axes: each op `shard`
    names, or for one without a kernel the ops with kernels its body calls. A LinnetError
    for a name that is no op of the program (its own ops and those of the modules it uses),
    an op without a batch axis, or an op that two names split over different axes."""
    found: dict[str, ShardedOp] = {}
    for op, axes in shard.items():
        sig = analysis.root.signatures.get(op)
        if sig is None or type(sig.item).__name__ != "Op":
            raise UsageError(f"shard: `{op}` is not an op of {path}")
        for sharded in _kernel_ops_of(analysis, op, sig, tuple(axes)):
            seen = found.setdefault(sharded.rule.op, sharded)
            if seen.axes != sharded.axes:
                raise UsageError(
                    f"shard: `{seen.through or seen.rule.op}` and `{op}` split the kernel of "
                    f"`{sharded.rule.op}` over different mesh axes "
                    f"({', '.join(seen.axes)}; {', '.join(sharded.axes)})")
    return tuple(found.values())


def _kernel_ops_of(analysis: Any, op: str, sig: Any, axes: tuple[str, ...]
                   ) -> list[ShardedOp]:
    """The op named `op` with its rule, or, where it has no kernel but its body calls ops
    that have, each of those with its own (the error of the first without one says which
    named op called it)."""
    called = kernel_ops_called(analysis, sig.item) if sig.item.kernel is None else ()
    if not called:
        return [ShardedOp(batch_split(sig, op), axes, declaring_module(analysis, sig.item))]
    ops = []
    for c in called:
        try:
            rule = batch_split(analysis.modules[c.module].signatures[c.op.name], c.op.name)
        except LinnetError as err:
            raise LinnetError(f"{err} (`{op}` has no kernel of its own: its body calls "
                              f"`{c.op.name}`, whose kernel would run per shard)") from None
        ops.append(ShardedOp(rule, axes, c.module, through=op))
    return ops


def _leading_generic(ty: Any, dims: set[str]) -> str | None:
    """The name of the generic Dim that is `ty`'s leading axis, or None."""
    if not isinstance(ty, TensorT) or not ty.dims or ty.has_pack:
        return None
    return next((g for g in dims if ty.dims[0] == Dim.sym(g)), None)


def op_binding(sig: Any, param_types: list[tuple[tuple[int, ...], str]]) -> Binding:
    """The op's generics bound from one instance's parameter shapes and dtypes."""
    generics = {g.name for g in sig.generics}
    b = Binding()
    for param, (shape, dtype) in zip(sig.params, param_types):
        bind_shape(param, shape, dtype, generics, b)
    return b


def shard_entry(sig: Any, rule: BatchSplit, b: Binding, shards: int, name: str) -> str:
    """The text of an entry `name` that calls the op on its per-shard types (the batch
    generic's extent divided by `shards`), all concrete."""
    per = Binding(dims={**b.dims, rule.generic: Dim.const(b.dims[rule.generic].as_int()
                                                          // shards)},
                  dtypes=dict(b.dtypes), packs=dict(b.packs))
    params = ", ".join(f"p{k}: {substitute(p, per)}" for k, p in enumerate(sig.params))
    args = ", ".join(f"p{k}" for k in range(len(sig.params)))
    return (f"\n\nentry {name}({params}) -> {substitute(sig.result, per)} {{\n"
            f"    return {rule.op}({args})\n}}\n")
