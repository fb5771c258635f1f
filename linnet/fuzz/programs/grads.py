"""Ops with `grad` clauses: a random differentiable body and its derivative, written out.

Why a small symbolic differentiator: a `grad` clause is the op's backward pass wherever
autograd or `jax.grad` runs the op (docs/language.md, "Gradients"), so it has to be the true
derivative for gradients to mean anything. Bodies are trees over the op's floating tensor
parameters (and a floating scalar, and a bool mask for `select`) built from `+ - *`, unary
minus, `exp sin cos tanh` and `select`, whose derivatives are rules; the clause returns
`dy * d(body)/d(param)` for each floating tensor parameter, in order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...syntax import tree as t
from .signature import Signature, inside
from .exprs import E, Exprs, call, float_lit
from .scope import Gen, Scope, Var
from .types import Info, Ty, add_info, dt, fits, mul_info, neg_info

Tree = tuple  # ("leaf", name) | ("const", v) | (op, *children) | ("fn", f, u) | ("select", c, u, v)


@dataclass
class Leaves:
    """The op's parameters as tree leaves: floating tensors (differentiated), a scalar."""
    tensors: list[str]
    scalar: str | None
    mask: str | None
    infos: dict[str, Info]


def build(g: Gen, leaves: Leaves, depth: int) -> Tree:
    if depth <= 0 or g.chance(0.2):
        r = g.rng.random()
        if r < 0.15:
            return ("const", g.pick([0.5, 2.0, -1.5, 0.25]))
        if r < 0.3 and leaves.scalar is not None:
            return ("leaf", leaves.scalar)
        return ("leaf", g.pick(leaves.tensors))
    r = g.rng.random()
    if r < 0.45:
        return (g.pick(["add", "sub", "mul"]), build(g, leaves, depth - 1),
                build(g, leaves, depth - 1))
    if r < 0.55:
        return ("neg", build(g, leaves, depth - 1))
    if r < 0.85:
        return ("fn", g.pick(["exp", "sin", "cos", "tanh"]), build(g, leaves, depth - 1))
    if leaves.mask is not None:
        return ("select", leaves.mask, build(g, leaves, depth - 1), build(g, leaves, depth - 1))
    return ("mul", build(g, leaves, depth - 1), build(g, leaves, depth - 1))


def facts(tree: Tree, infos: dict[str, Info]) -> Info:
    kind = tree[0]
    if kind == "leaf":
        return infos[tree[1]]
    if kind == "const":
        return Info(tree[1], tree[1], None, False)
    if kind in ("add", "sub", "mul"):
        a, b = facts(tree[1], infos), facts(tree[2], infos)
        out = {"add": lambda: add_info(a, b), "sub": lambda: add_info(a, b, -1),
               "mul": lambda: mul_info(a, b)}[kind]()
        return Info(out.lo, out.hi, None, False)
    if kind == "neg":
        return neg_info(facts(tree[1], infos))
    if kind == "select":
        return facts(tree[2], infos).join(facts(tree[3], infos))
    a = facts(tree[2], infos)
    if tree[1] == "exp":
        return Info(math.exp(a.lo), math.exp(a.hi), None, False)
    if tree[1] == "tanh":
        return Info(math.tanh(a.lo), math.tanh(a.hi), None, False)
    return Info(-1, 1, None, False)


def tame(tree: Tree, infos: dict[str, Info]) -> Tree:
    """The tree with every `exp` of a wide argument replaced by `tanh`."""
    kind = tree[0]
    if kind in ("leaf", "const"):
        return tree
    if kind == "fn":
        u = tame(tree[2], infos)
        f = tree[1]
        if f == "exp" and facts(u, infos).hi > 3:
            f = "tanh"
        return ("fn", f, u)
    if kind == "select":
        return ("select", tree[1], tame(tree[2], infos), tame(tree[3], infos))
    return (kind,) + tuple(tame(c, infos) for c in tree[1:])


ZERO = ("const", 0.0)
ONE = ("const", 1.0)


def derive(tree: Tree, p: str) -> Tree:
    """d tree / d p, with the zeros folded away."""
    kind = tree[0]
    if kind == "leaf":
        return ONE if tree[1] == p else ZERO
    if kind == "const":
        return ZERO
    if kind in ("add", "sub"):
        a, b = derive(tree[1], p), derive(tree[2], p)
        if b == ZERO:
            return a
        if a == ZERO:
            return b if kind == "add" else ("neg", b)
        return (kind, a, b)
    if kind == "mul":
        da, db = derive(tree[1], p), derive(tree[2], p)
        left = ZERO if da == ZERO else _mul(da, tree[2])
        right = ZERO if db == ZERO else _mul(tree[1], db)
        return right if left == ZERO else left if right == ZERO else ("add", left, right)
    if kind == "neg":
        d = derive(tree[1], p)
        return ZERO if d == ZERO else ("neg", d)
    if kind == "select":
        du, dv = derive(tree[2], p), derive(tree[3], p)
        return ZERO if du == ZERO and dv == ZERO else ("select", tree[1], du, dv)
    u = tree[2]
    du = derive(u, p)
    if du == ZERO:
        return ZERO
    outer = {"exp": lambda: tree,
             "sin": lambda: ("fn", "cos", u),
             "cos": lambda: ("neg", ("fn", "sin", u)),
             "tanh": lambda: ("sub", ONE, ("mul", ("fn", "tanh", u), ("fn", "tanh", u)))}[
        tree[1]]()
    return _mul(outer, du)


def _mul(a: Tree, b: Tree) -> Tree:
    if a == ONE:
        return b
    if b == ONE:
        return a
    return ("mul", a, b)


def render(tree: Tree, leaf, dtype: str) -> t.Expr:
    """The tree as an expression; a part without parameters (`tanh(0.5)`, both branches of
    a `select` constant) is cast to the op's dtype, as literals alone would be f64."""
    kind = tree[0]
    if kind == "const":
        return float_lit(tree[1])
    if not _leafy(tree):
        return call("cast", _render(tree, leaf, dtype), generics=(t.Name(dtype),))
    return _render(tree, leaf, dtype)


def _render(tree: Tree, leaf, dtype: str) -> t.Expr:
    kind = tree[0]
    if kind == "leaf":
        return leaf(tree[1])
    if kind == "const":
        return float_lit(tree[1])
    if kind in ("add", "sub", "mul"):
        op = {"add": "+", "sub": "-", "mul": "*"}[kind]
        return t.Binary(op, render(tree[1], leaf, dtype), render(tree[2], leaf, dtype))
    if kind == "neg":
        return t.Unary("-", render(tree[1], leaf, dtype))
    if kind == "select":
        u, v = tree[2], tree[3]
        first = render(u, leaf, dtype)
        if not _leafy(u) and not _leafy(v):
            first = call("cast", first, generics=(t.Name(dtype),))
        return call("select", leaf(tree[1]), first, render(v, leaf, dtype))
    return call(tree[1], render(tree[2], leaf, dtype))


def _children(tree: Tree) -> tuple:
    if tree[0] in ("leaf", "const"):
        return ()
    return tree[2:] if tree[0] in ("fn", "select") else tree[1:]


def _leafy(tree: Tree) -> bool:
    """Whether the tree reads a parameter (a value with a dtype) other than the mask."""
    return tree[0] == "leaf" or any(_leafy(c) for c in _children(tree))


def typed(tree: Tree, leaves: Leaves) -> bool:
    """Whether the tree holds a tensor leaf, so its value has the parameters' shape."""
    if tree[0] == "leaf":
        return tree[1] in leaves.tensors
    return any(typed(c, leaves) for c in _children(tree))


class GradOps:
    """`op o(a, b, ...) -> T { body } grad(y, dy) { ... }`, and its call."""

    def __init__(self, g: Gen, scope: Scope) -> None:
        self.g, self.scope = g, scope

    def arguments(self) -> list[Var] | None:
        g = self.g
        cands = [v for v in self.scope.vars() if v.ty.dtype.is_float and v.ty.rank >= 1
                 and v.info.finite and v.info.mag <= 8]
        if not cands:
            return None
        first = g.pick(cands)
        same = [v for v in cands if v.ty.keys() == first.ty.keys()
                and v.ty.dtype == first.ty.dtype and v is not first]
        args = [first]
        if g.chance(0.6):
            args.append(g.pick(same) if same and g.chance(0.7) else
                        Exprs(g, self.scope).new_param(first.ty.dtype, first.ty.dims) and
                        self.scope.root().own[-1])
        return args

    def call(self) -> list[t.Stmt]:
        g = self.g
        args = self.arguments()
        if args is None:
            return []
        sig = Signature(g)
        dtype = args[0].ty.dtype
        if dtype.text != dtype.name or (g.has("dtype_generic") and g.chance(0.3)):
            sig.generic_dtype(dtype, "Float")
        params = [Var(g.fresh("a"), sig.ty(a.ty), a.info) for a in args]
        call_args: list[t.Expr] = [t.Name(a.name) for a in args]
        scalar = mask = None
        infos = {p.name: p.info for p in params}
        extra_params = []
        if g.chance(0.3):
            scalar = g.fresh("s")
            extra_params.append(Var(scalar, Ty((), sig.dtype(dtype)), Info(0.5, 0.5)))
            infos[scalar] = Info(0.5, 0.5)
            call_args.append(float_lit(0.5))
        if g.has("select") and g.has_bool() and g.chance(0.4):
            mask = g.fresh("m")
            mty = Ty(params[0].ty.dims, dt("bool"))
            extra_params.append(Var(mask, mty, Info(0, 1)))
            cond = Exprs(g, self.scope).bool_expr(args[0].ty.dims, 1)
            call_args.append(Exprs(g, self.scope).widen(cond, args[0].ty.dims).node)
        leaves = Leaves([p.name for p in params], scalar, mask, infos)
        tree = build(g, leaves, 3)
        for p in leaves.tensors:  # every floating tensor parameter takes part
            if not mentions(tree, p):
                tree = ("add", tree, ("leaf", p))
        tree = tame(tree, infos)
        info = facts(tree, infos)
        pty = params[0].ty
        scalar_result = g.chance(0.4)
        if scalar_result:
            ixs = [g.fresh("i") for _ in pty.dims]
            def at(name):
                if name in leaves.tensors or name == mask:
                    return t.Index(t.Name(name), tuple(t.Name(i) for i in ixs))
                return t.Name(name)
            body = (t.Return(t.Reduce("sum", None, tuple(t.IxVar(i) for i in ixs),
                                      render(tree, at, pty.dtype.text))),)
            n = math.prod(d.value for d in pty.dims)
            info = Info(min(0, info.lo * n), max(0, info.hi * n), None, False)
            rty = Ty((), pty.dtype)
        else:
            node = render(tree, t.Name, pty.dtype.text)
            if not typed(tree, leaves):
                node = t.Binary("+", node, t.Binary("*", float_lit(0.0),
                                                    t.Name(leaves.tensors[0])))
            body = (t.Return(node),)
            rty = pty
        if not fits(info, dtype):
            return []
        seed = g.fresh("dy")
        clause = t.GradClause(g.fresh("y"), seed,
                              (t.Return(self.gradients(tree, leaves, pty.dtype.text, seed)),))
        name = g.fresh("o")
        all_params = tuple(t.Param(p.name, p.ty.node()) for p in params + extra_params)
        g.items.append(t.Op(name, tuple(sig.generics), all_params, rty.node(), None, (), body,
                            clause))
        g.count("op", "grad", "generic_call")
        if scalar_result:
            g.count("grad:scalar")
        out = g.fresh("r")
        self.scope.add(Var(out, sig.caller_ty(rty), info))
        return [t.Let(out, None, t.Call(name, None, tuple(t.Arg(a) for a in call_args)))]

    def gradients(self, tree: Tree, leaves: Leaves, dtype: str, dy: str) -> t.Expr:
        """`dy * d(body)/d(p)` for each floating tensor parameter (a tuple when several);
        a derivative without a tensor leaf is widened by `+ 0.0 * p` to p's shape."""
        out = []
        for p in leaves.tensors:
            d = derive(tree, p)
            node = t.Binary("*", t.Name(dy), render(d, t.Name, dtype))
            if not typed(d, leaves):
                node = t.Binary("+", node, t.Binary("*", float_lit(0.0), t.Name(p)))
            out.append(node)
        return out[0] if len(out) == 1 else t.TupleExpr(tuple(out))


def mentions(tree: Tree, name: str) -> bool:
    """Does some leaf of the tree read the input `name`?"""
    if tree[0] == "leaf":
        return tree[1] == name
    return any(mentions(c, name) for c in _children(tree))
