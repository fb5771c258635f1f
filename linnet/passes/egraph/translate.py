"""The translation of `egraph-tiles`: a kernel's integer and boolean bindings as terms.

* integer (i32/i64) literals are constants; `add`, `sub`, `mul` are terms, `min` and `max`
  are `smaller` and `larger`; integer casts are `narrow(x)`; `broadcast_to` and `fill` keep their operand's term;
* symbols: an `iota` of length n is `iota{n}@-1` with bounds 0..n-1, `program_id(a)` is
  `pid{a}` with bounds 0..grid[a]-1, a loop index is `v:NAME` with bounds lo..hi-1
  (with run-time bounds, `Ix.counter("v:NAME", lo, hi)` over the bounds' terms);
  anything else (a loaded value, a scalar parameter, a carried variable) is an opaque
  `v:NAME` without bounds;
* `lt`, `gt`, `le`, `ge` of integer terms and `and`, `or`, `not` of booleans are masks.

A term describes the element of a tile at an index, so a tile symbol names the axis it
varies along, counted from the right (`iota128@-2` is an iota down the rows of a 2-D
tile): broadcasting aligns axes on the right and keeps the names, and a `reshape` that
only adds or drops axes of size 1 renames them. (Any other reshape, and any reshape of
an opaque tile, is a new opaque symbol.) So two offsets of one type with one normal form
are the same tile, which `egraph-tiles` uses to merge them.
"""

from __future__ import annotations

from ...ir import tensor as ir
from ..traverse import expr_blocks

try:
    from egglog import get_callable_args, get_callable_fn, get_literal_value

    from ...rules.terms import (FALSE, TRUE, Ix, Mask, both, either, larger, lt, narrow, negate,
                                quot, rem, smaller)
except ImportError:  # pragma: no cover
    pass

INTS = ("i32", "i64")
# IR integer ops of two operands and their terms (`/` and `%` are the IR's truncating ones)
_BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "min": lambda a, b: smaller(a, b), "max": lambda a, b: larger(a, b),
           "div": lambda a, b: quot(a, b), "mod": lambda a, b: rem(a, b)}
MEMORY = ("load", "store", "atomic_add", "atomic_max", "atomic_min")


class Translate:
    """IR bindings of a kernel body -> terms; where each variable is defined."""

    def __init__(self, f: ir.Func) -> None:
        self.grid = f.launch.grid if f.launch is not None else ()
        self.ints: dict[ir.Var, Ix] = {}
        self.masks: dict[ir.Var, Mask] = {}   # mask-valued bindings worth deciding
        self.bools: dict[ir.Var, Mask] = {}   # every boolean binding's term
        self.symbols: dict[tuple, Ix] = {}
        self.opaque_tiles: set[str] = set()   # names of opaque symbols that are tiles
        self.offsets: list[ir.Var] = []
        self.where: dict[ir.Var, tuple[tuple[int, ...], int]] = {}  # block path, position
        self._path: tuple[int, ...] = ()
        self._count = 0

    def roots(self):
        yield from self.masks.values()
        for v in self.offsets:
            if v in self.ints:
                yield self.ints[v]

    def block(self, b: ir.Block) -> None:
        outer, self._path = self._path, self._path + (id(b),)
        for bind in b.binds:
            self._count += 1
            self.where[bind.var] = (self._path, self._count)
            self.bind(bind.var, bind.expr)
        self._path = outer

    def dominates(self, a: ir.Var, b: ir.Var) -> bool:
        """Is `a` in scope wherever `b` is (defined before it, in its block or outside)?"""
        (pa, na), (pb, nb) = self.where[a], self.where[b]
        return na < nb and pb[:len(pa)] == pa

    def symbol(self, name: str, low: int | None = None, high: int | None = None) -> Ix:
        """A symbol: `iota{n}` and `pid{a}`, or `v:NAME` for a variable (so no IR name can
        collide with the others); ranged when its bounds are known. Made once per name."""
        key = (name, low, high)
        if key not in self.symbols:
            known = low is not None and high is not None and low <= high
            self.symbols[key] = Ix.ranged(name, low, high) if known else Ix.sym(name)
        return self.symbols[key]

    def int_of(self, a: ir.Atom) -> Ix | None:
        if isinstance(a, ir.Lit):
            if a.type.dtype in INTS and not isinstance(a.value, bool):
                return Ix(int(a.value))
            return None
        return self.ints.get(a)

    def bool_of(self, a: ir.Atom) -> Mask | None:
        if isinstance(a, ir.Lit):
            return TRUE if a.value is True else FALSE if a.value is False else None
        return self.bools.get(a)

    def bind(self, var: ir.Var, e: ir.Expr) -> None:
        if isinstance(e, ir.Loop):
            self.counter(e)
        for b in expr_blocks(e):
            self.block(b)
        if not isinstance(var.type, ir.TType):
            return
        dtype = var.type.dtype
        if dtype in INTS:
            term = self.int_expr(e) if isinstance(e, (ir.Prim, ir.Var, ir.Lit)) else None
            if term is None:
                term = self.symbol(f"v:{var.name}")
                if var.type.shape:
                    self.opaque_tiles.add(f"v:{var.name}")
            self.ints[var] = term
        elif dtype == "bool":
            term = self.bool_expr(e) if isinstance(e, (ir.Prim, ir.Var, ir.Lit)) else None
            if term is None:
                self.bools[var] = Mask.sym(f"v:{var.name}")
            else:
                self.bools[var] = term
                if isinstance(e, ir.Prim):
                    self.masks[var] = term
        if isinstance(e, ir.Prim) and e.op in MEMORY and isinstance(e.args[1], ir.Var):
            self.offsets.append(e.args[1])

    def counter(self, e: ir.Loop) -> None:
        """A loop counter's term: ranged lo..hi-1 for compile-time bounds; for run-time ones
        `Ix.counter` over the bounds' terms, whose intervals give the counter's."""
        var = e.index
        if not isinstance(var.type, ir.TType) or var.type.dtype not in INTS:
            return
        if e.static:
            self.ints[var] = self.symbol(f"v:{var.name}", e.lo, e.hi - 1)
            return
        low, high = (Ix(b) if isinstance(b, int) else self.ints.get(b) for b in (e.lo, e.hi))
        if low is None or high is None:  # pragma: no cover - every i64 binding has a term
            self.ints[var] = self.symbol(f"v:{var.name}")
            return
        self.ints[var] = Ix.counter(f"v:{var.name}", low, high)

    def int_expr(self, e: ir.Expr) -> Ix | None:
        if not isinstance(e, ir.Prim):
            return self.int_of(e)
        args = [self.int_of(a) for a in e.args]
        if e.op == "iota":
            n = e.type.shape[0]
            return self.symbol(f"iota{n}@-1", 0, n - 1)
        if e.op == "program_id":
            axis = int(e.attr("axis"))
            if axis < len(self.grid):
                return self.symbol(f"pid{axis}", 0, self.grid[axis] - 1)
            return None
        if None in args:
            return None
        binary = _BINARY.get(e.op)
        if binary is not None:
            return binary(args[0], args[1])
        if e.op in ("broadcast_to", "fill"):
            return args[0]
        if e.op == "reshape":
            axes = _renamed_axes(e.args[0].type.shape, e.type.shape)
            return None if axes is None else self.relabel(args[0], axes)
        if e.op == "cast":
            return narrow(args[0])
        return None

    def relabel(self, term: Ix, axes: dict[int, int]) -> Ix | None:
        """The term with its tile symbols moved to other axes; None if one cannot move."""
        fn, args = get_callable_fn(term), get_callable_args(term)
        if fn == Ix:
            return term
        if fn == Ix.counter:
            return term  # a scalar
        if fn in (Ix.sym, Ix.ranged):
            name = get_literal_value(args[0])
            if name in self.opaque_tiles:
                return None
            if not name.startswith("iota"):
                return term  # a scalar: pid, a loop index, a scalar parameter
            n, axis = name[4:].split("@")
            if int(n) == 1:
                return term  # always 0, along any axis
            if int(axis) not in axes:
                return None
            return self.symbol(f"iota{n}@{axes[int(axis)]}", 0, int(n) - 1)
        inner = [self.relabel(a, axes) for a in args]
        return None if None in inner else fn(*inner)

    def bool_expr(self, e: ir.Expr) -> Mask | None:
        if not isinstance(e, ir.Prim):
            return self.bool_of(e)
        if e.op in ("lt", "gt", "le", "ge"):
            x, y = (self.int_of(a) for a in e.args)
            if x is None or y is None:
                return None
            return {"lt": lambda: lt(x, y), "gt": lambda: lt(y, x),
                    "le": lambda: negate(lt(y, x)), "ge": lambda: negate(lt(x, y))}[e.op]()
        args = [self.bool_of(a) for a in e.args]
        if None in args or not args:
            return None
        if e.op == "and":
            return both(args[0], args[1])
        if e.op == "or":
            return either(args[0], args[1])
        if e.op == "not":
            return negate(args[0])
        if e.op in ("reshape", "broadcast_to", "fill"):
            return args[0]
        return None




def _renamed_axes(old: tuple[int, ...], new: tuple[int, ...]) -> dict[int, int] | None:
    """For a reshape that only adds or drops axes of size 1: each axis of size > 1, counted
    from the right, to its place in the new shape; None for any other reshape."""
    keep_old = [k - len(old) for k, n in enumerate(old) if n != 1]
    keep_new = [k - len(new) for k, n in enumerate(new) if n != 1]
    if [old[k] for k in keep_old] != [new[k] for k in keep_new]:
        return None
    return dict(zip(keep_old, keep_new))
