"""What a kernel's integer and bool values are, as the memory-safety checks see them.

The checks of `kernel_bounds.py` (E2131) and `kernel_cover.py` (E2132) need to know, at
each `load`, `store` and atomic, which positions it touches and where its mask holds.
This module reads a checked kernel body once and records every memory access
(`Access`) with what is known there.

Each integer scalar or integer tile is abstracted as one dimension expression (`Dim`,
the checker's own symbolic integers) over the kernel's generics and *run-time symbols*:

* `program_id(a)`, in `0 .. grid[a] - 1`;
* a loop counter `t#n` of `for t in lo..hi`, in `lo .. hi - 1` (its bounds may be
  run-time values, such as `0..diagonal`, as long as they are known expressions);
* `@k`, the position of an element along the value's own axis `k`: `iota(B)` is `@0`,
  in `0 .. B - 1`, and `program_id(0) * B + iota(B)` is `program_id(0)*B + @0`.

A tile's element is then a function of its positions, so combining tiles is renaming:
right-aligned broadcasting moves an operand's `@k` to the result's axis, a size-1 axis
reads position 0, and index notation (`let m[i, k] = rows[i] < M`) moves `rows`'s `@0`
to the axis of `i`. A value the analysis cannot follow (a loaded integer, a reduction,
a `var` changed in a loop) is unknown (`None`).

A bool value is a conjunction of comparisons (`Clause`s) that hold wherever it is true,
and whether they are *all* it says (`exact`): `rows[i] < M && ks[k] < K` is exact,
`a < b || c` says nothing. Proofs use what holds; coverage needs exactness. The values
and their arithmetic are in `kernel_domain.py`; this module is the walk over a body.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..syntax import tree as t
from .dim_normal_form import Dim
from .dims import Facts
from .kernel_domain import (NEGATE, NEVER, UNKNOWN, Access, Bools, Clause, Computed, Index, Ints,
                            Other, Symbol, Value, aligned, call, choose, combine, index_of,
                            opaque, placed, position, rename, with_shape)
from .types import INTEGER, TensorT, Val, compile_time_int

@dataclass
class KernelValues:
    """The abstract values of one kernel body and the accesses it makes."""
    types: dict[int, Val]
    grid: tuple
    memory: dict[str, tuple]  # tensor parameter or result -> its extents
    facts: Facts  # the kernel's own: its `where` clauses, its generics non-negative
    scalars: tuple[str, ...] = ()  # integer scalar parameters: any value
    accesses: list[Access] = field(default_factory=list)
    computed: list[Computed] = field(default_factory=list)  # integer arithmetic and casts
    env: list[dict[str, Value]] = field(default_factory=lambda: [{}])
    symbols: list[Symbol] = field(default_factory=list)
    conditions: list[Clause] = field(default_factory=list)
    guarded: int = 0  # depth of `if`, `while` and loops of unknown bounds
    counters: int = 0
    frame: tuple = ()  # the shape of the index-notation statement being read

    # ----------------------------------------------------------------- statements
    def run(self, body: tuple) -> list[Access]:
        for axis, size in enumerate(self.grid):
            high = size - 1 if size is not None else None
            self.symbols.append(Symbol(f"program_id({axis})", Dim.const(0), high))
        for name in self.scalars:
            self.bind(name, Ints(Dim.sym(f"{name}#param"), ()))
        self.stmts(body)
        return self.accesses

    def stmts(self, body: tuple) -> None:
        for s in body:
            getattr(self, "stmt_" + type(s).__name__, self.stmt_other)(s)

    def stmt_other(self, s) -> None:
        """Statements that bind nothing an access reads (`return`, `yield`)."""

    def stmt_Let(self, s: t.Let) -> None:
        self.bind(s.name, self.expr(s.value))

    stmt_VarDecl = stmt_Let

    def stmt_Assign(self, s: t.Assign) -> None:
        value = self.expr(s.value)
        for scope in reversed(self.env):
            if s.name in scope:
                scope[s.name] = value
                return

    def stmt_LetTuple(self, s: t.LetTuple) -> None:
        self.expr(s.value)
        for name in s.names:
            self.bind(name, UNKNOWN)

    def stmt_LetIndex(self, s: t.LetIndex) -> None:
        axes = {ix.name: k for k, ix in enumerate(s.indices)}
        shape = self.shape_of(s)
        self.frame = shape
        self.bind(s.name, with_shape(self.element(s.value, axes), shape))

    def stmt_Effect(self, s: t.Effect) -> None:
        args = [a.value for a in s.args]
        for extra in args[1:]:
            self.expr(extra)
        mask = args[2] if len(args) > 2 else None
        self.access(s.kind, s, args[0], mask)

    def stmt_For(self, s: t.For) -> None:
        low, high = self.expr(s.lo), self.expr(s.hi)
        self.counters += 1
        name = f"{s.var}#{self.counters}"
        lo = low.expr if isinstance(low, Ints) else None
        hi = high.expr - 1 if isinstance(high, Ints) and high.expr is not None else None
        known = lo is not None and hi is not None
        self.loop(s.body, Symbol(name, lo, hi), {s.var: Ints(Dim.sym(name), ())}, known)

    def stmt_While(self, s: t.While) -> None:
        self.carry(s.body)
        cond = self.expr(s.cond)
        clauses = cond.clauses if isinstance(cond, Bools) and not cond.shape else ()
        self.loop(s.body, None, {}, False, clauses)

    def loop(self, body: tuple, counter: Symbol | None, names: dict, known: bool,
             clauses: tuple = ()) -> None:
        """A loop body: what it assigns is unknown inside it (it is carried) and after."""
        self.carry(body)
        self.env.append(dict(names))
        marks = len(self.symbols), len(self.conditions)
        if counter is not None:
            self.symbols.append(counter)
        self.conditions.extend(clauses)
        self.guarded += not known
        try:
            self.stmts(body)
        finally:
            self.guarded -= not known
            del self.symbols[marks[0]:], self.conditions[marks[1]:]
            self.env.pop()

    def carry(self, body: tuple) -> None:
        """Each integer scalar a loop assigns becomes a symbol for its value at the top
        of an iteration, and after the loop: one that only grows by non-negative steps
        (`start = start + B`) is at least its value before the loop, one that only
        shrinks at most; anything else the loop carries is unknown."""
        steps = _steps(body)
        for name in _assigned(body):
            before = self.lookup(name)
            if name not in steps or not isinstance(before, Ints) or before.expr is None \
                    or before.shape:
                self.rebind(name, UNKNOWN if not isinstance(before, Ints) else Ints(None, before.shape))
                continue
            signs = {self.sign(step) for step in steps[name]}
            self.counters += 1
            symbol = f"{name}#{self.counters}"
            low = before.expr if signs == {"+"} else None
            high = before.expr if signs == {"-"} else None
            self.symbols.append(Symbol(symbol, low, high))
            self.rebind(name, Ints(Dim.sym(symbol), ()))

    def sign(self, step: tuple[str, t.Expr]) -> str | None:
        """'+' for a step that adds a non-negative amount, '-' for one that subtracts it."""
        op, amount = step
        v = self.types.get(id(amount))
        d = compile_time_int(v) if v is not None else None
        if d is None or not self.facts.prove_nonnegative(d):
            return None
        return op

    def rebind(self, name: str, value: Value) -> None:
        for scope in reversed(self.env):
            if name in scope:
                scope[name] = value
                return

    def forget_assigned(self, body: tuple) -> None:
        for name in _assigned(body):
            for scope in reversed(self.env):
                if name in scope:
                    scope[name] = UNKNOWN
                    break

    def bind(self, name: str, value: Value) -> None:
        self.env[-1][name] = value

    def lookup(self, name: str) -> Value | None:
        for scope in reversed(self.env):
            if name in scope:
                return scope[name]
        return None

    # ----------------------------------------------------------------- expressions
    def shape_of(self, node) -> tuple:
        v = self.types.get(id(node))
        return tuple(v.type.dims) if v is not None and isinstance(v.type, TensorT) else ()

    def expr(self, e: t.Expr) -> Value:
        v = self.types.get(id(e))
        if v is not None and compile_time_int(v) is not None:
            return Ints(v.const, ())
        method = getattr(self, "expr_" + type(e).__name__, None)
        value = method(e) if method is not None else Other(self.shape_of(e))
        self.note(e, value, self.shape_of(e))
        return value

    def note(self, e: t.Expr, value: Value, tile: tuple) -> None:
        """Record an integer that arithmetic or a cast computes, with what is in scope."""
        computes = isinstance(e, (t.Binary, t.Unary)) or (
            isinstance(e, t.Call) and e.callee == "cast")
        v = self.types.get(id(e))
        if not computes or not isinstance(value, Ints) or value.expr is None or v is None \
                or not isinstance(v.type, TensorT) or v.type.dtype not in INTEGER:
            return
        self.computed.append(Computed(e, value.expr, v.type.dtype, tile, tuple(self.symbols)))

    def expr_Name(self, e: t.Name) -> Value:
        found = self.lookup(e.id)
        return found if found is not None else UNKNOWN

    def expr_BoolLit(self, e: t.BoolLit) -> Value:
        return Bools(() if e.value else (NEVER,), True, ())

    def expr_Unary(self, e: t.Unary) -> Value:
        inner = self.expr(e.operand)
        if e.op == "-" and isinstance(inner, Ints) and inner.expr is not None:
            return Ints(-inner.expr, inner.shape)
        if e.op == "+":
            return inner
        if e.op == "!" and isinstance(inner, Bools) and inner.exact and len(inner.clauses) == 1:
            left, op, right = inner.clauses[0]
            return Bools(((left, NEGATE[op], right),), True, inner.shape)
        return Other(self.shape_of(e))

    def expr_Binary(self, e: t.Binary) -> Value:
        left, right = self.expr(e.left), self.expr(e.right)
        shape = self.shape_of(e)
        return combine(e.op, aligned(left, shape), aligned(right, shape), shape)

    def expr_Call(self, e: t.Call) -> Value:
        shape = self.shape_of(e)
        if e.callee == "program_id":
            axis = self.types.get(id(e.args[0].value))
            return Ints(Dim.sym(f"program_id({axis.const})"), ())
        if e.callee == "iota":
            return Ints(Dim.sym(position(0)), shape)
        if e.callee == "load":
            args = [a.value for a in e.args]
            for extra in args[1:]:
                self.expr(extra)
            self.access("load", e, args[0], args[1] if len(args) > 1 else None)
            return self.loaded(e, shape)
        args = [self.expr(a.value) for a in e.args]
        if e.callee == "select" and len(args) == 3:
            return choose(*(aligned(a, shape) for a in args), shape)
        return call(e.callee, [aligned(a, shape) for a in args], shape)

    def loaded(self, e: t.Call, shape: tuple) -> Value:
        """An integer loaded from memory: any value, one opaque symbol per element (its
        name lists the positions it depends on, so that placing it renames them)."""
        v = self.types.get(id(e))
        if v is None or not isinstance(v.type, TensorT) or v.type.dtype not in INTEGER:
            return Other(shape)
        self.counters += 1
        return Ints(Dim.sym(opaque(f"load#{self.counters}", len(shape))), shape)

    def expr_If(self, e: t.If) -> Value:
        cond = self.expr(e.cond)
        clauses = cond.clauses if isinstance(cond, Bools) and not cond.shape else ()
        negated = ()
        if isinstance(cond, Bools) and cond.exact and len(cond.clauses) == 1:
            left, op, right = cond.clauses[0]
            negated = ((left, NEGATE[op], right),)
        then = self.branch(e.then, clauses)
        orelse = self.branch(e.orelse, negated)
        return then if then == orelse else Other(self.shape_of(e))

    def branch(self, block: t.Block, clauses: tuple) -> Value:
        self.env.append({})
        mark = len(self.conditions)
        self.conditions.extend(clauses)
        self.guarded += 1
        try:
            self.stmts(block.stmts)
            return self.expr(block.value)
        finally:
            self.guarded -= 1
            del self.conditions[mark:]
            self.env.pop()

    def expr_Index(self, e: t.Index) -> Value:
        base = self.expr(e.base)
        at = [self.expr(i) for i in e.items if not isinstance(i, (t.Slice, t.PackIx, t.EllipsisIx))]
        if isinstance(base, Ints) and base.expr is not None and len(e.items) == len(base.shape):
            if len(at) == len(e.items) and all(isinstance(a, Ints) and a.expr is not None and not a.shape for a in at):
                return Ints(rename(base.expr, {k: a.expr for k, a in enumerate(at)}), ())
        return Other(self.shape_of(e))

    # ------------------------------------------------------------ index notation
    def element(self, e: t.Expr, axes: dict[str, int]) -> Value:
        """The element of an index-notation right side, positions on the output axes."""
        if isinstance(e, t.Index) and isinstance(e.base, t.Name) \
                and all(isinstance(i, t.IxVar) or isinstance(i, t.Name) for i in e.items):
            base = self.lookup(e.base.id)
            names = [i.name if isinstance(i, t.IxVar) else i.id for i in e.items]
            if base is not None and all(n in axes for n in names):
                return placed(base, [axes[n] for n in names])
        if isinstance(e, t.Binary):
            value = combine(e.op, self.element(e.left, axes), self.element(e.right, axes), ())
            self.note(e, value, self.frame)
            return value
        if isinstance(e, t.Unary):
            inner = self.element(e.operand, axes)
            if e.op == "!" and isinstance(inner, Bools) and inner.exact \
                    and len(inner.clauses) == 1:
                left, op, right = inner.clauses[0]
                return Bools(((left, NEGATE[op], right),), True, ())
            if e.op == "-" and isinstance(inner, Ints) and inner.expr is not None:
                return Ints(-inner.expr, ())
            return UNKNOWN
        if isinstance(e, t.Call) and e.callee in ("min", "max", "cast"):
            args = [self.element(a.value, axes) for a in e.args]
            return call(e.callee, args, ())
        if isinstance(e, (t.IntLit, t.Name, t.BoolLit)):
            return self.expr(e)
        return UNKNOWN

    # ------------------------------------------------------------------- accesses
    def access(self, kind: str, node, target: t.Expr, mask: t.Expr | None) -> None:
        if not isinstance(target, t.Index) or not isinstance(target.base, t.Name):
            return
        extents = self.memory.get(target.base.id)
        if extents is None or len(extents) != len(target.items):
            return
        indices, index_axes, tile = [], [], []
        for item in target.items:
            value = self.expr(item)
            shape = self.shape_of(item)
            first = len(tile)
            tile.extend(shape)
            index_axes.append(tuple(range(first, first + len(shape))))
            moved = placed(value, [first + k for k in range(len(shape))])
            indices.append(index_of(moved))
        clauses, exact = (), True
        if mask is not None:
            m = aligned(self.expr(mask), tuple(tile))
            clauses, exact = (m.clauses, m.exact) if isinstance(m, Bools) else ((), False)
        self.accesses.append(Access(
            kind, node, target.base.id, tuple(extents), tuple(target.items), tuple(indices),
            tuple(index_axes), tuple(tile), clauses, exact, tuple(self.symbols),
            tuple(self.conditions), self.guarded == 0))


def _steps(body: tuple) -> dict[str, list[tuple[str, t.Expr]]]:
    """For each name assigned in `body`, its steps when every assignment is `x = x + e`
    or `x = x - e`; names assigned any other way are left out."""
    steps: dict[str, list] = {}
    other: set[str] = set()
    for s in _assignments(body):
        v = s.value
        if isinstance(v, t.Binary) and v.op in "+-" and isinstance(v.left, t.Name) \
                and v.left.id == s.name:
            steps.setdefault(s.name, []).append((v.op, v.right))
        else:
            other.add(s.name)
    return {k: v for k, v in steps.items() if k not in other}


def _assignments(body: tuple) -> list[t.Assign]:
    found: list[t.Assign] = []
    for s in body:
        if isinstance(s, t.Assign):
            found.append(s)
        if isinstance(getattr(s, "body", None), tuple):
            found += _assignments(s.body)
    return found


def _assigned(body: tuple) -> set[str]:
    """The names a statement list assigns (`x = ...`), nested blocks included."""
    names: set[str] = set()
    for s in body:
        if isinstance(s, t.Assign):
            names.add(s.name)
        for inner in ("body",):
            if isinstance(getattr(s, inner, None), tuple):
                names |= _assigned(getattr(s, inner))
    return names
