"""Control flow: counted `for` with carried `var`s, scans (tuples too), bounded `while`,
`static for`, and `if` expressions.

Why updates have fixed forms (`acc = acc + e`, `max(acc, e)`, `select(c, acc, e)`, `acc = e`
with `e` not reading `acc`): the facts of a carried value after any number of trips then
follow from one trip's, so the loop stays free of overflow for every trip count, and a
`while` whose trips depend on the data is as safe as a `for`.
"""

from __future__ import annotations

from ...syntax import tree as t
from .exprs import E, Exprs, call
from .scope import Gen, Scope, Var, pick_type
from .types import DType, Dim, Info, Ty, dt, fits, lit_dim, scale_sum, settle


def trips_dim(g: Gen) -> tuple[t.Expr, t.Expr, Dim]:
    """Loop bounds `lo..hi` and the trip count as a dimension."""
    gens = [d for d in g.dims if not d.literal]
    if gens and g.chance(0.5):
        d = g.pick(gens)
        return t.IntLit(0), d.node, d
    lo = g.pick([0, 0, 1, 2])
    n = g.pick([0, 1, 2, 3, 4])
    return t.IntLit(lo), t.IntLit(lo + n), lit_dim(n)


class Control:
    """Loop and branch statements over one scope; `body` writes nested statements."""

    def __init__(self, g: Gen, scope: Scope, body_maker) -> None:
        self.g, self.scope, self.body_maker = g, scope, body_maker

    def pick_type(self) -> Ty:
        return pick_type(self.g, self.scope)

    # ---------------------------------------------------------------- carried updates

    def update(self, scope: Scope, acc: Var, trips: int) -> tuple[t.Expr, Info]:
        """The new value of `acc` after one trip, and its facts after `trips` trips."""
        g = self.g
        ex = Exprs(g, scope)
        e = ex.expr(acc.ty.dtype, acc.ty.dims, depth=2)
        name = E(t.Name(acc.name), acc.ty, acc.info)
        if not acc.ty.dtype.is_bool and g.chance(0.6):
            total = settle(scale_sum(e.info, trips), acc.ty.dtype)
            after = Info(acc.info.lo + min(0, total.lo), acc.info.hi + max(0, total.hi),
                         total.frac if acc.info.frac is not None else None,
                         acc.info.same and total.same)
            after = settle(after, acc.ty.dtype)
            if fits(after, acc.ty.dtype) and (acc.ty.dtype.signed or e.info.lo >= 0):
                g.count("arith:+")
                return t.Binary("+", name.node, e.node), after
        joined = acc.info.join(e.info)
        if not acc.ty.dtype.is_bool and g.has("minmax") and g.chance(0.5):
            fn = g.pick(["max", "min"])
            g.count(f"minmax:{fn}")
            return call(fn, name.node, e.node), joined
        if g.has("select") and g.has_bool() and g.chance(0.5):
            c = ex.bool_expr(acc.ty.dims, 1)
            g.count("select")
            return call("select", c.node, name.node, e.node), joined
        return ex.widen(e, acc.ty.dims).node, joined

    def carried(self, stmts: list, prefix: str = "acc", floats: bool = True) -> Var:
        """`var acc = init` before a loop (`floats`: its dtype may be a float)."""
        ty = self.pick_type()
        if not floats and ty.dtype.is_float:
            ints = self.g.int_dtypes()
            ty = ty.with_dtype(self.g.pick(ints) if ints else dt("bool"))
        init = Exprs(self.g, self.scope).exact(ty.dtype, ty.dims, depth=1)
        name = self.g.fresh(prefix)
        annotation = init.ty.node() if self.g.has("annotation") and self.g.chance(0.3) else None
        stmts.append(t.VarDecl(name, annotation, init.node))
        return self.scope.add(Var(name, init.ty, init.info, mutable=True))

    def counter_var(self, scope: Scope, name: str, lo: int, hi_value: int) -> Var:
        return scope.add(Var(name, Ty((), dt("i64")), Info(lo, max(lo, hi_value - 1))))

    def counter_term(self, scope: Scope, counter: Var, dtype: DType) -> E | None:
        """`cast<T>(i)` of the loop counter, to add into an update."""
        if dtype.is_bool or not self.g.has("cast"):
            return None
        return Exprs(self.g, scope).cast(E(t.Name(counter.name), counter.ty, counter.info),
                                         dtype)

    def rows(self, scope: Scope, counter: Var, hi: Dim, stmts: list) -> None:
        """`let row = xs[i]`: the counter as a run-time index into an axis of `hi` trips."""
        g = self.g
        cands = [v for v in scope.vars() if v.ty.rank >= 1 and v.ty.dims[0].key == hi.key
                 and v.info.finite]
        if not cands or not g.has("runtime_index") or not g.chance(0.7):
            return
        v = g.pick(cands)
        rest = tuple(t.Slice(t.IntLit(0), d.node, t.IntLit(1)) for d in v.ty.dims[1:]
                     ) if g.chance(0.3) else ()
        name = g.fresh("row")
        stmts.append(t.Let(name, None, t.Index(t.Name(v.name), (t.Name(counter.name),) + rest)))
        scope.add(Var(name, Ty(v.ty.dims[1:], v.ty.dtype), v.info))
        g.count("runtime_index")

    # ---------------------------------------------------------------- statements

    def for_loop(self) -> list:
        g = self.g
        stmts: list = []
        acc = self.carried(stmts)
        lo, hi, trips = trips_dim(g)
        body_scope = self.scope.child(loop=True)
        body_scope.hidden.add(acc.name)
        counter = self.counter_var(body_scope, g.fresh("t"), lo.value, lo.value + trips.value)
        inner: list = []
        self.rows(body_scope, counter, trips if lo.value == 0 else lit_dim(-1), inner)
        inner += self.body_maker(body_scope, g.rng.randrange(0, 2))
        term = self.counter_term(body_scope, counter, acc.ty.dtype) if g.chance(0.4) else None
        if term is not None:
            body_scope.add(Var(g.fresh("c"), term.ty, term.info))
            inner.append(t.Let(body_scope.own[-1].name, None, term.node))
        value, info = self.update(body_scope, acc, trips.value)
        inner.append(t.Assign(acc.name, value))
        stmts.append(t.For(counter.name, lo, hi, tuple(inner)))
        self.scope.update(acc.name, acc.info.join(info))
        g.count("for")
        return stmts

    def while_loop(self) -> list:
        g = self.g
        stmts: list = []
        # `--grad` cannot reverse a while loop that carries floats (E2129)
        acc = self.carried(stmts, floats=not g.config.grad)
        steps = g.fresh("n")
        limit = g.rng.randrange(0, 5)
        stmts.append(t.VarDecl(steps, None, t.IntLit(0)))
        body_scope = self.scope.child(loop=True)
        body_scope.hidden.add(acc.name)
        # the condition is drawn before the body: it may read only what is in scope before
        # the loop, never a `let` of the body
        extra = Exprs(g, body_scope).bool_expr((), 1) if g.has_bool() and g.chance(0.4) \
            else None
        inner = self.body_maker(body_scope, g.rng.randrange(0, 2))
        value, info = self.update(body_scope, acc, limit)
        inner.append(t.Assign(acc.name, value))
        inner.append(t.Assign(steps, t.Binary("+", t.Name(steps), t.IntLit(1))))
        cond: t.Expr = t.Binary("<", t.Name(steps), t.IntLit(limit))
        if extra is not None and not extra.ty.dims:
            cond = t.Binary("&&", cond, extra.node)
        stmts.append(t.While(cond, tuple(inner)))
        self.scope.update(acc.name, acc.info.join(info))
        self.scope.add(Var(steps, Ty((), dt("i64")), Info(0, limit), mutable=True))
        g.count("while")
        return stmts

    def static_for(self) -> list:
        """`static for i in 0..D { acc = acc + x[i] }`: a compile-time index into x."""
        g = self.g
        cands = [v for v in self.scope.vars() if v.ty.rank >= 1 and v.info.finite
                 and not v.ty.dtype.is_bool]
        if not cands:
            return self.for_loop()
        v = g.pick(cands)
        d = v.ty.dims[0]
        stmts: list = []
        ty = Ty(v.ty.dims[1:], v.ty.dtype)
        name = g.fresh("acc")
        ex = Exprs(g, self.scope)
        zero = ex.widen(ex.leaf_fill(ty.dtype, ty.dims, 0), ty.dims)
        stmts.append(t.VarDecl(name, ty.node() if not ty.dims else None, zero.node))
        counter = g.fresh("s")
        total = settle(scale_sum(v.info, d.value), v.ty.dtype)
        if not fits(total, v.ty.dtype):
            return self.for_loop()
        row = t.Index(t.Name(v.name), (t.Name(counter),))
        inner = (t.Assign(name, t.Binary("+", t.Name(name), row)),)
        stmts.append(t.For(counter, t.IntLit(0), d.node, inner, static=True))
        self.scope.add(Var(name, ty, total.join(zero.info), mutable=True))
        g.count("static_for")
        return stmts

    def scan(self) -> list:
        """`let ys = for i in lo..hi { ...; yield v }`, or a tuple of stacks."""
        g = self.g
        stmts: list = []
        carry = self.carried(stmts, "run") if g.chance(0.4) else None
        lo, hi, trips = trips_dim(g)
        body_scope = self.scope.child(loop=True)
        if carry is not None:
            body_scope.hidden.add(carry.name)
        counter = self.counter_var(body_scope, g.fresh("t"), lo.value, lo.value + trips.value)
        inner: list = []
        self.rows(body_scope, counter, trips if lo.value == 0 else lit_dim(-1), inner)
        inner += self.body_maker(body_scope, g.rng.randrange(0, 2))
        yielded: list[E] = []
        if carry is not None:
            value, info = self.update(body_scope, carry, trips.value)
            inner.append(t.Assign(carry.name, value))
            self.scope.update(carry.name, carry.info.join(info))
            yielded.append(E(t.Name(carry.name), carry.ty, carry.info.join(info)))
        count = 1 + int(g.has("scan_tuple") and g.chance(0.4))
        while len(yielded) < count:
            ty = self.pick_type()
            e = Exprs(g, body_scope).exact(ty.dtype, ty.dims, depth=2)
            term = self.counter_term(body_scope, counter, ty.dtype) if g.chance(0.3) else None
            if term is not None:
                e = Exprs(g, body_scope).arith("+", e, term) or e
            yielded.append(e)
        value = yielded[0].node if len(yielded) == 1 else t.TupleExpr(
            tuple(y.node for y in yielded))
        inner.append(t.Yield(value))
        loop = t.ForExpr(counter.name, lo, hi, tuple(inner))
        names = [g.fresh("ys") for _ in yielded]
        for name, y in zip(names, yielded):
            self.scope.add(Var(name, Ty((trips,) + y.ty.dims, y.ty.dtype), y.info))
        if len(names) == 1:
            stmts.append(t.Let(names[0], None, loop))
        else:
            stmts.append(t.LetTuple(tuple(names), loop))
            g.count("scan_tuple")
        g.count("scan")
        return stmts

    def if_expr(self) -> list:
        g = self.g
        ex = Exprs(g, self.scope)
        cond = ex.bool_expr((), 2)
        if cond.ty.dims:
            return []
        ty = self.pick_type()
        branches = []
        stmts_of = []
        for _ in range(2):
            scope = self.scope.child()
            stmts = self.body_maker(scope, 1) if g.chance(0.3) else []
            branches.append(Exprs(g, scope).exact(ty.dtype, ty.dims, depth=2))
            stmts_of.append(tuple(stmts))
        node = t.If(cond.node, t.Block(stmts_of[0], branches[0].node),
                    t.Block(stmts_of[1], branches[1].node))
        name = g.fresh("b")
        self.scope.add(Var(name, ty, branches[0].info.join(branches[1].info)))
        g.count("if")
        return [t.Let(name, None, node)]
