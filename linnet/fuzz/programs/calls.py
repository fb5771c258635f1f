"""`fn` helpers and plain `op`s, written for arguments in scope and called at once.

Why generic over the arguments' extents: a helper's parameters take a `Dim` generic for each
extent of the arguments (literal extents stay literal), so each call exercises generic
inference (or explicit generics, `f<N, 3>(x)`, when a generic no argument determines is
used as a loop bound), and a dtype generic (`T: Float`) stands for the arguments' dtype.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from ...syntax import tree as t
from .body import Body
from .exprs import E, Exprs
from .forms import untyped
from .scope import Gen, Scope, Var
from .types import DType, Dim, Ty


class Signature:
    """The generics of a helper, mapped from the caller's dims and dtype."""

    def __init__(self, g: Gen) -> None:
        self.g = g
        self.dims: dict[str, Dim] = {}     # caller key -> helper dim
        self.back: dict[str, Dim] = {}     # helper key -> caller dim
        self.dtypes: dict[DType, DType] = {}  # caller dtype -> helper dtype
        self.dtype_back: dict[DType, DType] = {}
        self.generics: list[t.Generic] = []
        self.explicit: list[t.Expr] = []  # the caller's value of each generic, in order

    def dim(self, d: Dim) -> Dim:
        if d.literal:
            return d
        if d.key not in self.dims:
            name = self.g.fresh("D")
            self.dims[d.key] = Dim(name, d.value, t.Name(name))
            self.back[name] = d
            self.generics.append(t.Generic(name, "Dim"))
            self.explicit.append(d.node)
        return self.dims[d.key]

    def extra_dim(self, value: int, node: t.Expr) -> Dim:
        name = self.g.fresh("K")
        dim = Dim(name, value, t.Name(name))
        self.generics.append(t.Generic(name, "Dim"))
        self.explicit.append(node)
        return dim

    def dtype(self, d: DType) -> DType:
        return self.dtypes.get(d, d)

    def generic_dtype(self, d: DType, kind: str) -> None:
        name = self.g.fresh("T")
        self.dtypes[d] = DType(name, d.name, kind)
        self.dtype_back[self.dtypes[d]] = d
        self.generics.append(t.Generic(name, kind))
        self.explicit.append(t.Name(d.text))

    def ty(self, ty: Ty) -> Ty:
        return Ty(tuple(self.dim(d) for d in ty.dims), self.dtype(ty.dtype))

    def caller_ty(self, ty: Ty) -> Ty:
        dims = tuple(d if d.literal else self.back[d.key] for d in ty.dims)
        return Ty(dims, self.dtype_back.get(ty.dtype, ty.dtype))

    def expressible(self, ty: Ty) -> bool:
        return all(d.literal or d.key in self.back for d in ty.dims)


@contextlib.contextmanager
def inside(g: Gen, dims: list[Dim], float_generic: DType | None) -> Iterator[None]:
    """While a helper's body is written, only its own dims and dtypes exist."""
    saved = g.dims, g.positive, g.float_generic
    g.dims, g.positive, g.float_generic = dims, set(), float_generic
    try:
        yield
    finally:
        g.dims, g.positive, g.float_generic = saved


class Calls:
    def __init__(self, g: Gen, scope: Scope) -> None:
        self.g, self.scope = g, scope

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
            from .grads import GradOps
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
            stmts = Body(g, scope).statements(g.rng.randrange(1, 4))
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
