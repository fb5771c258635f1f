"""Statements and control flow (docs/language.md, "Statements and expressions"): bindings,
`var` and assignment, counted `for` (vars assigned inside are carried), scans, `while`,
`static for`, `return`.

A body runs top to bottom; its final `return` gives its value (the checker allows no other).
"""

from __future__ import annotations

import numpy as np

from ...check.types import TensorT, TupleT
from ...syntax import tree as t
from .dtypes import to_dtype
from .errors import OracleError

MAX_WHILE_TRIPS = 1_000_000
"""A `while` running longer than this is reported (OracleError), not waited for."""


class _Returned(Exception):
    def __init__(self, value) -> None:
        self.value = value


class StmtEval:
    def run_body(self, body: tuple) -> object:
        try:
            self.stmts(body)
        except _Returned as r:
            return r.value
        raise OracleError("a body without `return`")

    def stmts(self, body: tuple) -> None:
        for s in body:
            method = getattr(self, "stmt_" + type(s).__name__, None)
            if method is None:
                raise OracleError(f"the statement {type(s).__name__}")
            method(s)

    def bound_value(self, e):
        return self.scan(e) if isinstance(e, t.ForExpr) else self.expr(e)

    def stmt_Let(self, s: t.Let) -> None:
        self.bind(s.name, self.conform(self.bound_value(s.value), self.ty(s)))

    def stmt_LetTuple(self, s: t.LetTuple) -> None:
        value = self.bound_value(s.value)
        if not isinstance(value, tuple) or len(value) != len(s.names):
            raise OracleError("destructuring a value that is not a tuple of that length")
        for name, v in zip(s.names, value):
            self.bind(name, v)

    def stmt_LetIndex(self, s: t.LetIndex) -> None:
        self.bind(s.name, self.let_index(s))

    def stmt_VarDecl(self, s: t.VarDecl) -> None:
        ty = self.ty(s)
        self.bind(s.name, self.conform(self.bound_value(s.value), ty), ty)

    def stmt_Assign(self, s: t.Assign) -> None:
        self.assign(s.name, self.bound_value(s.value))

    def stmt_Return(self, s: t.Return) -> None:
        raise _Returned(self.bound_value(s.value))

    def stmt_Yield(self, s: t.Yield) -> None:
        raise OracleError("`yield` outside a scan")

    def stmt_Effect(self, s: t.Effect) -> None:
        raise OracleError(f"`{s.kind}` (kernels are not evaluated)")

    def _range(self, lo, hi) -> range:
        a, b = (self.expr(x) for x in (lo, hi))
        return range(int(self.scalar(a, "a loop bound")), int(self.scalar(b, "a loop bound")))

    def stmt_For(self, s: t.For) -> None:
        for i in self._range(s.lo, s.hi):  # a `static for`'s counter is an i64 too
            self._trip(s.body, s.var, np.array(i, dtype=np.int64))

    def _trip(self, body: tuple, var: str | None, counter) -> None:
        self.scopes.append({})
        try:
            if var is not None:
                self.bind(var, counter)
            self.stmts(body)
        finally:
            self.scopes.pop()

    def stmt_While(self, s: t.While) -> None:
        trips = 0
        while bool(self.scalar(self.expr(s.cond), "a `while` condition")):
            trips += 1
            if trips > MAX_WHILE_TRIPS:
                raise OracleError(f"a `while` loop ran past {MAX_WHILE_TRIPS} trips")
            self._trip(s.body, None, None)

    def scan(self, e: t.ForExpr):
        """`for i in a..b { ...; yield v }`: each v stacked on a new leading axis (a tuple
        stacked item by item; no trips give empty stacks of the yielded shape)."""
        ty = self.ty(e)
        stacks = ty.items if isinstance(ty, TupleT) else (ty,)
        if not all(isinstance(x, TensorT) for x in stacks):
            raise OracleError("a scan of unknown type")
        trips = self._range(e.lo, e.hi)
        if trips.stop < trips.start:
            raise OracleError(f"a scan over {trips.start}..{trips.stop} (a negative length)")
        yielded: list[tuple] = []
        for i in trips:
            self.scopes.append({})
            try:
                self.bind(e.var, np.array(i, dtype=np.int64))
                self.stmts(e.body[:-1])
                v = self.expr(e.body[-1].value)
            finally:
                self.scopes.pop()
            yielded.append(v if isinstance(ty, TupleT) else (v,))
        out = []
        for k, stack in enumerate(stacks):
            if yielded:
                items = [to_dtype(y[k], stack.dtype, self.prec) for y in yielded]
                out.append(np.stack([np.asarray(x) for x in items]))
            else:
                shape = tuple(d.as_int() for d in stack.dims)
                out.append(np.zeros(shape, dtype=self.prec.np(stack.dtype)))
        return tuple(out) if isinstance(ty, TupleT) else out[0]
