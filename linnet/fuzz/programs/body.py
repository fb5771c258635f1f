"""Statements of a function body, chosen at random among every statement form.

Why one dispatcher: loops and branches contain bodies of their own, written by the same
code (`statements`), so every statement form nests in every other.
"""

from __future__ import annotations

from ...syntax import tree as t
from .calls import Calls
from .control import Control
from .exprs import Exprs
from .index import IndexNotation
from .kernels import Kernels
from .scope import Gen, Scope, Var, pick_type
from .shapes import Shapes


class Body:
    """Writes statements into a scope."""

    def __init__(self, g: Gen, scope: Scope) -> None:
        self.g, self.scope = g, scope

    def statements(self, count: int) -> list[t.Stmt]:
        out: list[t.Stmt] = []
        for _ in range(count):
            out += self.statement()
        return out

    def nested(self, scope: Scope, count: int) -> list[t.Stmt]:
        """Statements of a body inside this one (a loop's, a branch's, a helper's)."""
        return Body(self.g, scope).statements(count)

    def statement(self) -> list[t.Stmt]:
        g = self.g
        nested = self.scope.loop_depth > 0
        makers = [("let", self.let)] * 4
        if g.has("index"):
            makers += [("index", self.index)] * 3
        shape_features = {"slice", "int_index", "reshape", "broadcast_to", "permute",
                          "concat", "iota", "cumsum"}
        if shape_features & set(g.config.features):
            makers += [("shape", self.shape)] * 2
        control = Control(g, self.scope, self.nested)
        if self.scope.loop_depth < 2:
            for feature, maker in (("for", control.for_loop), ("scan", control.scan),
                                   ("while", control.while_loop),
                                   ("static_for", control.static_for)):
                if g.has(feature) and not (nested and g.chance(0.5)):
                    makers.append((feature, maker))
        if g.has("if"):
            makers.append(("if", control.if_expr))
        if not nested and self.scope.root().params is not None:
            calls = Calls(g, self.scope, self.nested)
            if g.has("fn"):
                makers.append(("fn", calls.fn_call))
            if g.has("op"):
                makers.append(("op", calls.op_call))
            if g.config.kernels:
                makers += [("kernel", Kernels(g, self.scope).call)] * 3
        _, maker = g.pick(makers)
        return maker()

    def bind(self, e, prefix: str = "v") -> list[t.Stmt]:
        g = self.g
        name = g.fresh(prefix)
        annotation = e.ty.node() if g.has("annotation") and g.chance(0.2) else None
        if annotation is not None:
            g.count("annotation")
        self.scope.add(Var(name, e.ty, e.info))
        return [t.Let(name, annotation, e.node)]

    def let(self) -> list[t.Stmt]:
        ty = pick_type(self.g, self.scope)
        e = Exprs(self.g, self.scope).exact(ty.dtype, ty.dims, depth=3)
        return self.bind(e)

    def index(self) -> list[t.Stmt]:
        g = self.g
        cands = [v for v in self.scope.vars() if v.ty.rank >= 1 and v.info.finite]
        if not cands:
            return self.let()
        built = IndexNotation(g, self.scope).build(g.pick(cands))
        if built is None:
            return self.let()
        stmt, var = built
        self.scope.add(var)
        return [stmt]

    def shape(self) -> list[t.Stmt]:
        e = Shapes(self.g, self.scope).make()
        return self.bind(e, "s") if e is not None else self.let()
