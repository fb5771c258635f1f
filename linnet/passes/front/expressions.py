"""Expressions for `elaborate`: operators, `if`, tuples, indexing and calls.

The mixin `Expressions` of the body translator (`elaborator.BodyTranslator`): each
surface expression as an atom, its bindings emitted; a scalar known at
compile time as a literal of the dtype its context wants; `x[...]` outside
index notation as `index` and `dyn_index` prims; a call of an op or fn as an
`ir.Call` of its instance (queued with the elaborator), and a prelude call
as the prim of the same name.
"""

from __future__ import annotations

from ...check.types import LitT, TensorT
from ...ir import tensor as ir
from ...syntax import tree as t
from .vocabulary import (BINARY, COMPARE, ElaborationError, I64, MATH, default_dtype,
                         tensor_dtype, typed_literal)
from .surface_walks import assigned_outer


class Expressions:
    """Translates expressions, indexing and calls into atoms of the current block."""

    # ------------------------------------------------------- expressions

    def expr(self, e: t.Expr, want: str | None = None) -> ir.Atom:
        """e as an atom, its bindings emitted; `want` is the dtype a contextual literal
        takes here (None: its default, i64 or f64)."""
        lit = self.literal(e, want)
        if lit is not None:
            return lit
        return getattr(self, "expr_" + type(e).__name__)(e, want)

    def literal(self, e: t.Expr, want: str | None) -> ir.Lit | None:
        """A scalar known at compile time, as a literal of the dtype it has here."""
        v = self.val(e)
        leaf = isinstance(e, (t.IntLit, t.FloatLit, t.BoolLit, t.Name))
        scalar = isinstance(v.type, LitT) or (isinstance(v.type, TensorT) and not v.type.dims)
        if not scalar or not (leaf or isinstance(v.type, LitT) or v.type.dtype == "bool"):
            return None
        value = self.fold(e)
        if value is None:
            return None
        dtype = v.type.dtype if isinstance(v.type, TensorT) else (want or default_dtype(v.type))
        return typed_literal(value, dtype)

    def expr_IntLit(self, e: t.IntLit, want: str | None) -> ir.Atom:
        return typed_literal(e.value, want or "i64")

    def expr_FloatLit(self, e: t.FloatLit, want: str | None) -> ir.Atom:
        return typed_literal(e.value, want or "f64")

    def expr_BoolLit(self, e: t.BoolLit, want: str | None) -> ir.Atom:
        return typed_literal(e.value, "bool")

    def expr_Name(self, e: t.Name, want: str | None) -> ir.Atom:
        """A variable; one the checker sees as a literal but that had to be computed (a
        `let` of an `if` between literals) is cast to the dtype its context wants."""
        value = self.env.lookup(e.id)
        if isinstance(value, (ir.Var, ir.Lit)):
            if want and isinstance(self.val(e).type, LitT) and value.type.dtype != want:
                return self.b.emit(ir.Prim("cast", (value,), ir.TType((), want)), "cast")
            return value
        raise ElaborationError(f"not implemented yet: `{e.id}` as a value here", e.span)

    def expr_Unary(self, e: t.Unary, want: str | None) -> ir.Atom:
        ty = self.type_of(e, want)
        x = self.expr(e.operand, ty.dtype if e.op != "!" else None)
        if e.op == "+":
            return x
        return self.b.emit(ir.Prim("neg" if e.op == "-" else "not", (x,), ty), "neg"
                           if e.op == "-" else "not")

    def expr_Binary(self, e: t.Binary, want: str | None) -> ir.Atom:
        """One prim; operands of different ranks broadcast right-aligned, as in numpy."""
        ty = self.type_of(e, want)
        side = self.operand_dtype(e, ty)
        left, right = self.expr(e.left, side), self.expr(e.right, side)
        op = BINARY[e.op]
        return self.b.emit(ir.Prim(op, (left, right), ty), op)

    def operand_dtype(self, e: t.Binary, result: ir.TType) -> str:
        """The dtype a literal operand takes: the other operand's, or the result's."""
        for side in (e.left, e.right):
            v = self.val(side)
            if isinstance(v.type, TensorT):
                return v.type.dtype
        if e.op in COMPARE:
            kinds = {self.val(e.left).type.kind, self.val(e.right).type.kind}
            return "f64" if "float" in kinds else "i64"
        return result.dtype

    def expr_If(self, e: t.If, want: str | None) -> ir.Atom:
        """`ir.If` whose branches also hand back the outer vars they assign (then read
        through GetItems); with a compile-time condition, just the branch taken."""
        known = self.fold(e.cond)
        if isinstance(known, bool):
            return self.inline_block(e.then if known else e.orelse, self._if_want(e, want))
        cond = self.expr(e.cond)
        ty = self.type_of(e, want)
        names = [n for n in assigned_outer((e.then, e.orelse), self.assigned)
                 if isinstance(self.env.lookup(n), (ir.Var, ir.Lit))]
        before = [self.env.lookup(n) for n in names]
        then = self.branch(e.then, self._if_want(e, want), names)
        for n, a in zip(names, before):
            self.env.assign(n, a)
        orelse = self.branch(e.orelse, self._if_want(e, want), names)
        if not names:
            return self.b.emit(ir.If(cond, then, orelse, ty), "if")
        tup_ty = ir.TupleTy((ty,) + tuple(a.type for a in before))
        var = self.b.emit(ir.If(cond, then, orelse, tup_ty), "if")
        for k, n in enumerate(names):
            self.env.assign(n, self.b.bind(ir.GetItem(var, k + 1, tup_ty.items[k + 1]), n))
        return self.b.emit(ir.GetItem(var, 0, ty), "if")

    def _if_want(self, e: t.If, want: str | None) -> str | None:
        ty = self.type_of(e, want)
        return ty.dtype if isinstance(ty, ir.TType) else None

    def branch(self, b: t.Block, want: str | None, names: list[str]) -> ir.Block:
        """One branch of an `if`: its value, then the values of the outer vars it assigns."""
        self.b.open()
        self.env.push()
        self.stmts(b.stmts)
        value = self.expr(b.value, want)
        if names:
            items = (value,) + tuple(self.env.lookup(n) for n in names)
            value = self.b.emit(ir.MakeTuple(items, ir.TupleTy(tuple(a.type for a in items))),
                                "branch")
        self.env.pop()
        return self.b.close(value)

    def inline_block(self, b: t.Block, want: str | None) -> ir.Atom:
        """The branch an `if` with a compile-time condition takes, in the current block."""
        self.env.push()
        self.stmts(b.stmts)
        value = self.expr(b.value, want)
        self.env.pop()
        return value

    def expr_TupleExpr(self, e: t.TupleExpr, want: str | None) -> ir.Atom:
        """A tuple; its literal items take their default dtypes, as the checker's do."""
        ty = self.type_of(e)
        items = tuple(self.expr(x, it.dtype if isinstance(it, ir.TType) else None)
                      for x, it in zip(e.items, ty.items))
        return self.b.emit(ir.MakeTuple(items, ty), "tuple")

    def expr_ListExpr(self, e: t.ListExpr, want: str | None) -> ir.Atom:
        raise ElaborationError("a shape literal is not a value", e.span)

    def expr_ForExpr(self, e: t.ForExpr, want: str | None) -> ir.Atom:
        """A scan as the value of `let`, `var`, an assignment or `return` (the checker
        allows it nowhere else): its stack, or the tuple of its stacks."""
        stacks = self.scan_stacks(e)
        if not isinstance(self.type_of(e), ir.TupleTy):
            return stacks[0]
        ty = ir.TupleTy(tuple(a.type for a in stacks))
        return self.b.emit(ir.MakeTuple(tuple(stacks), ty), "stacks")

    def expr_Reduce(self, e: t.Reduce, want: str | None) -> ir.Atom:
        """A reduction outside `let y[...] =`: a comprehension with no outputs."""
        saved = self.enter_notation()
        try:
            body = self.ix_Reduce(e, want)
        finally:
            self.leave_notation(saved)
        return self.b.emit(ir.Comprehension((), body, ir.TType((), body.dtype)), e.op)

    # ----------------------------------------------------------- indexing

    def expr_Index(self, e: t.Index, want: str | None) -> ir.Atom:
        """`x[...]` outside index notation: `index` for compile-time positions and slices,
        `dyn_index` (on axes moved to the front) for runtime scalar positions."""
        x = self.expr(e.base)
        shape = x.type.shape
        static, runtime = [], []
        for axis, item in enumerate(e.items):
            entry = self.index_item(item, shape[axis])
            (runtime if isinstance(entry, (ir.Var, ir.Lit)) else static).append((axis, entry))
        if runtime:
            x = self.dynamic_index(x, runtime)
            static = [(k, entry) for k, (_, entry) in enumerate(static)]
        items = tuple(entry for _, entry in static)
        if all(entry[0] == "slice" and entry[1:] == (0, x.type.shape[k], 1)
               for k, entry in static):
            return x
        return self.b.emit(ir.Prim("index", (x,), self.type_of(e), (("items", items),)),
                           "index")

    def index_item(self, item, extent: int):
        """("at", k), ("slice", lo, hi, step), or an i64 atom for a runtime position. A
        slice's bounds are clamped to the axis here, as the language clamps them
        (`0 <= lo <= hi <= extent`), so that no printer or pass need clamp again."""
        if isinstance(item, t.Slice):
            lo = self.const_int(item.lo) if item.lo is not None else 0
            hi = self.const_int(item.hi) if item.hi is not None else extent
            step = self.const_int(item.step) if item.step is not None else 1
            lo = min(lo, extent)
            return ("slice", lo, min(max(hi, lo), extent), step)
        value = self.fold(item)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < extent:
            return ("at", value)  # out of range, it is a run-time position the checker let
            # through (a `static for` counter's `xs[i + 1]`): read as one, undefined
        k = self.expr(item, "i64")
        if k.type.dtype != "i64":
            k = self.b.emit(ir.Prim("cast", (k,), I64), "cast")
        return k

    def dynamic_index(self, x: ir.Atom, runtime: list) -> ir.Atom:
        """x read at runtime positions: those axes permuted to the front, then dropped."""
        axes = [a for a, _ in runtime]
        rest = [a for a in range(x.type.rank) if a not in axes]
        perm = tuple(axes + rest)
        if perm != tuple(range(x.type.rank)):
            shape = tuple(x.type.shape[a] for a in perm)
            x = self.b.emit(ir.Prim("permute", (x,), ir.TType(shape, x.type.dtype),
                                    (("perm", perm),)), "permute")
        shape = x.type.shape[len(axes):]
        args = (x,) + tuple(k for _, k in runtime)
        return self.b.emit(ir.Prim("dyn_index", args, ir.TType(shape, x.type.dtype)), "row")

    # -------------------------------------------------------------- calls

    def expr_Call(self, e: t.Call, want: str | None) -> ir.Atom:
        """A prelude call is a prim; an op or fn call an `ir.Call` of its instance (queued
        for translation), literal arguments typed by the callee's parameters."""
        item = self.globals.items.get(e.callee)
        if item is None:
            method = getattr(self, "prelude_" + ("math" if e.callee in MATH else e.callee), None)
            if method is None:
                raise ElaborationError(f"`{e.callee}` is only available inside a kernel",
                                       e.span, "E2127")
            return method(e, self.type_of(e, want))
        if not isinstance(item, (t.Function, t.Op)):
            raise ElaborationError(f"`{e.callee}` cannot be called", e.span, "E2106")
        binding = self.concrete(self.inst.call_bindings[id(e)])
        callee = self.elab.instance(item, binding)
        args = tuple(self.expr(a.value, tensor_dtype(p))
                     for a, p in zip(e.args, callee.signature.params))
        name = self.elab.request(item, binding)
        return self.b.emit(ir.Call(name, args, self.type_of(e)), e.callee)

    def prim(self, op: str, args: tuple, ty: ir.Ty, attrs: tuple = ()) -> ir.Var:
        return self.b.emit(ir.Prim(op, tuple(args), ty, attrs), op)

    def args(self, e: t.Call) -> list[t.Expr]:
        return [a.value for a in e.args if a.name is None]

    def axis(self, e: t.Call, rank: int) -> int:
        """The named `axis` argument, normalized to count from the front."""
        named = next((a.value for a in e.args if a.name == "axis"), None)
        return 0 if named is None else self.const_int(named) % rank

    def prelude_cast(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("cast", (self.expr(self.args(e)[0]),), ty)

    def prelude_math(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim(e.callee, (self.expr(self.args(e)[0], ty.dtype),), ty)

    def prelude_abs(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("abs", (self.expr(self.args(e)[0], ty.dtype),), ty)

    def prelude_min(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim(e.callee, tuple(self.expr(a, ty.dtype) for a in self.args(e)), ty)

    prelude_max = prelude_min
    prelude_shl = prelude_min
    prelude_shr = prelude_min

    def prelude_select(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        c, a, b = self.args(e)
        return self.prim("select", (self.expr(c), self.expr(a, ty.dtype),
                                    self.expr(b, ty.dtype)), ty)

    def prelude_reshape(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim(e.callee, (self.expr(self.args(e)[0]),), ty)

    prelude_broadcast_to = prelude_reshape

    def prelude_permute(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        x, perm = self.args(e)
        order = tuple(self.const_int(k) for k in perm.items)
        return self.prim("permute", (self.expr(x),), ty, (("perm", order),))

    def prelude_concat(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        parts = tuple(self.expr(a) for a in self.args(e))
        return self.prim("concat", parts, ty, (("axis", self.axis(e, ty.rank)),))

    def prelude_iota(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("iota", (), ty)

    def prelude_fill(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("fill", (self.expr(self.args(e)[1], ty.dtype),), ty)

    def prelude_cumsum(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("cumsum", (self.expr(self.args(e)[0]),), ty,
                         (("axis", self.axis(e, ty.rank)),))
