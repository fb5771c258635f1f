"""Building tensor IR by hand in tests: types, literals, and a block builder."""

from __future__ import annotations

import itertools

from linnet.ir import tensor as ir

_names = itertools.count()


def T(dtype: str, *shape: int) -> ir.TType:
    return ir.TType(tuple(shape), dtype)


def L(value, dtype: str) -> ir.Lit:
    return ir.Lit(value, T(dtype))


class Blk:
    """A block under construction: `b.p("add", x, y, ty=...)` binds a fresh variable."""

    def __init__(self) -> None:
        self.binds: list[ir.Bind] = []

    def let(self, expr: ir.Expr, name: str | None = None) -> ir.Var:
        v = ir.Var(name or f"t{next(_names)}", expr.type)
        self.binds.append(ir.Bind(v, expr))
        return v

    def p(self, op: str, *args: ir.Atom, ty: ir.Ty, **attrs) -> ir.Var:
        return self.let(ir.Prim(op, args, ty, tuple(attrs.items())))

    def tup(self, *items: ir.Atom) -> ir.Var:
        return self.let(ir.MakeTuple(items, ir.TupleTy(tuple(a.type for a in items))))

    def eff(self, op: str, *args: ir.Atom) -> ir.Var:
        """An effect (store, atomic): its value is a dummy bool."""
        return self.p(op, *args, ty=T("bool"))

    def done(self, result: ir.Atom) -> ir.Block:
        return ir.Block(tuple(self.binds), result)
