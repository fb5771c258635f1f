"""`fn` helpers and plain `op`s, written for arguments in scope and called at once.

Why generic over the arguments' extents: a helper's parameters take a `Dim` generic for each
extent of the arguments (literal extents stay literal), so each call exercises generic
inference (or explicit generics, `f<N, 3>(x)`, when a generic no argument determines is
used as a loop bound), and a dtype generic (`T: Float`) stands for the arguments' dtype.
"""

from __future__ import annotations

from typing import Callable

from ...syntax import tree as t
from .exprs import E, Exprs
from .forms import untyped
from .grads import GradOps
from .scope import Gen, Scope, Var
from .signature import Signature, inside


class Calls:
    """Helper calls in one scope; `body_maker` writes a helper's statements (the body
    dispatcher, `body.py`, which also makes these calls: so it is passed in, not imported)."""

    def __init__(self, g: Gen, scope: Scope,
                 body_maker: Callable[[Scope, int], list[t.Stmt]]) -> None:
        self.g, self.scope, self.body_maker = g, scope, body_maker

    def arguments(self) -> list[Var]:
        cands = [v for v in self.scope.vars() if v.info.finite]
        if not cands:
            return []
        first = self.g.pick(cands)
        args = [first]
        if self.g.chance(0.5):
            args.append(self.g.pick(cands))
        return _unique(args)

    def fn_call(self) -> list[t.Stmt]:
        return self.helper("fn")

    def op_call(self) -> list[t.Stmt]:
        if self.g.config.grad and self.g.has("grad"):
            stmts = GradOps(self.g, self.scope).call()
            if stmts:
                return stmts
        return self.helper("op")

    def helper(self, kind: str) -> list[t.Stmt]:
        g = self.g
        args = self.arguments()
        if not args:
            return []
        sig = Signature(g)
        dtypes = {a.ty.dtype for a in args}
        float_generic = None
        for d in dtypes:  # the entry's dtype generic becomes the helper's own
            if d.text != d.name:
                sig.generic_dtype(d, "Float")
                float_generic = sig.dtypes[d]
        if float_generic is None and g.has("dtype_generic") and len(dtypes) == 1 \
                and g.chance(0.4):
            (d,) = dtypes
            if not d.is_bool:
                sig.generic_dtype(d, "Float" if d.is_float else g.pick(["Integer", "Numeric"]))
                float_generic = sig.dtypes[d] if d.is_float else None
        params = [Var(g.fresh("a"), sig.ty(a.ty), a.info) for a in args]
        scope = Scope()
        for p in params:
            scope.add(p)
        extra = None
        if g.has("explicit_generics") and g.chance(0.3):
            value = g.pick([0, 1, 2, 3])
            extra = sig.extra_dim(value, t.IntLit(value))
        explicit = extra is not None or (g.has("explicit_generics") and g.chance(0.2))
        dims = list(sig.dims.values()) + ([extra] if extra is not None else [])
        with inside(g, dims, float_generic):
            stmts = self.body_maker(scope, g.rng.randrange(1, 4))
            results = self.results(scope, sig)
            if float_generic is not None and not any(
                    r.ty.dtype == float_generic for r in results):
                results[0] = Exprs(g, scope).exact(float_generic, results[0].ty.dims)
        stmts.append(t.Return(results[0].node if len(results) == 1 else
                              t.TupleExpr(tuple(r.node for r in results))))
        rtys = [r.ty for r in results]
        rty = rtys[0].node() if len(rtys) == 1 else t.TupleType(tuple(r.node() for r in rtys))
        name = g.fresh("f" if kind == "fn" else "o")
        params_t = tuple(t.Param(p.name, p.ty.node()) for p in params)
        if kind == "fn":
            item = untyped(g, t.Function("fn", name, tuple(sig.generics), params_t, rty, (),
                                         tuple(stmts)))
        else:
            item = t.Op(name, tuple(sig.generics), params_t, rty, None, (), tuple(stmts))
        g.items.append(item)
        g.count(kind)
        if sig.generics:
            g.count("generic_call")
        generics = tuple(sig.explicit) if explicit and sig.generics else None
        if generics:
            g.count("explicit_generics")
        node = t.Call(name, generics, tuple(t.Arg(t.Name(a.name)) for a in args))
        names = [g.fresh("r") for _ in results]
        for n, r in zip(names, results):
            self.scope.add(Var(n, sig.caller_ty(r.ty), r.info))
        if len(names) == 1:
            return [t.Let(names[0], None, node)]
        g.count("tuple_return")
        return [t.LetTuple(tuple(names), node)]

    def results(self, scope: Scope, sig: Signature) -> list[E]:
        g = self.g
        cands = [v for v in scope.own if sig.expressible(v.ty)]
        count = 2 if g.has("tuple_return") and g.chance(0.3) and len(cands) >= 2 else 1
        picked = []
        for _ in range(count):
            v = g.pick(cands[-3:])
            picked.append(E(t.Name(v.name), v.ty, v.info))
        return picked


def _unique(xs: list[Var]) -> list[Var]:
    seen, out = set(), []
    for x in xs:
        if x.name not in seen:
            seen.add(x.name)
            out.append(x)
    return out
