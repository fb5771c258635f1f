"""Checking expressions: names, literals, operators, indexing, `if`, tuples.

Calls, index notation and kernel memory live in their own modules; this
one holds the dispatch and the arithmetic that every other part relies on.
"""

from __future__ import annotations

from typing import Callable

from ..diagnostics import DiagnosticBag, Span
from ..errors import closest
from ..syntax import tree as t
from ..syntax.habits import method_habit, name_habit
from ..syntax.parser import VALUED_FOR
from .dim_normal_form import Dim
from .scope import Frame
from .types import (choice_of, compile_time_int, default_dtype, joint_literal, known_zero, literal_values, ERR, DTYPES, FLOAT, INTEGER, NUMERIC,
                    KINDS, DTypeT, ErrorT, LitT, MemT, PackDim, ShapeT, TensorT, TupleT, Val, is_scalar,
                    materialize, scalar)
from .broadcast_advice import rank_advice
from .ranges import overflow_problem
from .unify import Problem, broadcast, literal_fits, shapes_equal

ARITH = {"+", "-", "*", "/", "%"}
BITWISE = {"|", "^", "&"}
COMPARE = {"==", "!=", "<", "<=", ">", ">="}
LOGIC = {"&&", "||"}


class ExprChecker:
    """Type and shape checking of expressions within one body (a `Frame`)."""

    def __init__(self, frame: Frame, bag: DiagnosticBag) -> None:
        self.frame = frame
        self.bag = bag
        self.ix: dict[str, tuple] | None = None  # index variables in scope -> domains
        self.ix_used: set[str] = set()
        self.types: dict[int, Val] | None = None  # when instantiating: each node's type
        self.reported: set[tuple] = set()  # the keys of mistakes reported once (see error)
        self.notation = 0  # counts index-notation statements: the scope of a free index
        # inside a `where` clause: each divisor not provably positive (a stated fact
        # divides; the clause then implies its divisors are positive)
        self.stated_divisors: list[Dim] | None = None

    # ------------------------------------------------------------ reporting
    def error(self, code: str, message: str, span: Span, label: str = "",
              help: str = "", once: tuple | None = None, notes: tuple[str, ...] = ()) -> Val:
        """Report a mistake. With `once` (a key such as the name involved), a mistake of
        this code with this key is reported the first time only: an undeclared name used
        three times in a body, or a free index used twice in one statement, is one error."""
        if once is not None:
            if (code, *once) in self.reported:
                return ERR
            self.reported.add((code, *once))
        self.bag.error(code, message, span, label, help, notes)
        return ERR

    def problem(self, p: Problem, span: Span) -> Val:
        return self.error(p.code, p.message, span, p.label, p.help)

    # ------------------------------------------------------------- dispatch
    def expr(self, e: t.Expr) -> Val:
        method: Callable[[t.Expr], Val] = getattr(self, "expr_" + type(e).__name__)
        v = method(e)
        if self.types is not None:
            self.types[id(e)] = v
        return v

    def expr_IntLit(self, e: t.IntLit) -> Val:
        return Val(LitT("int"), Dim.const(e.value))

    def expr_FloatLit(self, e: t.FloatLit) -> Val:
        return Val(LitT("float"), fconst=e.value)

    def expr_BoolLit(self, e: t.BoolLit) -> Val:
        return Val(scalar("bool"))

    def expr_Name(self, e: t.Name) -> Val:
        if self.ix is not None and e.id in self.ix:
            return self.error("E3104", f"index `{e.id}` used as a value", e.span,
                              "an index, not a value",
                              help="index variables may only appear inside `x[...]` accesses",
                              once=(self.notation, e.id))
        local = self.frame.lookup(e.id)
        if local is not None:
            return self._in_notation(local.val, e)
        generic = self.frame.generics.get(e.id) if e.id not in DTYPES else None
        if generic is not None:  # a generic named like a dtype is E1207; the dtype stays
            return self._generic_value(generic, e)
        if e.id in self.frame.globals.consts:
            return self.frame.globals.consts[e.id]
        if isinstance(self.frame.globals.items.get(e.id), t.BlockDef):
            return self.error("E2101", f"`{e.id}` is a block, not a value", e.span, "a block")
        if e.id in self.frame.globals.items:
            return self.error("E2101", f"`{e.id}` is a function, not a value", e.span,
                              "a function", help=f"call it: `{e.id}(...)`")
        if e.id in DTYPES:
            return Val(DTypeT(e.id))
        return self.error("E1201", f"undeclared name `{e.id}`", e.span, "not found",
                          help=name_habit(e.id) or self.undeclared_help(e.id), once=(e.id,))

    def undeclared_help(self, name: str) -> str:
        """The name in scope that `name` is a slip for (`did you mean `x`?`), else how to
        declare one."""
        near = closest(name, self.frame.visible_names())
        if near is not None:
            return f"did you mean `{near}`?"
        return "declare it with `let`, or as a parameter or generic"

    def expr_MemberCall(self, e: t.MemberCall) -> Val:
        """Outside a block there are no subs (check/block_bodies.py checks them inside):
        `x.mean(1)` is a habit from Python."""
        receiver = e.base.id if isinstance(e.base, t.Name) else ""
        d = method_habit(receiver, e.name, e.name_span)
        return self.error(d.code, d.message, d.span, d.label, d.help)

    def _generic_value(self, g: t.Generic, e: t.Name) -> Val:
        if g.kind not in KINDS:
            return ERR  # an unknown kind, reported where the generic is declared (E1201)
        bound = self.frame.binding
        if bound is not None and bound.bound(g.name):
            return _bound_value(g, bound)
        if g.kind == "Dim":
            return Val(LitT("int"), Dim.sym(g.name))
        if g.kind == "Shape":
            return Val(ShapeT((PackDim(g.name),)))
        return Val(DTypeT(g.name))

    def _in_notation(self, v: Val, e: t.Expr) -> Val:
        """Inside index notation a whole tensor may not appear without indices."""
        if self.ix is not None and isinstance(v.type, TensorT) and v.type.rank > 0:
            return self.error("E3104", f"tensor `{getattr(e, 'id', '?')}` used without indices "
                              "inside index notation", e.span, f"this is {v.type}",
                              help="name every axis, as in `x[i, j]`")
        if isinstance(v.type, MemT):
            return self.error("E2127", "a kernel's memory is read only through `load`",
                              e.span, f"`{getattr(e, 'id', '?')}` is in memory",
                              help="write `load(x[...], mask)`")
        return v

    # ------------------------------------------------------------ operators
    def expr_Unary(self, e: t.Unary) -> Val:
        v = self.expr(e.operand)
        if v.is_error:
            return v
        if e.op == "!":
            return self._logical_not(v, e)
        if isinstance(v.type, LitT):
            return self.in_i64(_negated(v) if e.op == "-" else v, e, "compile-time arithmetic")
        if not isinstance(v.type, TensorT) or not self.is_numeric(v.type.dtype):
            return self.error("E2104", f"unary `{e.op}` is not defined for {v.type}", e.span,
                              f"this is {v.type}")
        return Val(v.type)

    def _logical_not(self, v: Val, e: t.Unary) -> Val:
        if is_scalar(v.type, "bool"):
            return v
        if self.ix is not None and isinstance(v.type, TensorT) and v.type.dtype == "bool":
            return v
        if isinstance(v.type, TensorT) and v.type.dtype == "bool":
            return self.error("E2116", "`!` needs a scalar bool", e.span, f"this is {v.type}",
                              help="inside index notation `!` applies element by element; "
                                   "for tensors use `select` or `x == false`")
        return self.error("E2116", f"`!` needs a scalar bool, found {v.type}", e.span,
                          f"this is {v.type}")

    def expr_Binary(self, e: t.Binary) -> Val:
        left, right = self.expr(e.left), self.expr(e.right)
        if left.is_error or right.is_error:
            return ERR
        if e.op in LOGIC:
            return self._logical(e, left, right)
        if isinstance(left.type, LitT) and isinstance(right.type, LitT):
            return self._fold_literals(e, left, right)
        joined = self.join(left, right, e)
        if joined is None:
            return ERR
        dims, dtype = joined
        problem = self._operator_problem(e.op, dtype)
        if problem:
            return self.problem(problem, e.span)
        if e.op in ("/", "%") and not self.is_float(dtype) and self._provably_zero(right):
            return self.error("E2130", f"integer `{e.op}` by zero", e.right.span,
                              "this divisor is zero",
                              help="integer division by zero has no value; divide by a "
                                   "non-zero number")
        if e.op in COMPARE:
            return Val(TensorT(dims, "bool"))
        return Val(TensorT(dims, dtype))

    def _logical(self, e: t.Binary, left: Val, right: Val) -> Val:
        for side, v in ((e.left, left), (e.right, right)):
            elementwise = self.ix is not None and isinstance(v.type, TensorT)
            if not (is_scalar(v.type, "bool") or (elementwise and v.type.dtype == "bool")):
                return self.error("E2116", f"`{e.op}` needs scalar bools, found {v.type}",
                                  side.span, f"this is {v.type}",
                                  help="for bool tensors use `&` or `|`, which work element "
                                       "by element")
        return Val(TensorT(self._bcast(left, right, e) or (), "bool"))

    def _bcast(self, a: Val, b: Val, e: t.Expr) -> tuple | None:
        dims = broadcast(a.type.dims, b.type.dims, self.frame.facts)  # type: ignore[union-attr]
        if isinstance(dims, Problem):
            self.problem(dims, e.span)
            return None
        return dims

    def _fold_literals(self, e: t.Binary, a: Val, b: Val) -> Val:
        kind = joint_literal(a.type, b.type).kind  # type: ignore[arg-type]
        if e.op in COMPARE:
            return Val(scalar("bool"))
        if e.op in BITWISE and kind == "float":
            return self.error("E2104", f"`{e.op}` is not defined for float literals", e.span)
        if kind == "int" and e.op in ("/", "%") and b.const is not None \
                and not self.frame.facts.prove_positive(b.const):
            if self.stated_divisors is not None:
                self.stated_divisors.append(b.const)
                return self.in_i64(_stated_quotient(e.op, a, b), e, "compile-time arithmetic")
            label, help_ = self._divisor_advice(b.const)
            return self.error("E2205", f"divisor `{b.const}` is not provably positive",
                              e.right.span, label, help=help_)
        if a.alternatives or b.alternatives:
            folded = _fold_alternatives(e.op, kind, a, b)
        else:
            folded = _fold_pair(e.op, kind, a, b)
        return self.in_i64(folded, e, "compile-time arithmetic")

    def _divisor_advice(self, divisor: Dim | int) -> tuple[str, str]:
        """E2205's label and help. A `where` clause is the cure only where some sizes make
        the divisor positive: for `0`, `N - N` or `-N` (at most 0 under the clauses in
        force) `where 0 > 0` could never hold, so the help says to divide by something else."""
        if self.frame.facts.prove_nonnegative(-divisor):
            return ("never positive", f"`{divisor}` is at most 0 for every size the `where` "
                    "clauses allow: divide by an expression that is at least 1")
        return "may be zero or negative", f"add a `where` clause such as `where {divisor} > 0`"

    def in_i64(self, v: Val, e: t.Expr, what: str) -> Val:
        """v, or E2105 when its compile-time integer leaves the i64 range."""
        problem = overflow_problem(v.const, what) if v.const is not None else None
        return self.problem(problem, e.span) if problem else v

    def join(self, a: Val, b: Val, e: t.Expr) -> tuple[tuple, str] | None:
        """One dtype and the broadcast shape of two operands, or None after an error."""
        if not isinstance(a.type, (TensorT, LitT)) or not isinstance(b.type, (TensorT, LitT)):
            bad = a if not isinstance(a.type, (TensorT, LitT)) else b
            self.error("E2104", f"`{getattr(e, 'op', 'operator')}` is not defined for "
                       f"{bad.type}", e.span)
            return None
        dtype = self.meet_dtypes(a, b, e)
        if dtype is None:
            return None
        dims_a = a.type.dims if isinstance(a.type, TensorT) else ()
        dims_b = b.type.dims if isinstance(b.type, TensorT) else ()
        dims = broadcast(dims_a, dims_b, self.frame.facts)
        if isinstance(dims, Problem):
            if isinstance(e, t.Binary) and self.ix is None:
                dims = rank_advice(dims, e, dims_a, dims_b)
            self.problem(dims, e.span)
            return None
        return dims, dtype

    def meet_dtypes(self, a: Val, b: Val, e: t.Expr) -> str | None:
        """The one dtype of two operands: a typed side's, which a literal side must fit.

        Two literals meet at the default dtype of the wider kind (`i64`, or `f64` if
        either is a float), as a literal without context does. Callers that can keep
        the result a literal (`1 + 2`, `select(c, 1.0, 2.0)` on a scalar) do so before
        asking; this is for the ones that need a dtype, such as a tensor result.
        """
        if isinstance(a.type, LitT) and isinstance(b.type, LitT):
            dtype = default_dtype(joint_literal(a.type, b.type))
            for lit in (a, b):
                problem = literal_fits(lit, dtype, None)
                if problem:
                    self.problem(problem, e.span)
                    return None
            return dtype
        if isinstance(a.type, LitT) and isinstance(b.type, TensorT):
            a, b = b, a
        if isinstance(b.type, LitT):
            dtype = a.type.dtype  # type: ignore[union-attr]
            problem = literal_fits(b, dtype, self.frame.dtype_kind(dtype))
            if problem:
                self.problem(problem, e.span)
                return None
            return dtype
        if a.type.dtype != b.type.dtype:  # type: ignore[union-attr]
            self.error("E2103", f"mixed dtypes {a.type.dtype} and {b.type.dtype}; write an "
                       "explicit cast", e.span,
                       f"{a.type.dtype} {getattr(e, 'op', 'and')} {b.type.dtype}",
                       help="convert one side with `cast<...>(...)`: dtypes never convert "
                            "implicitly")
            return None
        return a.type.dtype  # type: ignore[union-attr]

    def _provably_zero(self, v: Val) -> bool:
        """Is v known to be zero: a compile-time integer (a literal `0`, `N - N`, a const) or
        a tensor of zeros (`cast<i32>(0)`, `fill<i32>([4], 0)`, `select(true, 0, 1)`)?"""
        if known_zero(v):
            return True
        d = compile_time_int(v)
        return d is not None and (d.as_int() == 0 or self.frame.facts.prove(d, "==",
                                                                            Dim.const(0)))

    def settled(self, v: Val, span: Span) -> Val:
        """v as a variable, a tuple item or a tensor element holds it: a literal takes its
        default dtype (`i64`, `f64`) and must fit it (E2105), as it must fit any dtype."""
        if not isinstance(v.type, LitT):
            return v
        problem = literal_fits(v, default_dtype(v.type), None)
        return self.problem(problem, span) if problem else Val(materialize(v))

    def _operator_problem(self, op: str, dtype: str) -> Problem | None:
        if op in ARITH and not self.is_numeric(dtype):
            return Problem("E2104", f"`{op}` is not defined for {dtype}",
                           help="arithmetic needs a numeric dtype")
        if op in BITWISE and not (self.is_integer(dtype) or dtype == "bool"):
            return Problem("E2104", f"`{op}` is not defined for {dtype}",
                           help="bitwise operators need integers or bools")
        if op in ("<", "<=", ">", ">=") and not self.is_numeric(dtype):
            return Problem("E2104", f"`{op}` is not defined for {dtype}")
        return None

    # dtype kinds, for concrete dtypes and generics alike
    def is_numeric(self, dtype: str) -> bool:
        kind = self.frame.dtype_kind(dtype)
        return dtype in NUMERIC if kind is None else kind in ("Numeric", "Integer", "Float")

    def is_integer(self, dtype: str) -> bool:
        kind = self.frame.dtype_kind(dtype)
        return dtype in INTEGER if kind is None else kind == "Integer"

    def is_float(self, dtype: str) -> bool:
        kind = self.frame.dtype_kind(dtype)
        return dtype in FLOAT if kind is None else kind == "Float"

    # ----------------------------------------------------- other expressions
    def expr_If(self, e: t.If) -> Val:
        cond = self.expr(e.cond)
        if not cond.is_error and not is_scalar(cond.type, "bool"):
            self.error("E2114", f"condition must be a scalar bool, found {cond.type}",
                       e.cond.span, f"this is {cond.type}")
        then, orelse = self.block(e.then), self.block(e.orelse)
        if then.is_error or orelse.is_error:
            return ERR
        return self.if_join(then, orelse, e)

    def if_join(self, a: Val, b: Val, e: t.If) -> Val:
        """The one type of both branches. Two literal branches make a literal that may be
        either value (each checked for range where it takes a dtype); a literal branch
        beside a typed one takes its dtype, as a literal operand does."""
        if isinstance(a.type, LitT) and isinstance(b.type, LitT):
            kind = joint_literal(a.type, b.type)
            if a.const == b.const and a.fconst == b.fconst and not a.alternatives \
                    and not b.alternatives:
                return Val(kind, a.const, a.fconst)
            return choice_of(kind, a, b)
        if isinstance(a.type, LitT) or isinstance(b.type, LitT):
            typed = b if isinstance(a.type, LitT) else a
            lit = a if isinstance(a.type, LitT) else b
            if isinstance(typed.type, TensorT):
                problem = literal_fits(lit, typed.type.dtype,
                                       self.frame.dtype_kind(typed.type.dtype))
                if problem is None:
                    return Val(typed.type)
                if problem.code == "E2105":
                    branch = e.then if lit is a else e.orelse
                    return self.problem(problem, branch.value.span)
        same = (isinstance(a.type, TensorT) and isinstance(b.type, TensorT)
                and a.type.dtype == b.type.dtype
                and shapes_equal(a.type.dims, b.type.dims, self.frame.facts)) or a.type == b.type
        if not same:
            return self.error("E2115", f"`if` branches differ: {a.type} and {b.type}", e.span,
                              "branches of different types",
                              help="both branches must have one type; cast or reshape one")
        return Val(a.type)

    def block(self, b: t.Block) -> Val:
        self.frame.push()
        try:
            for s in b.stmts:
                if isinstance(s, t.Return):
                    self.error("E2120", "`return` inside an `if` branch", s.span,
                               "not at the end of the body",
                               help="make the `if` a value: `let v = if c { a } else { b }`, "
                                    "then `return v`")
                    continue
                self.stmt(s)  # type: ignore[attr-defined]
            return self.expr(b.value)
        finally:
            self.frame.pop()

    def expr_TupleExpr(self, e: t.TupleExpr) -> Val:
        items = [self.settled(self.expr(x), x.span) for x in e.items]
        if any(v.is_error for v in items):
            return ERR
        return Val(TupleT(tuple(v.type for v in items)))

    def expr_ListExpr(self, e: t.ListExpr) -> Val:
        dims = []
        for item in e.items:
            v = self.expr(item)
            if v.is_error:
                return ERR
            if isinstance(v.type, ShapeT):
                dims.extend(v.type.dims)
            elif compile_time_int(v) is not None:
                if self.in_i64(v, item, "a dimension").is_error:
                    return ERR
                if self.frame.facts.prove(v.const, "<", Dim.const(0)):
                    return self.error("E2208", f"dimension `{v.const}` is provably negative",
                                      item.span, "negative")
                dims.append(v.const)
            else:
                return self.error("E2123", "a shape needs compile-time integers", item.span,
                                  f"this is {v.type}")
        return Val(ShapeT(tuple(dims)))

    def expr_ForExpr(self, e: t.ForExpr) -> Val:
        return self.error("E2124", VALUED_FOR, e.span, "used as an operand",
                          help="write `let ys = for i in a..b { ... yield v }`")

    def expr_Reduce(self, e: t.Reduce) -> Val:
        return self.reduction(e)  # type: ignore[attr-defined]

    def expr_Index(self, e: t.Index) -> Val:
        return self.index(e)  # type: ignore[attr-defined]

    def expr_Call(self, e: t.Call) -> Val:
        return self.call(e)  # type: ignore[attr-defined]

    def expect_const_int(self, e: t.Expr, what: str, code: str = "E2123",
                         help: str = "use integer literals, `Dim` generics and integer "
                                     "`const`s") -> Dim | None:
        """A compile-time integer (E2123 otherwise)."""
        v = self.expr(e)
        if v.is_error:
            return None
        if compile_time_int(v) is not None:
            return None if self.in_i64(v, e, what).is_error else v.const
        self.error(code, f"{what} must be a compile-time integer", e.span,
                   f"this is {v.type}", help=help)
        return None


def _bound_value(g: t.Generic, bound) -> Val:
    """A generic's value in an instance (concrete dims, dtypes and packs)."""
    if g.kind == "Dim":
        return Val(LitT("int"), bound.dims[g.name])
    if g.kind == "Shape":
        return Val(ShapeT(bound.packs[g.name]))
    return Val(DTypeT(bound.dtypes[g.name]))


def _fold_dim(op: str, a: Dim | None, b: Dim | None) -> Dim | None:
    if a is None or b is None:
        return None
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/" and b.as_int() != 0:
        return a.floordiv(b)
    if op == "%" and b.as_int() != 0:
        return a.mod(b)
    return None


def _negated(v: Val) -> Val:
    """`-v` for a literal, and for each value it may take."""
    return Val(v.type, -v.const if v.const is not None else None,
               -v.fconst if v.fconst is not None else None,
               tuple(_negated(x) for x in v.alternatives))


def _stated_quotient(op: str, a: Val, b: Val) -> Val:
    """`a / b` or `a % b` inside a `where` clause, kept symbolic even for a divisor of 0:
    the clause's implied `b > 0`, checked before it, is what fails then."""
    if a.const is None:
        return Val(LitT("int"))
    return Val(LitT("int"), a.const.floordiv(b.const) if op == "/" else a.const.mod(b.const))


def _fold_pair(op: str, kind: str, a: Val, b: Val) -> Val:
    """An arithmetic or bitwise operator on two literals, folded where it can be."""
    if kind == "int":
        return Val(LitT("int"), _fold_dim(op, a.const, b.const))
    return Val(LitT("float"), fconst=_fold_float(op, a, b))


MAX_ALTERNATIVES = 64


def _fold_alternatives(op: str, kind: str, a: Val, b: Val) -> Val:
    """An operator on literals chosen at run time: each pair of their values, folded (up to
    MAX_ALTERNATIVES of them; beyond that the values are not tracked)."""
    pairs = [(x, y) for x in literal_values(a) for y in literal_values(b)]
    if len(pairs) > MAX_ALTERNATIVES:
        return Val(LitT(kind))
    folded = (_fold_pair(op, kind, x, y) for x, y in pairs)
    return choice_of(LitT(kind), *folded)


def _fold_float(op: str, a: Val, b: Val) -> float | None:
    x = a.fconst if a.fconst is not None else (a.const.as_int() if a.const is not None else None)
    y = b.fconst if b.fconst is not None else (b.const.as_int() if b.const is not None else None)
    if x is None or y is None:
        return None
    try:
        return {"+": x + y, "-": x - y, "*": x * y}.get(op, x / y if op == "/" and y else None)
    except OverflowError:
        return float("inf")


__all__ = ["ExprChecker", "ErrorT"]
