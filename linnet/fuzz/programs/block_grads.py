"""The loss of a block entry that `--grad` differentiates with respect to the block's params.

Why terms of their own: the root block (models.py) holds some of the entry's parameters as
its params and reads them by bare name, so the gradient of the loss already flows to
them; but an optional param and an op's `grad` clause called from a block's `fn` would
never be differentiated. So each `Cell` of the tree gets an optional param `bias:
Tensor[K; D]? = none` and a `pub fn term() -> D` that gives an op with a `grad` clause
(grads.py) of `bias` when the checkpoint holds it, else 0; the root adds every instance's
term to its loss. Nothing reads the loss afterwards, so the facts the generator proved of
the program still hold. Which instances' `bias` is present is drawn per case.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

from ...syntax import tree as t
from .exprs import call, float_lit
from .grads import GradOps, Leaves, build, facts, mentions, render, tame
from .scope import Gen, Param, Scope, Var
from .types import DType, Info, Ty, fits, lit_dim

__all__ = ["Terms", "loss_terms", "with_terms", "BIAS_INFO"]

BIAS_INFO = Info(-2.0, 2.0, None, False)
"""Where a `bias` input is drawn: random reals."""


@dataclass
class Terms:
    """What the loss terms add: the cell with its `bias` and `term`, the statements that sum
    the terms into `total` before the root's `return`, the bias's input (drawn like a
    parameter's) and, for `first` and then each element of `cells`, whether its `bias` is
    present."""
    cell: t.BlockDef
    stmts: list[t.Stmt]
    total: str
    bias: Param
    present: list[bool]


def loss_terms(g: Gen, rng: random.Random, cell: t.BlockDef, loss: DType, count: int
               ) -> Terms | None:
    """The terms for a tree of `first` and `count` cells, in the loss's dtype (its concrete
    one; the caller casts to a dtype generic). None when the op's values would not fit."""
    gen = dataclasses.replace(g, rng=rng)  # the model layer's stream, the same module
    dtype = DType(loss.name, loss.name)
    size = rng.choice((1, 2, 3, 4))
    bias_ty = Ty((lit_dim(size),), dtype)
    op = _scalar_op(gen, bias_ty)
    if op is None:
        return None
    arms = (t.Arm(t.SomePat(("b",)), call(op, t.Name("b"))),
            t.Arm(t.NonePat(), call("cast", float_lit(0.0), generics=(t.Name(dtype.text),))))
    term = t.Function("fn", "term", (), (), dtype.node(), (),
                      (t.Return(t.Match(t.Name("bias"), arms)),), public=True)
    members = list(cell.members)
    members.insert(1, t.TensorMember("param", "bias", t.OptionalType(bias_ty.node()),
                                     t.NoneLit()))
    members.append(term)
    total = g.fresh("lt")
    stmts: list[t.Stmt] = [t.VarDecl(total, None, t.MemberCall(t.Name("first"), "term", None,
                                                               ()))]
    if count:
        each = g.fresh("cell")
        stmts.append(t.ForEach(each, t.Name("cells"), (t.Assign(total, t.Binary(
            "+", t.Name(total), t.MemberCall(t.Name(each), "term", None, ()))),)))
    present = [rng.random() < 0.5 for _ in range(1 + count)]
    g.count("block:grad_term", "optional:param")
    if any(present):
        g.count("optional:param_present")
    bias = Param(Var("bias", bias_ty, BIAS_INFO), "random")
    return Terms(dataclasses.replace(cell, members=tuple(members)), stmts, total, bias,
                 present)


def _scalar_op(g: Gen, ty: Ty) -> str | None:
    """`op oK(a: Tensor[K; D]) -> D { return sum[i] body(a[i]) } grad(y, dy) { ... }`: a
    random differentiable body of one tensor (grads.py), summed; its name."""
    a = g.fresh("a")
    leaves = Leaves([a], None, None, {a: BIAS_INFO})
    tree = build(g, leaves, 2)
    if not mentions(tree, a):
        tree = ("add", tree, ("leaf", a))
    tree = tame(tree, leaves.infos)
    body_info = facts(tree, leaves.infos)
    n = ty.dims[0].value
    info = Info(min(0, body_info.lo * n), max(0, body_info.hi * n), None, False)
    if not fits(info, ty.dtype):
        return None
    i = g.fresh("i")

    def at(name: str) -> t.Expr:
        return t.Index(t.Name(name), (t.Name(i),))
    body = t.Reduce("sum", None, (t.IxVar(i),), render(tree, at, ty.dtype.text))
    seed = g.fresh("dy")
    grads = GradOps(g, Scope()).gradients(tree, leaves, ty.dtype.text, seed)
    name = g.fresh("o")
    g.items.append(t.Op(name, (), (t.Param(a, ty.node()),), t.TypeName(ty.dtype.text), None,
                        (), (t.Return(body),), t.GradClause(g.fresh("y"), seed,
                                                            (t.Return(grads),))))
    g.count("op", "grad", "grad:scalar", "grad:block_fn")
    return name


def with_terms(body: tuple[t.Stmt, ...], terms: Terms, loss: DType) -> tuple[t.Stmt, ...]:
    """The entry's body with the terms added to its returned loss (cast to the loss's
    dtype generic, when it is one)."""
    *stmts, last = body
    assert isinstance(last, t.Return)
    extra: t.Expr = t.Name(terms.total)
    if loss.text != loss.name:
        extra = call("cast", extra, generics=(t.Name(loss.text),))
    return tuple(stmts) + tuple(terms.stmts) + (t.Return(t.Binary("+", last.value, extra)),)
