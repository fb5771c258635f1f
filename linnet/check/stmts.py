"""Statements: bindings, assignment, loops, scans, `return` and `yield`."""

from __future__ import annotations

from ..syntax import tree as t
from .dim_normal_form import Dim
from .item_scope import check_local_name
from .types import ERR, LitT, TensorT, TupleT, Type, Val, compile_time_int, is_scalar, materialize
from .unify import literal_fits, shapes_equal

CONST_HELP = "use integer literals, `Dim` generics and integer `const`s"
LOOP_HELP = ("outside a kernel's own body (in the `fn`s a kernel calls too) a counted loop's "
             "bounds are integer literals, `Dim` generics and integer `const`s; for a run-time "
             "trip count write a `while` loop over a `var` counter, or move the loop into the "
             "kernel")
STATIC_HELP = ("`static for` unrolls at compile time: use integer literals, `Dim` generics and "
               "integer `const`s (in a kernel, a plain `for` takes run-time bounds)")
SCAN_HELP = ("a scan stacks one value per trip, and the stacks' length `hi - lo` is part of "
             "their type; use compile-time bounds, or a plain `for` that assigns `var`s")
KERNEL_BOUND_HELP = ("in a kernel a `for` bound is a compile-time integer or a run-time integer "
                     "scalar, such as `cast<i64>(program_id(0)) * 2` or a scalar parameter")


class StmtChecker:
    def stmt(self, s: t.Stmt) -> None:
        getattr(self, "stmt_" + type(s).__name__)(s)

    def declare(self, s: t.Stmt | t.ForExpr, names: tuple[str, ...]) -> None:
        """The names a statement declares may not hide a builtin (E1207)."""
        spans = s.name_spans or (s.span,) * len(names)  # type: ignore[union-attr]
        for name, span in zip(names, spans):
            check_local_name(name, span, self.bag)

    def stmts(self, body: tuple[t.Stmt, ...]) -> None:
        for s in body:
            self.stmt(s)

    def bound_value(self, e: t.Expr) -> Val:
        """The value of a `let`, `var`, assignment or `return`: the places where a valued
        `for` (a scan) may stand, as the whole value; anywhere else it is E2124."""
        if not isinstance(e, t.ForExpr):
            return self.expr(e)
        value = self.scan(e)
        if self.types is not None:
            self.types[id(e)] = value
        return value

    def stmt_Let(self, s: t.Let) -> None:
        self.declare(s, (s.name,))
        value = self.bound_value(s.value)
        if s.annotation is not None:
            value = self.annotate(s.annotation, value, s.value)
        bound = self._bound(value, s.value)
        self.frame.bind(s.name, bound, span=s.span)
        self._record(s, bound)

    def _record(self, s: t.Stmt, v: Val) -> None:
        """In an instance, remember what each binding statement bound."""
        if self.types is not None:
            self.types[id(s)] = v

    def _bound(self, v: Val, value: t.Expr) -> Val:
        """Let-bound literals keep their compile-time value but take a dtype... lazily.

        An integer literal bound by `let` stays a compile-time integer (usable as a
        loop bound or a shape), while a float literal becomes an f64 scalar.
        """
        if isinstance(v.type, LitT) and v.type.kind == "float":
            return self.settled(v, value.span)
        return v

    def annotate(self, annotation: t.TypeExpr, value: Val, where: t.Expr) -> Val:
        want = self.resolve_type(annotation)  # type: ignore[attr-defined]
        if want is None or value.is_error:
            return ERR
        if not self.accepts(want, value, where):  # type: ignore[attr-defined]
            return ERR
        return Val(want, value.const)

    def stmt_LetTuple(self, s: t.LetTuple) -> None:
        self.declare(s, s.names)
        value = self.bound_value(s.value)
        if not value.is_error and not (isinstance(value.type, TupleT)
                                       and len(value.type.items) == len(s.names)):
            self.error("E2101", f"cannot destructure {value.type} into {len(s.names)} names",
                       s.value.span, f"this is {value.type}")
            value = ERR
        for k, name in enumerate(s.names):
            self.frame.bind(name, Val(value.type.items[k]) if not value.is_error else ERR)

    def stmt_LetIndex(self, s: t.LetIndex) -> None:
        self.declare(s, (s.name,))
        value = self.let_index(s)  # type: ignore[attr-defined]
        self.frame.bind(s.name, value, span=s.span)
        self._record(s, value)

    def stmt_VarDecl(self, s: t.VarDecl) -> None:
        self.declare(s, (s.name,))
        value = self.bound_value(s.value)
        if s.annotation is not None:
            value = self.annotate(s.annotation, value, s.value)
        value = self.settled(value, s.value.span)
        self.frame.bind(s.name, value, mutable=True, span=s.span)
        self._record(s, value)

    def stmt_Assign(self, s: t.Assign) -> None:
        local = self.frame.lookup(s.name)
        value = self.bound_value(s.value)
        if local is None:
            self.error("E1201", f"undeclared name `{s.name}`", s.span, "not declared",
                       help=f"declare it first: `var {s.name} = ...`", once=(s.name,))
            return
        if not local.mutable:
            self.error("E2108", f"`{s.name}` is not a `var`", s.span, "cannot assign",
                       help=f"declare it with `var {s.name} = ...` to reassign it")
            return
        if value.is_error or local.val.is_error:
            return
        if not self._same_type(local.val.type, value):
            self.error("E2109", f"assignment changes `{s.name}` from {local.val.type} to "
                       f"{value.type}", s.value.span, f"this is {value.type}",
                       help="a variable keeps one type; cast or reshape the value")

    def _same_type(self, have: Type, v: Val) -> bool:
        if isinstance(v.type, LitT) and isinstance(have, TensorT) and have.rank == 0:
            return literal_fits(v, have.dtype, self.frame.dtype_kind(have.dtype)) is None
        if isinstance(have, TensorT) and isinstance(v.type, TensorT):
            return have.dtype == v.type.dtype and shapes_equal(have.dims, v.type.dims,
                                                               self.frame.facts)
        return have == v.type

    def stmt_Return(self, s: t.Return) -> None:
        if self.frame.kernel is not None:
            self.error("E2127", "a kernel has no `return`", s.span, "not in a kernel",
                       help="write results with `store` or an atomic")
            return
        if self.frame.loop_depth:
            self.error("E2120", "`return` inside a loop", s.span, "inside a loop",
                       help="assign to a `var` in the loop and return after it")
            return
        value = self.bound_value(s.value)
        if self.expected_result is None:  # the result is what is returned (a fn's inferred)
            value = self.settled(value, s.value.span)
        self.returned = value
        if self.expected_result is not None and not value.is_error:
            self.accepts(self.expected_result, value, s.value)  # type: ignore[attr-defined]

    def _range(self, lo: t.Expr, hi: t.Expr, code: str = "E2123", what: str = "a loop bound",
               help: str = CONST_HELP) -> tuple[Dim, Dim] | None:
        a = self.expect_const_int(lo, what, code, help)
        b = self.expect_const_int(hi, what, code, help) if a is not None else None
        return (a, b) if a is not None and b is not None else None

    def stmt_For(self, s: t.For) -> None:
        self.declare(s, (s.var,))
        if not s.static:
            if self.frame.kernel is not None:
                self._kernel_bound(s.lo)
                self._kernel_bound(s.hi)
            else:
                self._range(s.lo, s.hi, what="a loop bound outside a kernel", help=LOOP_HELP)
            self._loop_body(s.body, s.var, Val(TensorT((), "i64")))
            return
        bounds = self._range(s.lo, s.hi, "E2121", "a `static for` bound", STATIC_HELP)
        if bounds is None or self.frame.facts.prove(bounds[1], "<=", bounds[0]):
            return  # no trips (`0..N` at N = 0): the body is never elaborated, so it is not
            # checked under bounds that leave it nothing to run on (`x[0]` of an empty x)
        # The body is unrolled, but its counter is an i64 at run time, as a `for`'s: it is no
        # dimension (E2123 in a shape) and no position of a sub array (E2101)
        self._loop_body(s.body, s.var, Val(TensorT((), "i64")))

    def stmt_ForEach(self, s: t.ForEach) -> None:
        """Outside a block there are no sub arrays (check/block_bodies.py)."""
        self.error("E2121", "`static for x in e` runs over a sub array, inside a block",
                   s.iterable.span, "not a sub array",
                   help="unroll a range with `static for i in a..b`")

    def _kernel_bound(self, e: t.Expr) -> None:
        """A kernel `for` bound: a compile-time integer, or a run-time integer scalar (read
        once, before the first trip; the counter stays an i64)."""
        v = self.expr(e)
        if v.is_error:
            return
        if compile_time_int(v) is not None:
            self.in_i64(v, e, "a loop bound")  # type: ignore[attr-defined]
            return
        if isinstance(v.type, LitT) and v.type.kind == "int":
            return  # an integer literal chosen at run time: an i64
        if isinstance(v.type, TensorT) and v.type.rank == 0 \
                and self.is_integer(v.type.dtype):  # type: ignore[attr-defined]
            return
        self.error("E2101", f"a loop bound must be an integer scalar, found {materialize(v)}",
                   e.span, f"this is {materialize(v)}", help=KERNEL_BOUND_HELP)

    def _loop_body(self, body: tuple[t.Stmt, ...], var: str | None, counter: Val,
                   scan: bool = False) -> None:
        self.frame.push()
        self.frame.loop_depth += 1
        if var is not None:
            self.frame.bind(var, counter)
        try:
            for k, st in enumerate(body):
                if isinstance(st, t.Yield) and scan and k == len(body) - 1:
                    self.scan_yield = self.expr(st.value)
                else:
                    self.stmt(st)
        finally:
            self.frame.loop_depth -= 1
            self.frame.pop()

    def stmt_While(self, s: t.While) -> None:
        cond = self.expr(s.cond)
        if not cond.is_error and not is_scalar(cond.type, "bool"):
            self.error("E2114", f"condition must be a scalar bool, found {cond.type}",
                       s.cond.span, f"this is {cond.type}")
        self._loop_body(s.body, None, ERR)

    def stmt_Yield(self, s: t.Yield) -> None:
        self.error("E2124", "`yield` outside a valued `for`, or not its last statement",
                   s.span, "misplaced", help="write `let ys = for i in a..b { ...; yield v }`")

    def stmt_Effect(self, s: t.Effect) -> None:
        self.effect(s)  # type: ignore[attr-defined]

    def scan(self, e: t.ForExpr) -> Val:
        """`for i in a..b { ...; yield v }`: each v stacked on a new leading axis of b-a.

        A tuple of tensors (scalars included) is stacked item by item: the scan's value
        is then the tuple of the stacks, `let (a, b) = for ... { yield (x, y) }`."""
        self.declare(e, (e.var,))
        bounds = self._range(e.lo, e.hi, what="a scan's bound", help=SCAN_HELP)
        if not e.body or not isinstance(e.body[-1], t.Yield):
            return self.error("E2124", "a valued `for` must end with `yield`", e.span,
                              help="end the loop body with `yield value`")
        saved = getattr(self, "scan_yield", None)
        self.scan_yield = None
        try:
            self._loop_body(e.body, e.var, Val(TensorT((), "i64")), scan=True)
            item = self.scan_yield
        finally:
            self.scan_yield = saved
        if bounds is None or item is None or item.is_error:
            return ERR
        item = self.settled(item, e.body[-1].value.span)
        if item.is_error:
            return ERR
        item_type = materialize(item)
        items = item_type.items if isinstance(item_type, TupleT) else (item_type,)
        if not all(isinstance(ty, TensorT) for ty in items):
            return self.error("E2124", "a scan yields a tensor or a tuple of tensors, found "
                              f"{item_type}", e.body[-1].span, f"this is {item_type}",
                              help="yield a tensor, or a flat tuple of tensors and scalars")
        lo, hi = bounds
        if self.frame.facts.prove(hi - lo, "<", Dim.const(0)):
            return self.error("E2208", f"a scan's length `{hi - lo}` is provably negative",
                              e.lo.span.to(e.hi.span), "negative",
                              help="a scan over `a..b` stacks `b - a` values: write `b >= a`")
        stacks = tuple(TensorT((hi - lo,) + ty.dims, ty.dtype) for ty in items)
        return Val(TupleT(stacks) if isinstance(item_type, TupleT) else stacks[0])
