"""fold-constants: tensor-core -> tensor-core, with literal arithmetic evaluated.

Three rewrites, each exact under the semantics of docs/language.md:

- A prim of rank-0 literals is evaluated and its uses read the literal.
  Integers wrap at their width; integer `/` and `%` truncate toward zero;
  float results are the exact result rounded once to the dtype (computed in
  f64, which rounds +, -, *, / and sqrt of narrower floats correctly);
  float-to-int casts truncate. What the language leaves open is not folded:
  division or remainder by a literal zero, float `%`, shifts by a negative
  or too-large amount, float-to-int casts out of range, and the
  transcendental functions (exp, log, ...), whose last bit differs between
  backends' math libraries.
- Identities whose result has x's exact type: `x + 0`, `x - 0`, `x * 1`,
  `x / 1`, `x && true`, `x || false`, `select(literal, a, b)`, a cast,
  reshape or broadcast to x's own type, and a permute by the identity (a
  square tensor transposed keeps its type, not its values). For floats
  `x + 0.0` is not `x` (it turns -0.0 into +0.0), so only `x + -0.0` and
  `x - 0.0` are folded.
- `If` on a literal condition becomes the chosen branch's bindings.

Bindings of a plain atom (`y = x`, `y = 3:i32`), which the rewrites create,
are propagated: uses of y read x. Which primitives fold, their exact meaning
on literals and their identities, are the `fold` of their rows in
`linnet.prims` (`linnet/prims/folds.py`); this pass wraps and rounds the
results and holds the rules the rows name. Kernel memory prims (`load`,
`store`, the atomics) and `program_id` have none: they are not functions of
their operands alone.
"""

from __future__ import annotations

import math

import numpy as np

from ... import prims
from ...ir import tensor as ir
from ..traverse import Rewriter


def fold_constants(program: ir.Program) -> ir.Program:
    """Evaluate literal arithmetic, drop identities, and fold ifs on literal conditions."""
    return _Fold().program(program)


class _Fold(Rewriter):
    def atom_expr(self, e: ir.Atom, bind: ir.Bind) -> ir.Expr | None:
        e = self.atom(e)
        if e.type != bind.var.type:
            return e
        self.replace_uses(bind.var, e)
        return None

    def prim(self, e: ir.Prim, bind: ir.Bind) -> ir.Expr | None:
        e = super().prim(e, bind)
        same = simplify(e)
        if same is None:
            return e
        self.replace_uses(bind.var, same)
        return None

    def if_(self, e: ir.If, bind: ir.Bind) -> ir.Expr | None:
        cond = self.atom(e.cond)
        if not isinstance(cond, ir.Lit):
            return super().if_(e, bind)
        chosen = e.then if cond.value else e.orelse
        for inner in chosen.binds:  # names are unique per function: inline as they are
            self.bind(inner)
        self.replace_uses(bind.var, self.atom(chosen.result))
        return None


def simplify(e: ir.Prim) -> ir.Atom | None:
    """An atom equal to `e` (a literal, or an operand), or None. What may be folded, and
    how, is the `fold` of the primitive's row in `linnet.prims`."""
    fold = _fold_of(e.op)
    if fold is None:
        return None
    if isinstance(e.type, ir.TType) and e.type.shape == () and e.args \
            and all(isinstance(a, ir.Lit) for a in e.args):
        value = evaluate(e.op, e.args, e.type.dtype)
        if value is not None:
            return ir.Lit(value, e.type)
    same = _identity(e, fold)
    return same if same is not None and same.type == e.type else None


def _fold_of(op: str) -> prims.Fold | None:
    row = prims.PRIMS.get(op)
    return None if row is None else row.fold


def _identity(e: ir.Prim, fold: prims.Fold) -> ir.Atom | None:
    """The operand an identity prim returns unchanged (type checked by the caller)."""
    if fold.unchanged:
        return UNCHANGED[fold.unchanged](e)
    if len(e.args) != 2:
        return None
    x, y = e.args
    if fold.right and UNITS[fold.right](y):
        return x
    if fold.left and UNITS[fold.left](x):
        return y
    return None


def _same_type(e: ir.Prim) -> ir.Atom | None:
    """A cast, reshape, broadcast or fill to the operand's own type changes nothing."""
    return e.args[0] if e.args[0].type == e.type else None


def _identity_perm(e: ir.Prim) -> ir.Atom | None:
    """A permute by the identity (a square tile transposed keeps its type, not its values)."""
    return e.args[0] if e.attr("perm") == tuple(range(len(e.type.shape))) else None


def _literal_condition(e: ir.Prim) -> ir.Atom | None:
    """`select(literal, a, b)`: the operand it picks."""
    c, a, b = e.args
    return (a if c.value else b) if isinstance(c, ir.Lit) else None


#: The rules a row's `Fold.unchanged` names.
UNCHANGED = {"same_type": _same_type, "identity_perm": _identity_perm,
             "literal_condition": _literal_condition}


def _lit(a: ir.Atom) -> bool:
    return isinstance(a, ir.Lit)


def _is_add_zero(a: ir.Atom) -> bool:
    """0 for integers; -0.0 for floats (x + +0.0 is +0.0 at x = -0.0)."""
    if not _lit(a) or a.value != 0 or a.type.dtype == "bool":
        return False
    return a.type.dtype not in FLOATS or math.copysign(1.0, a.value) < 0


def _is_sub_zero(a: ir.Atom) -> bool:
    """0 for integers; +0.0 for floats (x - +0.0 is x, -0.0 included)."""
    if not _lit(a) or a.value != 0 or a.type.dtype == "bool":
        return False
    return a.type.dtype not in FLOATS or math.copysign(1.0, a.value) > 0


def _is_one(a: ir.Atom) -> bool:
    return _lit(a) and a.type.dtype != "bool" and a.value == 1


def _is_true(a: ir.Atom) -> bool:
    return _lit(a) and a.type.dtype == "bool" and a.value is True


def _is_false(a: ir.Atom) -> bool:
    return _lit(a) and a.type.dtype == "bool" and a.value is False


#: The tests a row's `Fold.right` and `Fold.left` name: is the literal a unit of the op?
UNITS = {"add_zero": _is_add_zero, "sub_zero": _is_sub_zero, "one": _is_one,
         "true": _is_true, "false": _is_false}


# -------------------------------------------------------------- semantics

INT_BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
FLOATS = ("f16", "bf16", "f32", "f64")
_NP_FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}

Value = bool | int | float


def wrap(v: int, dtype: str) -> int:
    """v modulo 2^bits, as the dtype's two's-complement (or unsigned) value."""
    bits = INT_BITS[dtype]
    v &= (1 << bits) - 1
    return v - (1 << bits) if dtype[0] == "i" and v >> (bits - 1) else v


def round_float(v: float, dtype: str) -> float:
    """v rounded to nearest-even in a float dtype."""
    with np.errstate(over="ignore"):
        if dtype == "bf16":
            return round_bf16(v)
        return float(_NP_FLOAT[dtype](v))


def round_bf16(v: float) -> float:
    """v rounded to f32 and then to bf16, each to nearest-even, as torch converts a Python
    float to bf16 (and `ml_dtypes.bfloat16(np.float32(v))`).

    Done on the f32 bits, so compiling needs no bf16 library: importing ml_dtypes costs
    most of a second per process, more than compiling a binding."""
    with np.errstate(over="ignore"):
        f = np.float32(v)
    if f != f:
        return math.nan
    bits = int(f.view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # ties to the even bf16
    return float(np.uint32(bits).view(np.float32))


def _arg(a: ir.Lit) -> Value:
    """A literal's value as its dtype holds it."""
    d = a.type.dtype
    if d == "bool":
        return bool(a.value)
    if d in INT_BITS:
        return wrap(int(a.value), d)
    return round_float(float(a.value), d)


def evaluate(op: str, args: tuple[ir.Lit, ...], out: str) -> Value | None:
    """The value of a rank-0 prim of literals with result dtype `out`, or None to leave it:
    the row's `Fold` function for the operands' kind of dtype, its result wrapped to an
    integer dtype or rounded once to a float one."""
    fold = _fold_of(op)
    if fold is None:
        return None
    src = args[0].type.dtype
    vals = [_arg(a) for a in args]
    if fold.via:
        return VIA[fold.via](vals, src, out)
    if src == "bool":
        v = fold.bools(*vals) if fold.bools else None
    elif src in INT_BITS:
        v = fold.ints(*vals, INT_BITS[src]) if fold.ints else None
    else:
        v = fold.floats(*vals) if fold.floats else None
    if v is None:
        return None
    if out == "bool":
        return bool(v)
    if out in INT_BITS:
        return wrap(v, out)
    return None if src in FLOATS and src != out else round_float(v, out)


def _cast(vals: list[Value], src: str, out: str) -> Value | None:
    """The language's cast of a literal, where every backend casts it alike."""
    v = vals[0]
    if out == "bool":
        return v != 0
    if src == "bool":
        v = int(v)
    if out in INT_BITS:
        if isinstance(v, float):
            if not math.isfinite(v):
                return None
            v = math.trunc(v)
            lo = -(1 << (INT_BITS[out] - 1)) if out[0] == "i" else 0
            if not lo <= v < lo + (1 << INT_BITS[out]):
                return None  # out of range: not defined by the language
            return v
        return wrap(v, out)
    if isinstance(v, int) and out != "f64" and float(v) != v:
        return None  # int -> f64 -> narrower would round twice
    if src == "f64" and out == "bf16" and float(np.float32(v)) != v:
        return None  # f64 -> f32 -> bf16 would round twice
    return round_float(float(v), out)


#: The functions a row's `Fold.via` names: (operand values, operand dtype, result dtype).
VIA = {"cast": _cast}
