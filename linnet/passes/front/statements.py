"""Statements for `elaborate`: a function's body, `let`s and `var`s, and loops.

The mixin `Statements` of the body translator (`elaborator.BodyTranslator`): a
function's parameters and body block; each statement kind as A-normal-form
bindings, with `let`, `var` and assignment rebinding a name SSA style; and
the loops, where `for`, `while` and scans become `Loop`/`While` carrying
exactly the outer `var`s their body assigns, and `static for` unrolls. It
reaches expressions, folding and index notation through `self`, as the
other mixins reach it.
"""

from __future__ import annotations

from ...check.types import LitT, Val
from ...ir import tensor as ir
from ...syntax import tree as t
from .vocabulary import Const, ElaborationError, I64, tensor_dtype, value_dtype
from .surface_walks import assigned_outer, has_effect
from .entry_interface import input_labels

MAX_UNROLL = 100_000
"""The most iterations a `static for` unrolls (the limit of a block tree's size too)."""


class Statements:
    """Translates statements, loops and a function's body into the current block."""

    # --------------------------------------------------------- functions

    def function(self, params: tuple[t.Param, ...], stmts: tuple[t.Stmt, ...], result,
                 extra: tuple = ()) -> tuple[tuple[ir.Var, ...], ir.Block]:
        """The parameters and the body block of a function (of a grad clause, with `extra`
        parameters after the declared ones)."""
        sig = self.inst.signature
        declared = [(p.name, ty) for p, ty in zip(params, sig.params)]
        ir_params = []
        self.input_names: list[tuple[str, str]] = []  # (IR name, user name): entry_interface
        for name, ty in declared + list(extra):
            parts = self.param_vars(name, ty)
            ir_params.extend(parts)
            self.input_names += zip((v.name for v in parts),
                                    input_labels(name, ty, len(parts)))
        for s in stmts:
            if isinstance(s, t.Return):
                value = self.value_atom(s.value, result)
                return tuple(ir_params), ir.Block(tuple(self.b.blocks[0]), value)
            self.stmt(s)
        raise ElaborationError("function body without a final `return`")

    def param_vars(self, name: str, ty) -> list[ir.Var]:
        """The IR parameters standing for one declared parameter, its name bound to them."""
        var = self.b.fresh(name, self.ir_type(ty))
        self.env.define(name, var)
        return [var]

    def value_atom(self, e: t.Expr, ty) -> ir.Atom:
        """e where a value of checker type ty is expected (a parameter, result or field)."""
        return self.expr(e, tensor_dtype(ty))

    # -------------------------------------------------------- statements

    def stmt(self, s: t.Stmt) -> None:
        getattr(self, "stmt_" + type(s).__name__)(s)

    def stmts(self, body: tuple[t.Stmt, ...]) -> None:
        for s in body:
            self.stmt(s)

    def stmt_Let(self, s: t.Let) -> None:
        bound = self.val(s)
        if isinstance(bound.type, LitT):
            value = self.fold(s.value)
            if isinstance(value, int) and not isinstance(value, bool):
                self.env.define(s.name, Const(value))  # a compile-time integer stays one
                return
        self.define(s.name, self.expr(s.value, value_dtype(bound)))

    def define(self, name: str, atom: ir.Atom) -> None:
        """Bind a user name to a value, naming the variable after it (for readable dumps)."""
        self.env.define(name, self.b.name(atom, name))

    def stmt_LetTuple(self, s: t.LetTuple) -> None:
        if isinstance(s.value, t.ForExpr):  # a scan of a tuple: one stack per name
            for name, atom in zip(s.names, self.scan_stacks(s.value, s.names)):
                self.env.define(name, atom)
            return
        if isinstance(s.value, t.TupleExpr):  # no tuple needed: each item, then the names
            types = self.val(s.value).type.items
            atoms = [self.expr(e, value_dtype(Val(ty))) for e, ty in zip(s.value.items, types)]
            for name, atom in zip(s.names, atoms):
                self.define(name, atom)
            return
        tup = self.expr(s.value)
        for k, (name, ty) in enumerate(zip(s.names, tup.type.items)):
            self.env.define(name, self.b.bind(ir.GetItem(tup, k, ty), name))

    def stmt_LetIndex(self, s: t.LetIndex) -> None:
        ty = self.type_of(s)
        with_notation = self.enter_notation()
        try:
            self.bind_ix(s.indices)
            body = self.ixe(s.value, ty.dtype)
            outputs = self.ix_axes(s.indices)
        finally:
            self.leave_notation(with_notation)
        self.define(s.name, self.b.emit(ir.Comprehension(outputs, body, ty), "comp"))

    def stmt_VarDecl(self, s: t.VarDecl) -> None:
        self.define(s.name, self.expr(s.value, value_dtype(self.val(s))))

    def stmt_Assign(self, s: t.Assign) -> None:
        """SSA: the name now reads a new variable; a literal takes the var's dtype (a
        tuple var's items take theirs from the checker's types)."""
        current = self.env.lookup(s.name)
        want = current.type.dtype if isinstance(current, (ir.Var, ir.Lit)) \
            and isinstance(current.type, ir.TType) else None
        atom = self.expr(s.value, want)
        self.env.assign(s.name, self.b.name(atom, s.name))

    def stmt_Return(self, s: t.Return) -> None:
        raise ElaborationError("not implemented yet: `return` before the end of a function",
                               s.span)

    def stmt_Yield(self, s: t.Yield) -> None:
        raise ElaborationError("`yield` outside a scan", s.span, "E2124")

    def stmt_Effect(self, s: t.Effect) -> None:
        raise ElaborationError(f"`{s.kind}` outside a kernel", s.span, "E2127")

    # ------------------------------------------------------------- loops

    def carried(self, stmts: tuple[t.Stmt, ...]) -> list[str]:
        """The outer `var`s the statements assign: what a loop must carry."""
        return [n for n in assigned_outer(stmts, self.assigned)
                if isinstance(self.env.lookup(n), (ir.Var, ir.Lit))]

    def enter_loop(self, names: list[str]) -> tuple[tuple[ir.Atom, ...], tuple[ir.Var, ...]]:
        """The carried values before the loop, and the loop's own Vars standing for them."""
        init = tuple(self.env.lookup(n) for n in names)
        params = tuple(self.b.fresh(n, a.type) for n, a in zip(names, init))
        for n, p in zip(names, params):
            self.env.assign(n, p)
        return init, params

    def loop_block(self, names: list[str], stmts: tuple[t.Stmt, ...],
                   counter: tuple[str, ir.Var] | None = None,
                   scanned: tuple[t.Expr, tuple[ir.TType, ...]] | None = None) -> ir.Block:
        """A loop body: the statements, then a tuple of the carried values' next values
        (and, for a scan, the yielded value's items: `scanned` is the yielded expression
        and the types of its stacks)."""
        self.b.open()
        self.env.push()
        if counter is not None:
            self.env.define(*counter)
        self.stmts(stmts)
        items = [self.env.lookup(n) for n in names]
        if scanned is not None:
            items.extend(self.yielded(*scanned))
        self.env.pop()
        tup = ir.MakeTuple(tuple(items), ir.TupleTy(tuple(a.type for a in items)))
        return self.b.close(self.b.emit(tup, "next"))

    def leave_loop(self, names: list[str], loop: ir.Expr, hint: str) -> ir.Var:
        """Bind the loop; the carried names then read its results."""
        var = self.b.emit(loop, hint)
        for k, n in enumerate(names):
            self.env.assign(n, self.b.bind(ir.GetItem(var, k, loop.type.items[k]), n))
        return var

    def stmt_For(self, s: t.For) -> None:
        if s.static:
            self.static_for(s)
            return
        lo, hi = self.loop_bound(s.lo), self.loop_bound(s.hi)  # read once, before the loop
        names = self.carried(s.body)
        if not names and not has_effect(s.body):
            return  # a loop that carries nothing and writes nothing computes nothing
        init, params = self.enter_loop(names)
        index = self.b.fresh(s.var, I64)
        body = self.loop_block(names, s.body, (s.var, index))
        ty = ir.TupleTy(tuple(p.type for p in params))
        self.leave_loop(names, ir.Loop(index, lo, hi, params, init, body, ty), "loop")

    def scan_stacks(self, e: t.ForExpr, names: tuple[str, ...] = ()) -> list[ir.Atom]:
        """`for i in a..b { ...; yield v }`: a Loop with one yield per stacked tensor (each
        item of a yielded tuple is stacked on its own); the stacks, in order, bound to
        variables called after `names` when given (the user's, in `let (a, b) = for`)."""
        lo, hi = self.const_int(e.lo), self.const_int(e.hi)
        scanned = self.type_of(e)
        stacks = scanned.items if isinstance(scanned, ir.TupleTy) else (scanned,)
        carried = self.carried(e.body[:-1])
        init, params = self.enter_loop(carried)
        index = self.b.fresh(e.var, I64)
        body = self.loop_block(carried, e.body[:-1], (e.var, index),
                               (e.body[-1].value, stacks))
        ty = ir.TupleTy(tuple(p.type for p in params) + stacks)
        loop = self.leave_loop(carried, ir.Loop(index, lo, hi, params, init, body, ty,
                                                len(stacks)), "scan")
        items = [ir.GetItem(loop, len(carried) + k, st) for k, st in enumerate(stacks)]
        if names:
            return [self.b.bind(item, name) for item, name in zip(items, names)]
        return [self.b.emit(item, "stack") for item in items]

    def yielded(self, e: t.Expr, stacks: tuple[ir.TType, ...]) -> list[ir.Atom]:
        """The values one trip of a scan yields: the items of a tuple (a literal one item by
        item, each in its stack's dtype), or the one value."""
        if isinstance(e, t.TupleExpr):
            return [self.expr(x, st.dtype) for x, st in zip(e.items, stacks)]
        value = self.expr(e, stacks[0].dtype if len(stacks) == 1 else None)
        if not isinstance(value.type, ir.TupleTy):
            return [value]
        return [self.b.emit(ir.GetItem(value, k, ty), "item")
                for k, ty in enumerate(value.type.items)]

    def stmt_While(self, s: t.While) -> None:
        names = self.carried(s.body)
        init, params = self.enter_loop(names)
        self.b.open()
        cond = self.b.close(self.expr(s.cond))
        body = self.loop_block(names, s.body)
        ty = ir.TupleTy(tuple(p.type for p in params))
        self.leave_loop(names, ir.While(params, init, cond, body, ty), "while")

    def static_for(self, s: t.For) -> None:
        """Unrolled: the body once per counter value, the counter an i64 known in each copy.
        At most `MAX_UNROLL` copies: a bound such as 2**63 - 1 would unroll for ever."""
        lo, hi = self.const_int(s.lo), self.const_int(s.hi)
        if hi - lo > MAX_UNROLL:
            raise ElaborationError(
                f"not implemented yet: a `static for` of {hi - lo} iterations (at most "
                f"{MAX_UNROLL:,} are unrolled; a `for` without `static` runs at run time)",
                s.span)
        for k in range(lo, hi):  # the counter: an i64 whose value each copy knows
            self.env.push()
            self.env.define(s.var, Const(k))
            self.stmts(s.body)
            self.env.pop()

    def loop_bound(self, e: t.Expr) -> ir.Bound:
        """A `for` bound: compile-time outside kernels (the kernel translator allows more)."""
        return self.const_int(e)

    def const_int(self, e: t.Expr) -> int:
        """A loop bound, slice bound or axis: the checker proved it compile-time."""
        value = self.fold(e)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ElaborationError("a compile-time integer is required here", e.span, "E2123")
        return value
