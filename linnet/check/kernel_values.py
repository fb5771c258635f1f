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
`a < b || c` says nothing. Proofs use what holds; coverage needs exactness.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..syntax import tree as t
from .dim_normal_form import Dim
from .dims import Facts
from .types import INTEGER, TensorT, Val, compile_time_int

Clause = tuple[Dim, str, Dim]
FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
NEGATE = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
NEVER: Clause = (Dim.const(0), ">=", Dim.const(1))  # the mask of `false`


def position(axis: int) -> str:
    """The run-time symbol of an element's position along axis `axis` of its value."""
    return f"@{axis}"


def opaque(name: str, rank: int) -> str:
    """The symbol of an unknown element of a rank-`rank` tile: `load#1[@0]`."""
    return name if not rank else f"{name}[{','.join(position(k) for k in range(rank))}]"


def rename(d: Dim, places: dict[int, Dim]) -> Dim:
    """`d` with each position `@k` replaced by `places[k]` (a position or 0), also inside
    the names of opaque elements (`load#1[@0]` becomes `load#1[@1]`)."""
    env: dict[str, Dim] = {position(k): p for k, p in places.items()}
    for name in d.symbols():
        if "[" in name:
            base, inner = name[:-1].split("[")
            parts = [str(env.get(part, part)) for part in inner.split(",")]
            env[name] = Dim.sym(f"{base}[{','.join(parts)}]")
    return d.substitute(env)


@dataclass(frozen=True)
class Ints:
    """An integer scalar or tile: its element as an expression (None: unknown)."""
    expr: Dim | None
    shape: tuple


@dataclass(frozen=True)
class Bools:
    """A bool scalar or tile: comparisons that hold where it is true; `exact` when they
    are all it says."""
    clauses: tuple[Clause, ...]
    exact: bool
    shape: tuple


@dataclass(frozen=True)
class Other:
    """A value the checks do not follow (floats, tuples, ...)."""
    shape: tuple = ()


@dataclass(frozen=True)
class Chosen:
    """`select(cond, then, orelse)` of integers: `then` where `cond` holds, else `orelse`."""
    cond: Bools
    then: Ints
    orelse: Ints
    shape: tuple


Value = Ints | Bools | Chosen | Other
UNKNOWN = Other()


@dataclass(frozen=True)
class Symbol:
    """A run-time symbol and the range it takes: `low <= name <= high` (None: unknown)."""
    name: str
    low: Dim | None
    high: Dim | None


@dataclass(frozen=True)
class Access:
    """One `load`, `store` or atomic, as the checks need it.

    `indices` holds each axis's index in the access's own frame (positions `@k` are the
    axes of the accessed tile, whose sizes are `tile`); `mask` the clauses where the
    access happens (its mask), `exact_mask` whether they are all the mask says (True when
    there is none); `context` the symbols in scope (program ids, loop counters) and
    `conditions` the branch conditions around it; `plain` when it sits in no `if` or
    `while` and in loops with known bounds only (so it runs for every program and every
    counter value: coverage can count on it).
    """
    kind: str
    node: t.Expr | t.Effect
    tensor: str
    extents: tuple
    index_nodes: tuple
    indices: tuple["Index", ...]
    index_axes: tuple[tuple[int, ...], ...]
    tile: tuple
    mask: tuple[Clause, ...]
    exact_mask: bool
    context: tuple[Symbol, ...]
    conditions: tuple[Clause, ...]
    plain: bool


@dataclass
class KernelValues:
    """The abstract values of one kernel body and the accesses it makes."""
    types: dict[int, Val]
    grid: tuple
    memory: dict[str, tuple]  # tensor parameter or result -> its extents
    facts: Facts  # the kernel's own: its `where` clauses, its generics non-negative
    scalars: tuple[str, ...] = ()  # integer scalar parameters: any value
    accesses: list[Access] = field(default_factory=list)
    env: list[dict[str, Value]] = field(default_factory=lambda: [{}])
    symbols: list[Symbol] = field(default_factory=list)
    conditions: list[Clause] = field(default_factory=list)
    guarded: int = 0  # depth of `if`, `while` and loops of unknown bounds
    counters: int = 0

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
        self.bind(s.name, _with_shape(self.element(s.value, axes), shape))

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
        return method(e) if method is not None else Other(self.shape_of(e))

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
        return combine(e.op, _aligned(left, shape), _aligned(right, shape), shape)

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
            return choose(*(_aligned(a, shape) for a in args), shape)
        return call(e.callee, [_aligned(a, shape) for a in args], shape)

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
                return _placed(base, [axes[n] for n in names])
        if isinstance(e, t.Binary):
            return combine(e.op, self.element(e.left, axes), self.element(e.right, axes), ())
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
            placed = _placed(value, [first + k for k in range(len(shape))])
            indices.append(_index_of(placed))
        clauses, exact = (), True
        if mask is not None:
            m = _aligned(self.expr(mask), tuple(tile))
            clauses, exact = (m.clauses, m.exact) if isinstance(m, Bools) else ((), False)
        self.accesses.append(Access(
            kind, node, target.base.id, tuple(extents), tuple(target.items), tuple(indices),
            tuple(index_axes), tuple(tile), clauses, exact, tuple(self.symbols),
            tuple(self.conditions), self.guarded == 0))


# ------------------------------------------------------------------ value algebra

Index = Dim | Chosen | None
"""An index as the checks see it: an expression, a choice between two, or unknown."""


def _index_of(v: Value) -> Index:
    if isinstance(v, Ints):
        return v.expr
    if isinstance(v, Chosen):
        return v
    return None


ARITH = {"+": Dim.__add__, "-": Dim.__sub__, "*": Dim.__mul__,
         "/": Dim.floordiv, "%": Dim.mod}


def combine(op: str, left: Value, right: Value, shape: tuple) -> Value:
    """`left op right` on values already placed on the result's axes."""
    if op in ARITH and isinstance(left, Ints) and isinstance(right, Ints):
        if left.expr is None or right.expr is None:
            return Ints(None, shape)
        return Ints(ARITH[op](left.expr, right.expr), shape)
    if op in FLIP:
        if isinstance(left, Ints) and isinstance(right, Ints) \
                and left.expr is not None and right.expr is not None:
            return Bools(((left.expr, op, right.expr),), True, shape)
        return Bools((), False, shape)
    if op in ("&&", "&") and isinstance(left, Bools) and isinstance(right, Bools):
        return Bools(left.clauses + right.clauses, left.exact and right.exact, shape)
    if op in ("&&", "&") and (isinstance(left, Bools) or isinstance(right, Bools)):
        known = left if isinstance(left, Bools) else right
        return Bools(known.clauses, False, shape)
    if op in ("||", "|") and isinstance(left, Bools) and isinstance(right, Bools):
        if NEVER in left.clauses:
            return _with_shape(right, shape)
        if NEVER in right.clauses:
            return _with_shape(left, shape)
        return Bools((), False, shape)
    if isinstance(left, Ints) or isinstance(right, Ints):
        return Ints(None, shape)
    if isinstance(left, Bools) or isinstance(right, Bools):
        return Bools((), False, shape)
    return Other(shape)


def choose(cond: Value, then: Value, orelse: Value, shape: tuple) -> Value:
    """`select` on integers keeps both sides and the condition between them."""
    if isinstance(cond, Bools) and isinstance(then, Ints) and isinstance(orelse, Ints):
        return Chosen(cond, then, orelse, shape)
    return Ints(None, shape) if isinstance(then, (Ints, Chosen)) else Other(shape)


def call(callee: str, args: list[Value], shape: tuple) -> Value:
    """A prelude call on values placed on the result's axes."""
    exprs = [a.expr if isinstance(a, Ints) else None for a in args]
    if callee in ("min", "max") and len(exprs) == 2 and None not in exprs:
        pick = Dim.minimum if callee == "min" else Dim.maximum
        return Ints(pick(exprs[0], exprs[1]), shape)
    if callee == "cast" and len(args) == 1 and isinstance(args[0], (Ints, Chosen)):
        return _with_shape(args[0], shape)
    if any(isinstance(a, Ints) for a in args) and callee in ("min", "max", "cast", "abs"):
        return Ints(None, shape)
    return Other(shape)


def _aligned(v: Value, shape: tuple) -> Value:
    """`v` broadcast right-aligned onto a value of `shape`: its axes move right, and a
    size-1 axis that meets a longer one reads position 0."""
    own = v.shape
    if own == tuple(shape) or not own:
        return _with_shape(v, shape) if not own else v
    offset = len(shape) - len(own)
    if offset < 0:
        return v
    places = []
    for k, size in enumerate(own):
        places.append(None if _is_one(size) and not _is_one(shape[offset + k]) else offset + k)
    return _with_shape(_placed(v, places), shape)


def _placed(v: Value, places: list) -> Value:
    """`v` with its axis k moved to axis `places[k]` (None: it reads position 0)."""
    env = {k: (Dim.const(0) if p is None else Dim.sym(position(p)))
           for k, p in enumerate(places)}
    if isinstance(v, Ints):
        return Ints(rename(v.expr, env) if v.expr is not None else None, ())
    if isinstance(v, Bools):
        clauses = tuple((rename(l, env), op, rename(r, env)) for l, op, r in v.clauses)
        return Bools(clauses, v.exact, ())
    if isinstance(v, Chosen):
        return Chosen(_placed(v.cond, places), _placed(v.then, places),
                      _placed(v.orelse, places), ())
    return Other()


def _with_shape(v: Value, shape: tuple) -> Value:
    if isinstance(v, Ints):
        return Ints(v.expr, tuple(shape))
    if isinstance(v, Bools):
        return Bools(v.clauses, v.exact, tuple(shape))
    if isinstance(v, Chosen):
        return Chosen(v.cond, v.then, v.orelse, tuple(shape))
    return Other(tuple(shape))


def _is_one(size) -> bool:
    return isinstance(size, Dim) and size.as_int() == 1


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
