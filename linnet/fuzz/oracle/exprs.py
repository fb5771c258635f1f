"""Evaluating expressions of one body: names, literals, operators, `if`, tuples, indexing.

`Body` evaluates the statements and expressions of one instance (an item with its generics
bound), reading the checker's type of each node where the language makes a value's dtype
depend on context (a literal meeting a tensor, a `let` with an annotation). Index notation,
the prelude, calls and statements are mixins in their own modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...check.types import LitT, TensorT, TupleT
from ...syntax import tree as t
from .arith import binary, fold, negate
from .dtypes import Lit, Precision, ShapeV, to_dtype
from .errors import OracleError, OracleUndefined
from .values import conform_value


class NeedScalar(Exception):
    """A `fn` run element by element over arrays met something that needs one scalar (an
    `if` condition, a runtime index, index notation): run it once per element instead."""


@dataclass
class Ix:
    """Index notation in progress: each index variable's axes in the index space, and how
    many axes the space has at this depth of nested reductions."""
    axes: dict[str, tuple[int, ...]]
    depth: int


class ExprEval:
    machine: Any
    inst: Any
    prec: Precision
    elementwise: bool
    ix: Ix | None

    def __init__(self, machine, inst, elementwise: bool = False) -> None:
        self.machine = machine
        self.inst = inst
        self.prec = machine.prec
        self.elementwise = elementwise
        self.ix = None
        self.scopes: list[dict[str, list]] = [{}]  # name -> [value, declared type or None]
        module = getattr(inst, "module", None) or machine.analysis.module_of(inst.item)
        self.globals = module.globals

    # ------------------------------------------------------------ types
    def ty(self, node):
        """The checker's type of a node in this instance (a Type), or None."""
        v = self.inst.types.get(id(node))
        return None if v is None else v.type

    def conform(self, value, ty):
        """value held as the checker's type ty: a literal takes the dtype, tuples item by
        item; anything else unchanged."""
        if isinstance(ty, TensorT) and not isinstance(value, (tuple, ShapeV)):
            return to_dtype(value, ty.dtype, self.prec)
        if isinstance(ty, TupleT) and isinstance(value, tuple):
            return tuple(self.conform(v, t_) for v, t_ in zip(value, ty.items))
        held = conform_value(self, value, ty)
        return value if held is None else held

    def settle(self, value, node):
        return self.conform(value, self.ty(node))

    def dtype_of(self, node) -> str:
        ty = self.ty(node)
        if not isinstance(ty, TensorT):
            raise OracleError(f"no dtype known for {type(node).__name__}")
        return ty.dtype

    # ------------------------------------------------------------ scopes
    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name][0]
        return self.global_value(name)

    def bind(self, name: str, value, ty=None) -> None:
        self.scopes[-1][name] = [value, ty]

    def assign(self, name: str, value) -> None:
        for scope in reversed(self.scopes):
            if name in scope:
                scope[name][0] = self.conform(value, scope[name][1])
                return
        raise OracleError(f"assignment to undeclared `{name}`")

    def global_value(self, name: str):
        binding = self.inst.binding
        if name in binding.dims:
            return Lit(_as_int(binding.dims[name]), "int")
        if name in binding.packs:
            return ShapeV(_as_int(d) for d in binding.packs[name])
        if name in binding.dtypes:
            return binding.dtypes[name]
        item = self.globals.items.get(name)
        if isinstance(item, t.Const):
            return self.const_value(item)
        raise OracleError(f"name `{name}` not found")

    def const_value(self, item: t.Const):
        """A `const`: its expression evaluated in its own module, held as its type."""
        saved = self.globals, self.scopes, self.ix
        self.globals = self.machine.analysis.module_of(item).globals
        self.scopes, self.ix = [{}], None
        try:
            value = self.expr(item.value)
            checked = self.globals.consts.get(item.name)
        finally:
            self.globals, self.scopes, self.ix = saved
        return value if checked is None else self.conform(value, checked.type)

    # ------------------------------------------------------------ dispatch
    def expr(self, e):
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            raise OracleError(f"expression {type(e).__name__}")
        return self.settle(method(e), e)

    def expr_Name(self, e: t.Name):
        return self.lookup(e.id)

    def expr_IntLit(self, e: t.IntLit):
        return Lit(int(e.value), "int")

    def expr_FloatLit(self, e: t.FloatLit):
        return Lit(float(e.value), "float")

    def expr_BoolLit(self, e: t.BoolLit):
        return np.array(bool(e.value))

    def expr_Unary(self, e: t.Unary):
        v = self.expr(e.operand)
        if e.op == "+":
            return v
        if e.op == "!":
            return np.asarray(np.logical_not(v))
        if isinstance(v, Lit):
            return Lit(-v.value, v.kind)
        return negate(v, self.dtype_of(e), self.prec)

    def expr_Binary(self, e: t.Binary):
        a, b = self.expr(e.left), self.expr(e.right)
        if isinstance(a, Lit) and isinstance(b, Lit):
            return fold(e.op, a, b)
        dtype = self.operand_dtype(e.left, e.right, e)
        return binary(e.op, to_dtype(a, dtype, self.prec), to_dtype(b, dtype, self.prec),
                      dtype, self.prec)

    def operand_dtype(self, *nodes) -> str:
        """The one dtype operands meet at: a typed operand's (a literal takes it)."""
        for node in nodes:
            ty = self.ty(node)
            if isinstance(ty, TensorT):
                return ty.dtype
        for node in nodes:
            ty = self.ty(node)
            if isinstance(ty, LitT):
                return "i64" if ty.kind == "int" else "f64"
        raise OracleError("operands without a known dtype")

    def expr_If(self, e: t.If):
        cond = self.expr(e.cond)
        if self.ix is not None and not isinstance(cond, Lit) and np.asarray(cond).size > 1:
            # In index notation a condition may read the indices: each element takes its
            # branch, so both are computed and chosen between.
            dtype = self.dtype_of(e)
            a = to_dtype(self.block(e.then), dtype, self.prec)
            b = to_dtype(self.block(e.orelse), dtype, self.prec)
            return np.where(cond, a, b)
        return self.block(e.then if bool(self.scalar(cond, "an `if` condition")) else e.orelse)

    def block(self, b: t.Block):
        self.scopes.append({})
        try:
            self.stmts(b.stmts)  # type: ignore[attr-defined]
            return self.expr(b.value)
        finally:
            self.scopes.pop()

    def scalar(self, v, what: str):
        """v as one Python value; over arrays (a `fn` run element by element) NeedScalar."""
        if isinstance(v, Lit):
            return v.value
        arr = np.asarray(v)
        if arr.size != 1:
            if self.elementwise:
                raise NeedScalar(what)
            raise OracleError(f"{what} is not a scalar (shape {arr.shape})")
        return arr.reshape(()).item()

    def expr_TupleExpr(self, e: t.TupleExpr):
        return tuple(self.expr(x) for x in e.items)

    def expr_ListExpr(self, e: t.ListExpr):
        dims: list[int] = []
        for item in e.items:
            v = self.expr(item)
            if isinstance(v, ShapeV):
                dims.extend(v)
            else:
                dims.append(int(self.scalar(v, "a dimension")))
        return ShapeV(dims)

    def expr_ForExpr(self, e: t.ForExpr):
        raise OracleError("a valued `for` outside let, var, assignment or return")

    # ------------------------------------------------------------ indexing
    def expr_Index(self, e: t.Index):
        if self.ix is not None:
            return self.notation_access(e)  # type: ignore[attr-defined]
        base = np.asarray(self.expr(e.base))
        key: list = []
        for axis, item in enumerate(self.expand_ellipsis(e.items, base.ndim)):
            if isinstance(item, t.Slice):
                key.append(slice(self._bound(item.lo), self._bound(item.hi),
                                 self._bound(item.step)))
            elif isinstance(item, t.PackIx):
                raise OracleError("a pack index outside index notation")
            else:
                key.append(self._position(self.expr(item), base.shape[axis]))
        return base[tuple(key)]

    def _bound(self, e):
        return None if e is None else int(self.scalar(self.expr(e), "a slice bound"))

    def _position(self, v, extent: int) -> int:
        """An integer index: a compile-time one was proved in range; a runtime one out of
        range is undefined (docs/language.md, "Statements and expressions")."""
        k = int(self.scalar(v, "a runtime index"))
        if not 0 <= k < extent:
            raise OracleUndefined(f"index {k} out of range for an axis of {extent}")
        return k

    # --------------------------------------------------------- prelude, calls
    def expr_Call(self, e: t.Call):
        item = self.globals.items.get(e.callee)
        if isinstance(item, (t.Function, t.Op)):
            return self.user_call(e)  # type: ignore[attr-defined]
        if isinstance(item, t.Struct) and not self._is_local(e.callee):  # type: ignore
            return self.struct_call(e, item)  # type: ignore[attr-defined]
        return self.builtin(e)  # type: ignore[attr-defined]

    def expr_Reduce(self, e: t.Reduce):
        return self.reduction(e)  # type: ignore[attr-defined]


def _as_int(d) -> int:
    value = d.as_int()
    if value is None:
        raise OracleError(f"dimension {d} is not a number")
    return value


__all__ = ["ExprEval", "Ix", "NeedScalar"]
