"""The values a kernel's memory-safety checks follow, and their arithmetic.

An integer scalar or tile is one `Dim` over the kernel's generics and run-time symbols
(`Ints`), a bool one a conjunction of comparisons that hold where it is true (`Bools`),
an integer `select` both of its sides and the condition between them (`Chosen`). A tile's
element is a function of its positions `@k`, so broadcasting and index notation are
renamings of positions (`aligned`, `placed`). `kernel_values.py` walks a body with them
and records each memory access as an `Access`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..syntax import tree as t
from .dim_normal_form import Dim

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


@dataclass(frozen=True)
class Computed:
    """An integer a kernel computes by arithmetic or a cast (`kernel_wrap.py` proves it
    fits its dtype): its element `value` over the positions of a tile of sizes `tile`,
    and the symbols in scope where it is computed (`context`)."""
    node: t.Expr
    value: Dim
    dtype: str
    tile: tuple
    context: tuple[Symbol, ...]


# ------------------------------------------------------------------ value algebra

Index = Dim | Chosen | None
"""An index as the checks see it: an expression, a choice between two, or unknown."""


def index_of(v: Value) -> Index:
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
            return with_shape(right, shape)
        if NEVER in right.clauses:
            return with_shape(left, shape)
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
        return with_shape(args[0], shape)
    if any(isinstance(a, Ints) for a in args) and callee in ("min", "max", "cast", "abs"):
        return Ints(None, shape)
    return Other(shape)


def aligned(v: Value, shape: tuple) -> Value:
    """`v` broadcast right-aligned onto a value of `shape`: its axes move right, and a
    size-1 axis that meets a longer one reads position 0."""
    own = v.shape
    if own == tuple(shape) or not own:
        return with_shape(v, shape) if not own else v
    offset = len(shape) - len(own)
    if offset < 0:
        return v
    places = []
    for k, size in enumerate(own):
        places.append(None if is_one(size) and not is_one(shape[offset + k]) else offset + k)
    return with_shape(placed(v, places), shape)


def placed(v: Value, places: list) -> Value:
    """`v` with its axis k moved to axis `places[k]` (None: it reads position 0)."""
    env = {k: (Dim.const(0) if p is None else Dim.sym(position(p)))
           for k, p in enumerate(places)}
    if isinstance(v, Ints):
        return Ints(rename(v.expr, env) if v.expr is not None else None, ())
    if isinstance(v, Bools):
        clauses = tuple((rename(l, env), op, rename(r, env)) for l, op, r in v.clauses)
        return Bools(clauses, v.exact, ())
    if isinstance(v, Chosen):
        return Chosen(placed(v.cond, places), placed(v.then, places),
                      placed(v.orelse, places), ())
    return Other()


def with_shape(v: Value, shape: tuple) -> Value:
    if isinstance(v, Ints):
        return Ints(v.expr, tuple(shape))
    if isinstance(v, Bools):
        return Bools(v.clauses, v.exact, tuple(shape))
    if isinstance(v, Chosen):
        return Chosen(v.cond, v.then, v.orelse, tuple(shape))
    return Other(tuple(shape))


def is_one(size) -> bool:
    return isinstance(size, Dim) and size.as_int() == 1
