"""Call rewrites: an op called with the value of a known op as one argument is another op.

`attention_masked(q, k, v, s, causal_mask<Q, K>())` computes what `attention_causal(q, k,
v, s)` computes, and only the second has a kernel. A `CallRewrite` declares such a fact
as data: the op, the argument, the op whose value it holds, and the op to call instead
without that argument. `REWRITES` lists the library's; `elaborate` applies them where
instances are made (`Elaborator(analysis, rewrites)`), because that is where both the
argument's origin and the checked analysis (to instantiate the new op, with its kernel
binding and its grad clause) are at hand.

The argument's origin travels with the value: a call of a value op (one that takes no
parameters, like `causal_mask<Q, K>()`) marks the variable it defines, a `let` keeps the
mark, and a call that passes a marked variable to a parameter makes the callee's instance
one of its own (`attention` with `mask = causal_mask`), whose parameter is marked in
turn. So `attention(q, k, v, s, some(causal_mask<Q, K>()))`, or the mask bound by `let`
first, reaches `attention_masked` marked, and the call becomes `attention_causal`. A
value that is anything else (a causal mask with an offset, a mask computed from
`causal_mask`, a tensor passed in) carries no mark, and nothing changes.

Why a rewrite is sound, which the elaborator checks each time one fires:

* the value op takes no parameters and its result type names each of its generics, so
  the argument's type fixes them: a value of that type from that op is one tensor;
* the new op takes the op's parameters without the argument, of the same types, and
  returns the same type, with generics the op's own (by name);
* the two are equal by their bodies (`attention_causal`'s body is `attention_masked`'s
  under `causal_mask<Q, K>()`); `linnet verify --entry` of an entry calling the op with
  the value checks it, since `--numerics exact` applies no rewrite (docs/passes.md).

Rewrites apply only where kernels may run (the torch and jax targets, not `--numerics
exact`, not `--grad`), and only where the new op's kernel `where` holds at the call's
sizes (`attention_causal`'s, that of `attention_causal_lse` which it calls, needs
`Q <= K`): they exist to reach a kernel, and choose an
implementation as `choose-kernels` does; everywhere else the bodies run as written.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...check.signatures import Binding
from ...ir import tensor as ir
from ...syntax import tree as t
from .vocabulary import ElaborationError


@dataclass(frozen=True)
class CallRewrite:
    """`op(..., argument = value<...>(), ...)` is `to(...)` without the argument; the
    three ops are items of `module`. `kernel_of` names the op, of `to`'s generics, whose
    kernel `to` runs when `to` has none of its own but calls one that has (empty: `to`)."""
    name: str
    module: str
    op: str
    argument: str
    value: str
    to: str
    kernel_of: str = ""

    @property
    def value_id(self) -> str:
        """The value op's identity, `std.nn.attention::causal_mask`: the mark it leaves."""
        return f"{self.module}::{self.value}"

    def __str__(self) -> str:
        return (f"{self.name}: {self.module}::{self.op}(..., {self.argument} = "
                f"{self.value}<...>()) -> {self.to}(...)")


CAUSAL_ATTENTION = CallRewrite(
    "causal-attention", "std.nn.attention", "attention_masked", "mask", "causal_mask",
    "attention_causal", kernel_of="attention_causal_lse")

REWRITES: tuple[CallRewrite, ...] = (CAUSAL_ATTENTION,)


def value_ids(rewrites: tuple[CallRewrite, ...]) -> frozenset[str]:
    """The identities of the value ops whose calls are marked."""
    return frozenset(r.value_id for r in rewrites)


def matching(rewrites: tuple[CallRewrite, ...], module: str, op: str,
             known: dict[str, str]) -> CallRewrite | None:
    """The rewrite of a call of `module::op` whose arguments carry the marks `known`
    ({parameter: value op identity}), if one applies."""
    return next((r for r in rewrites if r.module == module and r.op == op
                 and known.get(r.argument) == r.value_id), None)


def determined_by_result(op: t.Op) -> bool:
    """Does the op take no parameters, and does its result type name each of its generics
    as a dimension (so that the type of its value fixes the value)?"""
    if op.params or not isinstance(op.result, t.TensorType):
        return False
    named = {d.id for d in op.result.dims if isinstance(d, t.Name)}
    return all(g.name in named for g in op.generics)


def signature_problem(rewrite: CallRewrite, params: list, result, new_params: list,
                      new_result) -> str:
    """Why the new op cannot stand for the op ("" when it can): `params` are the op's
    parameter types with the argument left out, `new_params` the new op's, each pair
    with its result type, at one binding."""
    if list(params) != list(new_params) or result != new_result:
        return (f"call rewrite {rewrite.name}: `{rewrite.to}` does not take the parameters "
                f"of `{rewrite.op}` without `{rewrite.argument}`, or returns another type")
    return ""


class Marks:
    """The body translator's part in call rewrites: which variables hold the value of a
    value op, and the calls that a rewrite turns into calls of another op.

    `known` is this instance's marked parameters ({parameter: value op identity}), part
    of its key; `marked` the mark of each marked variable of the body, by name;
    `rewrites_fired` the rewrites applied to its calls (the `BodyTranslator` holds all
    three); `elab` is the `Elaborator`, which holds the rewrites and the ops' modules.
    """

    known: dict[str, str]
    marked: dict[str, str]
    rewrites_fired: list[CallRewrite]

    def marks(self) -> dict[str, str]:
        """The mark of each marked variable of this body, by name."""
        return self.marked

    def mark_of(self, atom) -> str | None:
        return self.marks().get(atom.name) if isinstance(atom, ir.Var) else None

    def mark_call(self, item, var: ir.Var) -> None:
        """Mark what a call of a value op defines (a call without arguments)."""
        identity = self.elab.value_identity(item)
        if identity is not None:
            self.marks()[var.name] = identity

    def param_vars(self, name: str, ty) -> list[ir.Var]:
        """A marked parameter's variable (its value, for an optional) carries the mark."""
        parts = super().param_vars(name, ty)
        if name in self.known and parts:
            self.marks()[parts[-1].name] = self.known[name]
        return parts

    def define(self, name: str, atom: ir.Atom) -> None:
        """`let m = causal_mask<Q, K>()`: the user's name keeps the mark."""
        mark = self.mark_of(atom)
        super().define(name, atom)
        if mark is not None:
            self.marks()[self.env.lookup(name).name] = mark

    def rewritten_call(self, e: t.Call, item, binding: Binding, callee, parts: list,
                       presence: tuple, known: tuple) -> tuple[str, list] | None:
        """The Func name and arguments of the call that a rewrite makes of this one (None
        when no rewrite applies). `parts` holds each parameter's name and the atoms that
        pass it; `callee` is the op's checked instance."""
        found = self.elab.rewrite_for(item, dict(known))
        if found is None:
            return None
        rewrite, target = found
        names = {g.name for g in target.generics}
        unbound = sorted(n for n in names if not binding.bound(n))
        if unbound:
            raise ElaborationError(f"call rewrite {rewrite.name}: `{rewrite.to}` has generics "
                                   f"`{rewrite.op}` has not: {', '.join(unbound)}", e.span)
        narrowed = Binding({k: v for k, v in binding.dims.items() if k in names},
                           {k: v for k, v in binding.dtypes.items() if k in names},
                           {k: v for k, v in binding.packs.items() if k in names})
        new = self.elab.instance(target, narrowed)
        kept = [ty for p, ty in zip(item.params, callee.signature.params)
                if p.name != rewrite.argument]
        problem = signature_problem(rewrite, kept, callee.signature.result,
                                    new.signature.params, new.signature.result)
        if problem:
            raise ElaborationError(problem, e.span)
        runs = self.elab.module_op(self.elab.module_of(item), rewrite.kernel_of) \
            if rewrite.kernel_of else target
        if runs is None or not self.elab.kernel_applies(runs, narrowed):
            return None  # the new op would run its body: the body as written runs instead
        args = [a for name, atoms in parts if name != rewrite.argument for a in atoms]
        name = self.elab.request(target, narrowed, _without(presence, rewrite.argument),
                                 _without(known, rewrite.argument))
        self.fired().append(rewrite)
        return name, args

    def fired(self) -> list[CallRewrite]:
        """The rewrites applied to this body's calls, in order (its dump label names them)."""
        return self.rewrites_fired

    def marks_label(self) -> str:
        """What the instance's dump label adds: its marked parameters, the rewrites fired."""
        given = "".join(f" with {p} = {v.split('::')[-1]}<...>()" for p, v in self.known.items())
        fired = "".join(f"; call rewrite {r.name}: {r.op} -> {r.to}" for r in self.fired())
        return given + fired


def _without(pairs: tuple, name: str) -> tuple:
    return tuple(p for p in pairs if p[0] != name)
