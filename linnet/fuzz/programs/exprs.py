"""Type-directed expressions: given a dtype and a shape, build an expression of that type.

Why type-directed: every expression is well typed by construction (operands of one dtype,
shapes that provably broadcast, bools where bools go), so the checker's verdict is an
assertion, not a filter. Each operation also computes its result's value facts (`Info`)
from its operands' and refuses what would overflow, divide by zero or leave a function's
domain: then a plainer operation is written instead.

The same generator writes element expressions inside index notation (`indices` set): its
leaves are then accesses `x[i, k]` naming every axis with an index of that extent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ... import prims
from ...syntax import tree as t
from .scope import Gen, Param, Scope, Var
from .types import (BITS, BOOL_INFO, DType, Dim, Info, Ty, abs_info, add_info, broadcast,
                    broadcasts_into, dt, fits, lit_dim, mul_info, neg_info, settle)

COMPARE = ("==", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class E:
    """A generated expression: its tree, type and value facts. `untyped`: a bare literal,
    whose dtype comes from the other operand (it never stands alone)."""
    node: t.Expr
    ty: Ty
    info: Info
    untyped: bool = False


def call(name: str, *args: t.Expr, generics: tuple | None = None, **named: t.Expr) -> t.Call:
    arglist = tuple(t.Arg(a) for a in args) + tuple(t.Arg(v, k) for k, v in named.items())
    return t.Call(name, generics, arglist)


def float_lit(value: float) -> t.Expr:
    node = t.FloatLit(float(abs(value)))
    return t.Unary("-", node) if value < 0 else node


def int_lit(value: int) -> t.Expr:
    node = t.IntLit(abs(value))
    return t.Unary("-", node) if value < 0 else node


def shape_list(dims) -> t.ListExpr:
    return t.ListExpr(tuple(d.node for d in dims))


class Exprs:
    """Expressions over one scope (tensor mode), or over accesses (index mode)."""

    def __init__(self, g: Gen, scope: Scope, indices: dict[str, Dim] | None = None) -> None:
        self.g, self.scope, self.indices = g, scope, indices

    # ------------------------------------------------------------------ entry points

    def expr(self, dtype: DType, shape: tuple[Dim, ...], depth: int = 2) -> E:
        """A typed expression whose shape broadcasts to `shape` (index mode: a scalar)."""
        e = self._expr(dtype, shape, depth)
        return e if not e.untyped else self._typed(e, dtype, shape)

    def exact(self, dtype: DType, shape: tuple[Dim, ...], depth: int = 2) -> E:
        """An expression of exactly `shape` (a `broadcast_to` where the parts are smaller)."""
        e = self.expr(dtype, shape, depth)
        return self.widen(e, shape)

    def widen(self, e: E, shape: tuple[Dim, ...]) -> E:
        if e.ty.keys() == tuple(d.key for d in shape) or self.indices is not None:
            return e
        if self.scope.kernel:
            return e  # a store takes any tile that broadcasts, and a scalar
        if not self.g.has("broadcast_to") and self.g.has("fill") and not e.ty.dtype.is_bool:
            zero = self.leaf_fill(e.ty.dtype, shape, 0)
            return E(t.Binary("+", e.node, zero.node), Ty(shape, e.ty.dtype), e.info)
        self.g.count("broadcast_to")  # also when switched off: nothing else widens a bool
        return E(call("broadcast_to", e.node, shape_list(shape)), Ty(shape, e.ty.dtype), e.info)

    def _typed(self, e: E, dtype: DType, shape: tuple[Dim, ...]) -> E:
        """A literal made a value of `dtype`: added to a leaf of the type."""
        other = self.leaf(dtype, shape, literal=False)
        return self.arith("+", other, e) or other

    # ------------------------------------------------------------------ dispatch

    def _expr(self, dtype: DType, shape: tuple[Dim, ...], depth: int) -> E:
        if depth <= 0 or self.g.chance(0.25):
            return self.leaf(dtype, shape)
        if dtype.is_bool:
            return self.bool_expr(shape, depth)
        makers = [self.arith_expr] * 3 + [self.unary_expr]
        if self.g.has("select") and self.g.has_bool():
            makers.append(self.select_expr)
        if self.g.has("minmax"):
            makers.append(self.minmax_expr)
        if self.g.has("cast"):
            makers.append(self.cast_expr)
        if self.g.has("divide"):
            makers.append(self.divide_expr)
        if dtype.is_float and self.g.has("math"):
            makers += [self.math_expr] * 2
        if dtype.bitwise and self.g.has("bitwise"):
            makers.append(self.bitwise_expr)
        if dtype.bitwise and self.g.has("shift"):
            makers.append(self.shift_expr)
        return self.g.pick(makers)(dtype, shape, depth)

    def sub(self, dtype: DType, shape: tuple[Dim, ...], depth: int) -> tuple[Dim, ...]:
        """The shape an operand is drawn for: the whole target, or (broadcast) a suffix."""
        if self.indices is not None or not shape or not self.g.has("broadcast"):
            return shape
        if self.g.chance(0.75):
            return shape
        self.g.count("broadcast")
        cut = self.g.rng.randrange(len(shape) + 1)
        dims = list(shape[cut:])
        if dims and self.g.chance(0.3):
            dims[self.g.rng.randrange(len(dims))] = lit_dim(1)
        return tuple(dims)

    # ------------------------------------------------------------------ leaves

    def leaf(self, dtype: DType, shape: tuple[Dim, ...], literal: bool = True) -> E:
        """A variable, an access, a new parameter, a constant tensor or a literal."""
        if dtype.is_bool and not self.g.has_bool():
            return self.compare_expr(shape, 1)
        if literal and self.g.has("literal") and self.g.chance(0.2):
            return self.literal(dtype)
        found = self.atoms(dtype, shape)
        if found and (self.scope.root().params is None or self.g.chance(0.8)):
            full = [e for e in found if len(e.ty.dims) == len(shape)]
            return self.g.pick(full if full and self.g.chance(0.7) else found)
        if self.scope.root().params is not None and not self.scope.kernel:
            return self.new_param(dtype, self.param_shape(shape))
        if found:
            return self.g.pick(found)
        if self.indices is not None:
            return self.literal_typed(dtype)
        return self.leaf_fill(dtype, shape, self.small(dtype))

    def atoms(self, dtype: DType, shape: tuple[Dim, ...]) -> list[E]:
        out = []
        for v in self.scope.vars():
            if v.ty.dtype != dtype or not v.info.finite:
                continue
            if self.indices is None:
                if broadcasts_into(v.ty.dims, shape):
                    out.append(E(t.Name(v.name), v.ty, v.info))
            else:
                access = self.access(v)
                if access is not None:
                    out.append(access)
        return out

    def access(self, v: Var) -> E | None:
        """`v[i, j]` with indices of the axes' extents (a scalar variable as it is)."""
        scalar = Ty((), v.ty.dtype)
        if not v.ty.dims:
            return E(t.Name(v.name), scalar, v.info)
        items = []
        for d in v.ty.dims:
            names = [n for n, dom in self.indices.items() if dom.key == d.key]
            if not names:
                return None
            items.append(self.g.pick(names))
        if len(set(items)) < len(items):
            self.g.count("diagonal")
        node = t.Index(t.Name(v.name), tuple(t.Name(n) for n in items))
        return E(node, scalar, v.info)

    def param_shape(self, shape: tuple[Dim, ...]) -> tuple[Dim, ...]:
        if self.indices is not None:
            doms = list(self.indices.values())
            k = self.g.rng.randrange(min(len(doms), 2) + 1)
            return tuple(self.g.pick(doms) for _ in range(k))
        return self.sub(None, shape, 0)

    def new_param(self, dtype: DType, shape: tuple[Dim, ...]) -> E:
        name = self.g.fresh("p")
        style, info = param_facts(self.g, dtype)
        var = Var(name, Ty(tuple(shape), dtype), info)
        self.scope.root().params.append(Param(var, style))
        self.scope.root().add(var)
        self.g.count(f"dtype:{dtype.name}")
        if self.indices is None:
            return E(t.Name(name), var.ty, info)
        return self.access(var) or E(t.Name(name), var.ty, info)

    def literal(self, dtype: DType) -> E:
        value = self.small(dtype)
        if dtype.is_bool:
            return E(t.BoolLit(bool(value)), Ty((), dtype), BOOL_INFO, untyped=False)
        if dtype.is_float:
            return E(float_lit(value), Ty((), dtype), Info(value, value, 2, True), True)
        return E(int_lit(value), Ty((), dtype), Info(value, value), True)

    def literal_typed(self, dtype: DType) -> E:
        """A typed scalar constant: `cast<T>(lit)` works in every context."""
        e = self.literal(dtype)
        if not e.untyped:
            return e
        node = call("cast", e.node, generics=(t.Name(dtype.text),))
        self.g.count("cast")
        return E(node, Ty((), dtype), e.info)

    def small(self, dtype: DType):
        if dtype.is_bool:
            return self.g.chance(0.5)
        if dtype.is_float:
            return self.g.pick([0.5, 1.0, 2.0, -1.5, 0.25, 3.0, -0.75])
        if not dtype.signed:
            return self.g.rng.randrange(0, 8)
        return self.g.rng.randrange(-4, 7)

    def leaf_fill(self, dtype: DType, shape: tuple[Dim, ...], value) -> E:
        if dtype.is_bool:
            lit, info = t.BoolLit(bool(value)), BOOL_INFO
        elif dtype.is_float:
            lit, info = float_lit(float(value)), Info(float(value), float(value), 2, True)
        else:
            lit, info = int_lit(int(value)), Info(int(value), int(value))
        if self.indices is not None or not shape or not self.g.has("fill") or self.scope.kernel:
            return self.literal_typed(dtype)  # a kernel's expression is also its op's
        self.g.count("fill")
        node = call("fill", shape_list(shape), lit, generics=(t.Name(dtype.text),))
        return E(node, Ty(tuple(shape), dtype), info)

    # ------------------------------------------------------------------ arithmetic

    def arith_expr(self, dtype: DType, shape, depth) -> E:
        a = self._expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        b = self._expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        if a.untyped and b.untyped:
            b = self.leaf(dtype, shape, literal=False)
        op = self.g.pick(["+", "-", "*"])
        return self.arith(op, a, b) or self.arith("+", a, b) or self.pick_one(a, b)

    def pick_one(self, a: E, b: E) -> E:
        return b if a.untyped else a

    def arith(self, op: str, a: E, b: E) -> E | None:
        """`a op b`, or None when it could overflow (unless wrapping is the point)."""
        dtype = a.ty.dtype if not a.untyped else b.ty.dtype
        if op == "-" and not dtype.signed and a.info.lo < b.info.hi:
            return None
        info = {"+": lambda: add_info(a.info, b.info), "-": lambda: add_info(a.info, b.info, -1),
                "*": lambda: mul_info(a.info, b.info)}[op]()
        info = settle(info, dtype)
        if not fits(info, dtype):
            if not self.wraps(dtype, op):
                return None
            lo, hi = dt(dtype.name).bounds()
            info = Info(lo, hi)
        self.g.count(f"arith:{op}")
        return self.binary(op, a, b, dtype, info)

    def wraps(self, dtype: DType, op: str) -> bool:
        """Integer `+ - *` wrap (docs/language.md, "Types and generics"): sometimes that is
        the point."""
        if not (dtype.is_int and BITS[dtype.name] <= 32 and op in "+-*"):
            return False
        if not self.g.has("wrap") or not self.g.chance(0.3):
            return False
        self.g.count("wrap")
        return True

    def binary(self, op: str, a: E, b: E, dtype: DType, info: Info) -> E:
        dims = broadcast(a.ty.dims, b.ty.dims)
        assert dims is not None, (a, b)
        return E(t.Binary(op, a.node, b.node), Ty(dims, dtype), info, a.untyped and b.untyped)

    def unary_expr(self, dtype: DType, shape, depth) -> E:
        a = self._expr(dtype, shape, depth - 1)
        if dtype.signed and self.g.chance(0.5):
            info = neg_info(a.info)
            if fits(info, dtype):
                self.g.count("neg")
                return E(t.Unary("-", a.node), a.ty, info, a.untyped)
        if a.untyped:
            return a
        info = abs_info(a.info)
        if not fits(info, dtype):
            return a
        self.g.count("abs")
        return E(call("abs", a.node), a.ty, info)

    def minmax_expr(self, dtype: DType, shape, depth) -> E:
        a = self._expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        b = self._expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        if a.untyped and b.untyped:
            b = self.leaf(dtype, shape, literal=False)
        return self.minmax(self.g.pick(["min", "max"]), a, b)

    def minmax(self, fn: str, a: E, b: E) -> E:
        pick = min if fn == "min" else max
        info = Info(pick(a.info.lo, b.info.lo), pick(a.info.hi, b.info.hi),
                    _frac(a.info, b.info), a.info.same and b.info.same)
        self.g.count(f"minmax:{fn}")
        dtype = a.ty.dtype if not a.untyped else b.ty.dtype
        dims = broadcast(a.ty.dims, b.ty.dims)
        return E(call(fn, a.node, b.node), Ty(dims, dtype), info)

    def select_expr(self, dtype: DType, shape, depth) -> E:
        c = self.bool_expr(self.sub(dtype, shape, depth), depth - 1)
        a = self._expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        b = self._expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        if a.untyped and b.untyped:
            b = self.leaf(dtype, shape, literal=False)
        dims = broadcast(broadcast(c.ty.dims, a.ty.dims), b.ty.dims)
        self.g.count("select")
        return E(call("select", c.node, a.node, b.node), Ty(dims, dtype), a.info.join(b.info))

    def divide_expr(self, dtype: DType, shape, depth) -> E:
        a = self.expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        d = self.positive(self._expr(dtype, self.sub(dtype, shape, depth), depth - 1))
        if d is None:
            return a
        if dtype.is_float and self.g.chance(0.2) and a.info.lo >= 0:
            self.g.count("arith:%")
            info = settle(Info(0, d.info.hi, _frac(a.info, d.info), a.info.same and d.info.same),
                          dtype)
            return self.binary("%", a, d, dtype, info)
        if dtype.is_float:
            corners = [x / y for x in (a.info.lo, a.info.hi) for y in (d.info.lo, d.info.hi)]
            self.g.count("arith:/")
            return self.binary("/", a, d, dtype, Info(min(corners), max(corners), None, False))
        op = self.g.pick(["/", "%"])
        self.g.count(f"arith:{op}")
        if op == "/":
            info = Info(min(a.info.lo, 0), max(a.info.hi, 0))
        else:
            m = d.info.hi - 1
            info = Info(-m if a.info.lo < 0 else 0, m if a.info.hi > 0 else 0)
        return self.binary(op, a, d, dtype, info)

    def positive(self, d: E) -> E | None:
        """`d` made positive: as it is, or `abs(d) + 1` (at least 1 everywhere)."""
        if d.info.lo >= 1:
            return d
        if d.untyped:
            return self.literal_positive(d.ty.dtype)
        base = E(call("abs", d.node), d.ty, abs_info(d.info)) if d.ty.dtype.signed else d
        one = E(float_lit(1.0) if d.ty.dtype.is_float else t.IntLit(1), Ty((), d.ty.dtype),
                Info(1, 1), True)
        e = self.arith("+", base, one)
        return e if e is not None and e.info.lo >= 1 else None

    def literal_positive(self, dtype: DType) -> E:
        v = self.g.rng.randrange(1, 6)
        node = float_lit(float(v)) if dtype.is_float else t.IntLit(v)
        return E(node, Ty((), dtype), Info(v, v, 0, True), True)

    def math_expr(self, dtype: DType, shape, depth) -> E:
        """A float function of the table (`generated_math`), its operand made one it takes."""
        a = self.expr(dtype, shape, depth - 1)
        fn = self.g.pick(list(generated_math()))
        how = prims.PRIMS[fn].generated
        a = self.math_operand(a, how)
        if a is None:
            return self.leaf(dtype, shape)
        info = math_info(a.info, how)
        if not fits(info, dtype):
            return a
        self.g.count(f"math:{fn}")
        return E(call(fn, a.node), a.ty, info)

    def math_operand(self, a: E, how: prims.Generated) -> E | None:
        """`a` made an operand in the function's domain (None: no such operand here)."""
        lo, hi = a.info.lo, a.info.hi
        if how.within is not None and (lo < how.within[0] or hi > how.within[1]):
            self.g.count("abs")
            return E(t.Unary("-", call("abs", a.node)), a.ty, Info(-a.info.mag, 0, None, False))
        if how.domain == "any" or lo > 0:
            return a
        if how.domain == "nonnegative" and not self.g.config.grad:
            return E(call("abs", a.node), a.ty, abs_info(a.info))
        return self.positive(a)

    def bitwise_expr(self, dtype: DType, shape, depth) -> E:
        a = self.expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        b = self.expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        op = self.g.pick(["&", "|", "^"])
        if a.info.lo >= 0 and b.info.lo >= 0:
            top = (1 << int(max(a.info.hi, b.info.hi)).bit_length()) - 1
            info = Info(0, min(a.info.hi, b.info.hi) if op == "&" else top)
        else:
            bits = int(max(a.info.mag, b.info.mag)).bit_length()
            info = Info(-(1 << bits), (1 << bits) - 1)
        if not fits(info, dtype):
            return a
        self.g.count(f"bitwise:{op}")
        return self.binary(op, a, b, dtype, info)

    def shift_expr(self, dtype: DType, shape, depth) -> E:
        a = self.expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        n = self.expr(dtype, self.sub(dtype, shape, depth), depth - 2)
        count = E(t.Binary("&", n.node, t.IntLit(3)), n.ty, Info(0, 3))
        fn = self.g.pick(["shl", "shr"])
        if fn == "shl":
            info = mul_info(a.info, Info(1, 8))
            if not fits(info, dtype):
                fn = "shr"
        if fn == "shr":
            info = Info(min(a.info.lo, 0), max(a.info.hi, 0))
        self.g.count(f"shift:{fn}")
        dims = broadcast(a.ty.dims, n.ty.dims)
        return E(call(fn, a.node, count.node), Ty(dims, dtype), info)

    # ------------------------------------------------------------------ casts

    def cast_expr(self, dtype: DType, shape, depth) -> E:
        sources = [d for d in self.g.numeric_dtypes() if d != dtype]
        if self.g.has_bool() and not dtype.is_bool:
            sources.append(dt("bool"))
        if not sources:
            return self.leaf(dtype, shape)
        src = self.g.pick(sources)
        a = self.expr(src, shape, depth - 1)
        return self.cast(a, dtype) or self.leaf(dtype, shape)

    def cast(self, a: E, dtype: DType) -> E | None:
        """`cast<dtype>(a)` when every backend converts it alike, else None."""
        src, info = a.ty.dtype, a.info
        if dtype.is_bool:
            if src.is_float and not info.same:
                return None
            info = BOOL_INFO
        elif src.is_bool:
            info = Info(0, 1)
        elif dtype.is_int:
            if src.is_float:
                if not info.same:
                    return None
                info = Info(math.trunc(info.lo), math.trunc(info.hi))
            if not fits(info, dtype):
                return None
        else:
            info = settle(Info(info.lo, info.hi, info.frac, info.same), dtype)
            if not fits(info, dtype):
                return None
        self.g.count("cast", f"cast:{src.name}->{dtype.name}")
        node = call("cast", a.node, generics=(t.Name(dtype.text),))
        return E(node, a.ty.with_dtype(dtype), info)

    # ------------------------------------------------------------------ bools

    def bool_expr(self, shape, depth) -> E:
        dtype = dt("bool")
        if not self.g.has_bool():  # no bool inputs: a comparison makes the bool
            return self.compare_expr(shape, max(depth, 1))
        makers = [self.compare_expr] * 3 if self.g.has("compare") else []
        if self.g.has("bitwise") or self.indices is not None or not shape:
            makers.append(self.logic_expr)
        if self.g.has("cast"):
            makers.append(lambda s, d: self.cast_expr(dtype, s, d))
        if depth <= 0 or not makers or self.g.chance(0.2):
            return self.leaf(dtype, shape)
        return self.g.pick(makers)(shape, depth)

    def compare_expr(self, shape, depth) -> E:
        dtype = self.g.pick(self.g.numeric_dtypes())
        a = self.expr(dtype, self.sub(dtype, shape, depth), depth - 1)
        if dtype.is_float and not a.info.same:
            a = self.leaf(dtype, shape, literal=False)
        b = self._expr(dtype, self.sub(dtype, shape, depth), depth - 2)
        if dtype.is_float and not b.info.same:
            b = self.literal(dtype)
        if dtype.is_float and not a.info.same:
            return self.leaf(dt("bool"), shape)
        op = self.g.pick(list(COMPARE))
        self.g.count("compare", f"compare:{op}")
        return self.binary(op, a, b, dt("bool"), BOOL_INFO)

    def logic_expr(self, shape, depth) -> E:
        a = self.bool_expr(self.sub(None, shape, depth), depth - 1)
        if self.g.chance(0.2) and (self.indices is not None or not a.ty.dims):
            self.g.count("logic:!")
            return E(t.Unary("!", a.node), a.ty, BOOL_INFO)
        b = self.bool_expr(self.sub(None, shape, depth), depth - 1)
        scalar = self.indices is not None or not (a.ty.dims or b.ty.dims)
        op = self.g.pick(["&&", "||"] if scalar and self.g.chance(0.6) else ["&", "|", "^"])
        self.g.count(f"logic:{op}")
        return self.binary(op, a, b, dt("bool"), BOOL_INFO)


def generated_math() -> tuple[str, ...]:
    """The float functions the generator writes: the rows of `linnet.prims` of family
    "math" that say how (`generated`), in table order."""
    return tuple(name for name, row in prims.PRIMS.items()
                 if row.family == "math" and row.generated is not None)


def math_info(info: Info, how: prims.Generated) -> Info:
    """The bounds of a float function's result, from its operand's."""
    if how.bound is None:
        return Info(*how.values, None, False)
    ends = (how.bound(info.lo), how.bound(info.hi))
    lo, hi = ends[::-1] if how.decreasing else ends
    return Info(lo, hi, None, False)


def _frac(a: Info, b: Info) -> int | None:
    return None if a.frac is None or b.frac is None else max(a.frac, b.frac)


def param_facts(g: Gen, dtype: DType) -> tuple[str, Info]:
    """How a new parameter's input is drawn, and the facts that gives."""
    if dtype.is_bool:
        return "bool", BOOL_INFO
    if dtype.is_float:
        style = g.pick(["random", "random", "ints", "dyadic"] if g.config.grad
                       else ["ints", "ints", "dyadic", "random"])
        return style, {"ints": Info(-4, 4, 0, True), "dyadic": Info(-2, 2, 2, True),
                       "random": Info(-2, 2, None, True)}[style]
    if not dtype.signed:
        return "ints", Info(0, g.pick([3, 9, 15]))
    m = g.pick([3, 5, 9])
    return "ints", Info(-m, m)
