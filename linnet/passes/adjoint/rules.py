"""Vector-Jacobian products of the tensor-core primitives, one short rule each.

A rule receives the emitter, the primitive `e`, its result variable `y` and the adjoint
`dy` (of y's type), and returns one entry per operand: None where the operand takes no
gradient, else a thunk that emits the operand's adjoint contribution. Thunks run only
for operands that depend on a floating input, so nothing is emitted for constants.

Elementwise rules may return an adjoint of the *result's* shape: the caller sums it back
to the operand's shape (`Emitter.sum_to`), which is the adjoint of numpy broadcasting.

Tie rules, chosen to agree with PyTorch's autograd:
- `max`/`min` (elementwise): where the operands are equal each gets half of `dy`.
- `reduce_max`/`reduce_min`: `dy` is shared evenly among the positions equal to the result.
- `abs` at 0: gradient 0 (`dy * sign(x)`, so an infinite `dy` gives NaN there, as in PyTorch).
`reduce_prod` is exact at zeros: with no zero in a slice the gradient is `y / x`; with one
zero, that position gets the product of the others and the rest 0; with more, all get 0.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from ...ir import tensor as ir
from ...prims import MATH, PRIMS
from .emit import BOOL, Emitter, is_float, lit

Thunk = Callable[[], ir.Atom]
Rule = Callable[[Emitter, ir.Prim, ir.Var, ir.Atom], Sequence[Optional[Thunk]]]


# ------------------------------------------------------------- arithmetic

def _add(em, e, y, dy):
    return (lambda: dy, lambda: dy)


def _sub(em, e, y, dy):
    return (lambda: dy, lambda: em.neg(dy))


def _mul(em, e, y, dy):
    a, b = e.args
    return (lambda: em.mul(dy, b), lambda: em.mul(dy, a))


def _div(em, e, y, dy):
    a, b = e.args
    return (lambda: em.div(dy, b), lambda: em.neg(em.div(em.mul(dy, y), b)))


def _mod(em, e, y, dy):
    """fmod: y = a - trunc(a / b) * b, and trunc(a / b) = (a - y) / b."""
    a, b = e.args
    return (lambda: dy,
            lambda: em.neg(em.mul(dy, em.div(em.elementwise("sub", a, y), b))))


def _min_max(em, e, y, dy):
    """The larger (max) or smaller (min) operand takes dy; at a tie each takes half."""
    a, b = e.args
    wins = "gt" if e.op == "max" else "lt"

    def side(x, other):
        zero, half = lit(0.0, dy.type.dtype), em.mul(dy, lit(0.5, dy.type.dtype))
        tie = em.select(em.compare("eq", x, other), half, zero)
        return em.select(em.compare(wins, x, other), dy, tie)
    return (lambda: side(a, b), lambda: side(b, a))


def _neg(em, e, y, dy):
    return (lambda: em.neg(dy),)


def _abs(em, e, y, dy):
    """dy times the sign of the operand (0 at 0), as a product, as PyTorch computes it: an
    infinite dy at 0 gives NaN rather than 0."""
    (a,) = e.args
    d = a.type.dtype
    zero, one = lit(0.0, d), lit(1.0, d)

    def grad():
        below = em.select(em.compare("lt", a, zero), lit(-1.0, d), zero)
        return em.mul(dy, em.select(em.compare("gt", a, zero), one, below))
    return (grad,)


def _select(em, e, y, dy):
    c = e.args[0]
    zero = lit(0.0, dy.type.dtype)
    return (None, lambda: em.select(c, dy, zero), lambda: em.select(c, zero, dy))


def _cast(em, e, y, dy):
    (a,) = e.args
    if not (is_float(a.type) and is_float(y.type)):
        return (None,)  # casts to or from integers and bools stop the gradient
    return (lambda: em.cast(dy, a.type.dtype),)


# ---------------------------------------------------------------- shapes

def _broadcast_to(em, e, y, dy):
    return (lambda: em.sum_to(dy, e.args[0].type),)


def _reshape(em, e, y, dy):
    return (lambda: em.reshape(dy, e.args[0].type.shape),)


def _permute(em, e, y, dy):
    perm = tuple(e.attr("perm"))
    inverse = tuple(perm.index(k) for k in range(len(perm)))
    (a,) = e.args
    return (lambda: em.prim("permute", (dy,), a.type, (("perm", inverse),)),)


def _concat(em, e, y, dy):
    """Each operand's adjoint is its slice of dy along the joined axis."""
    axis = e.attr("axis")
    thunks, offset = [], 0
    for a in e.args:
        n = a.type.shape[axis]
        items = tuple(("slice", 0, m, 1) for m in y.type.shape[:axis]) + (
            ("slice", offset, offset + n, 1),)
        thunks.append(lambda items=items, a=a: em.index(dy, items, a.type.shape))
        offset += n
    return tuple(thunks)


def _index(em, e, y, dy):
    """A scatter: dy's values spread back to the positions the items picked, zeros
    elsewhere (dropped axes come back with size 1 first)."""
    (a,) = e.args
    items = tuple(e.attr("items"))

    def grad():
        kept = tuple(1 if it[0] == "at" else n for it, n in zip(items, _picked(items, dy)))
        g = em.reshape(dy, kept + dy.type.shape[_kept_count(items):])
        for axis, it in enumerate(items):
            lo = it[1] or 0
            step = 1 if it[0] == "at" else (it[3] if len(it) > 3 and it[3] else 1)
            g = spread(em, g, axis, a.type.shape[axis], lo, step)
        return g
    return (grad,)


def _picked(items: tuple, dy: ir.Atom) -> list[int]:
    """The sizes the index items leave on their axes (1 for an `at`), read from dy."""
    sizes, k = [], 0
    for it in items:
        if it[0] == "at":
            sizes.append(1)
        else:
            sizes.append(dy.type.shape[k])
            k += 1
    return sizes


def _kept_count(items: tuple) -> int:
    return sum(1 for it in items if it[0] != "at")


def spread(em: Emitter, g: ir.Atom, axis: int, n: int, lo: int, step: int) -> ir.Atom:
    """g's entries j along `axis` moved to positions lo + step * j of an axis of n,
    zeros elsewhere (interleave zeros for the step, then pad both ends)."""
    shape = g.type.shape
    count = shape[axis]
    if count == 0:
        return em.zeros(ir.TType(shape[:axis] + (n,) + shape[axis + 1:], g.type.dtype))
    if step > 1 and count > 1:
        wide = shape[:axis + 1] + (1,) + shape[axis + 1:]
        gaps = shape[:axis + 1] + (step - 1,) + shape[axis + 1:]
        g = em.concat([em.reshape(g, wide), em.zeros(ir.TType(gaps, g.type.dtype))], axis + 1)
        g = em.reshape(g, shape[:axis] + (count * step,) + shape[axis + 1:])
        used = step * (count - 1) + 1
        items = tuple(("slice", 0, m, 1) for m in shape[:axis]) + (("slice", 0, used, 1),)
        g = em.index(g, items, shape[:axis] + (used,) + shape[axis + 1:])
    parts = []
    for size in (lo, None, n - lo - g.type.shape[axis]):
        if size is None:
            parts.append(g)
        elif size > 0:
            parts.append(em.zeros(ir.TType(shape[:axis] + (size,) + shape[axis + 1:],
                                           g.type.dtype)))
    return em.concat(parts, axis)


def _dyn_index(em, e, y, dy):
    """x[i, j]: dy placed at the runtime position, selected by a one-hot mask."""
    x, *ks = e.args
    if not ks:
        return (lambda: dy,)

    def grad():
        mask = None
        for axis, k in enumerate(ks):
            n = x.type.shape[axis]
            pos = em.prim("iota", (), ir.TType((n,), "i64"), hint="pos")
            hit = em.compare("eq", pos, em.cast(k, "i64"))
            hit = em.reshape(hit, tuple(n if j == axis else 1 for j in range(len(ks))))
            mask = hit if mask is None else em.elementwise("and", mask, hit, dtype=BOOL)
        rest = x.type.shape[len(ks):]
        mask = em.reshape(mask, mask.type.shape + (1,) * len(rest))
        g = em.select(mask, em.reshape(dy, (1,) * len(ks) + rest), lit(0.0, x.type.dtype))
        return em.broadcast(g, x.type.shape)
    return (grad,) + (None,) * len(ks)


def _gather(em, e, y, dy):
    """A gather's adjoint is a scatter-add of dy into the table; the positions (integers)
    take none."""
    x, *positions = e.args
    return (lambda: em.prim("scatter_add", (dy, *positions), x.type, e.attrs),) \
        + (None,) * len(positions)


def _scatter_add(em, e, y, dy):
    """A scatter-add's adjoint reads dy back at the positions: a gather."""
    g, *positions = e.args
    return (lambda: em.prim("gather", (dy, *positions), g.type, e.attrs),) \
        + (None,) * len(positions)


def _fill(em, e, y, dy):
    (a,) = e.args
    if not is_float(a.type):
        return (None,)
    return (lambda: em.cast(em.reduce_sum(dy, tuple(range(y.type.rank))), a.type.dtype),)


def _cumsum(em, e, y, dy):
    """The reverse running sum: sum_{j >= i} dy[j] = total - cumsum(dy)[i] + dy[i]."""
    (a,) = e.args
    axis = e.attr("axis")

    def grad():
        total = em.unreduce(em.reduce_sum(dy, (axis,)), (axis,), dy.type.shape)
        running = em.prim("cumsum", (dy,), dy.type, (("axis", axis),))
        g = em.add(em.elementwise("sub", total, running), dy)
        return em.cast(g, a.type.dtype)
    return (grad,)


# ------------------------------------------------------------- reductions

def _axes(e: ir.Prim) -> tuple[int, ...]:
    rank = e.args[0].type.rank
    return tuple(sorted({k % rank for k in e.attr("axes")})) if rank else ()


def _reduce_sum(em, e, y, dy):
    (a,) = e.args
    return (lambda: em.cast(em.unreduce(dy, _axes(e), a.type.shape), a.type.dtype),)


def _reduce_prod(em, e, y, dy):
    (a,) = e.args
    axes, shape, dtype = _axes(e), a.type.shape, a.type.dtype

    def grad():
        zero, one = lit(0.0, dtype), lit(1.0, dtype)
        is0 = em.compare("eq", a, zero)
        nonzero = em.select(is0, one, a)
        others = em.prim("reduce_prod", (nonzero,), y.type, e.attrs)  # product without zeros
        zeros = em.reduce_sum(em.cast(is0, dtype), axes)
        others, zeros = (em.unreduce(v, axes, shape) for v in (others, zeros))
        none = em.div(others, nonzero)  # no zero in the slice: y / x
        single = em.select(em.elementwise("and", em.compare("eq", zeros, one), is0,
                                          dtype=BOOL), others, zero)
        g = em.select(em.compare("eq", zeros, zero), none, single)
        return em.mul(g, em.unreduce(dy, axes, shape))
    return (grad,)


def _reduce_extremum(em, e, y, dy):
    """dy shared evenly among the positions equal to the result."""
    (a,) = e.args
    axes, shape, dtype = _axes(e), a.type.shape, a.type.dtype

    def grad():
        if any(shape[k] == 0 for k in axes):
            return em.zeros(a.type)
        hit = em.compare("eq", a, em.unreduce(y, axes, shape))
        count = em.unreduce(em.reduce_sum(em.cast(hit, dtype), axes), axes, shape)
        share = em.div(em.unreduce(dy, axes, shape), count)
        return em.select(hit, share, lit(0.0, dtype))
    return (grad,)


def _diagonal(em, e, y, dy):
    """dy written back on the diagonal of the merged axes, zeros elsewhere."""
    (a,) = e.args
    rank = a.type.rank
    axes = tuple(k % rank for k in e.attr("axes"))
    rest = tuple(k for k in range(rank) if k not in axes)
    perm = rest + axes
    moved = tuple(a.type.shape[k] for k in perm)
    lead, sizes = moved[:len(rest)], moved[len(rest):]

    def grad():
        g = dy
        if sizes[0] > g.type.shape[-1]:  # pad the diagonal to the first merged axis
            pad = ir.TType(lead + (sizes[0] - g.type.shape[-1],), g.type.dtype)
            g = em.concat([g, em.zeros(pad)], len(lead))
        g = em.broadcast(em.reshape(g, lead + (sizes[0],) + (1,) * (len(sizes) - 1)), moved)
        first = em.prim("iota", (), ir.TType((sizes[0],), "i64"), hint="pos")
        mask = None
        for j, n in enumerate(sizes[1:], 1):
            pos = em.prim("iota", (), ir.TType((n,), "i64"), hint="pos")
            pos = em.reshape(pos, tuple(n if i == j else 1 for i in range(len(sizes))))
            same = em.compare("eq", em.reshape(first, (sizes[0],) + (1,) * (len(sizes) - 1)),
                              pos)
            mask = same if mask is None else em.elementwise("and", mask, same, dtype=BOOL)
        g = em.select(em.reshape(mask, (1,) * len(lead) + mask.type.shape), g,
                      lit(0.0, a.type.dtype))
        inverse = tuple(perm.index(k) for k in range(rank))
        return em.prim("permute", (g,), a.type, (("perm", inverse),))
    return (grad,)


def _dot(em, e, y, dy):
    """y = acc + a @ b: da = dy @ b^T, db = a^T @ dy, dacc = dy (through einsums)."""
    a, b = e.args[:2]
    return (lambda: contract(em, "mn,kn->mk", dy, b, a.type),
            lambda: contract(em, "mk,mn->kn", a, dy, b.type),
            lambda: dy)[:len(e.args)]


def contract(em: Emitter, spec: str, x: ir.Atom, z: ir.Atom, ty: ir.TType,
             acc: str = "") -> ir.Var:
    """An einsum of two operands cast to the result dtype."""
    args = (em.cast(x, ty.dtype), em.cast(z, ty.dtype))
    return em.emit(ir.Einsum(spec, args, ty, acc or ty.dtype), "d_einsum")


def einsum_rule(em: Emitter, e: ir.Einsum, y: ir.Var, dy: ir.Atom) -> list[Optional[Thunk]]:
    """Operand i's adjoint: the einsum of dy and the other operands onto i's letters.
    Letters only operand i has are summed in the forward: the adjoint is constant along
    them (computed without them, then broadcast)."""
    ins, out = e.spec.split("->")
    subs = ins.split(",")
    thunks: list[Optional[Thunk]] = []
    for i, (s, a) in enumerate(zip(subs, e.args)):
        if not is_float(a.type):
            thunks.append(None)
            continue
        if len(set(s)) != len(s):
            raise ValueError(f"einsum {e.spec}: a repeated letter in one operand")
        thunks.append(lambda i=i, s=s, a=a: _einsum_operand(em, e, dy, subs, out, i, s, a))
    return thunks


def _einsum_operand(em, e, dy, subs, out, i, s, a) -> ir.Atom:
    others = [(t, x) for j, (t, x) in enumerate(zip(subs, e.args)) if j != i]
    seen = set(out).union(*(set(t) for t, _ in others))
    target = "".join(c for c in s if c in seen)
    sizes = dict(zip(s, a.type.shape))
    spec = ",".join([out] + [t for t, _ in others]) + "->" + target
    dtype = a.type.dtype
    args = (em.cast(dy, dtype),) + tuple(em.cast(x, dtype) for _, x in others)
    ty = ir.TType(tuple(sizes[c] for c in target), dtype)
    g = em.emit(ir.Einsum(spec, args, ty, e.acc or dtype), "d_einsum")
    if target == s:
        return g
    g = em.reshape(g, tuple(sizes[c] if c in seen else 1 for c in s))
    return em.broadcast(g, a.type.shape)


NO_GRADIENT = frozenset({"and", "or", "xor", "not", "eq", "ne", "lt", "le", "gt", "ge",
                         "shl", "shr", "iota", "reduce_any", "reduce_all"})

RULES: dict[str, Rule] = {
    "add": _add, "sub": _sub, "mul": _mul, "div": _div, "mod": _mod,
    "min": _min_max, "max": _min_max, "neg": _neg, "abs": _abs,
    **{op: PRIMS[op].derivative for op in MATH},  # the float functions' own rows
    "select": _select, "cast": _cast,
    "broadcast_to": _broadcast_to, "reshape": _reshape, "permute": _permute,
    "concat": _concat, "index": _index, "dyn_index": _dyn_index, "fill": _fill,
    "gather": _gather, "scatter_add": _scatter_add,
    "cumsum": _cumsum, "reduce_sum": _reduce_sum, "reduce_prod": _reduce_prod,
    "reduce_max": _reduce_extremum, "reduce_min": _reduce_extremum,
    "diagonal": _diagonal, "dot": _dot,
}


def prim_rule(e: ir.Prim) -> Rule | None:
    """The rule of a primitive; None for those without a derivative (comparisons, bit
    operations, iota); an error for one this pass does not know (kernel primitives)."""
    if e.op in NO_GRADIENT:
        return None
    if e.op not in RULES:
        raise ValueError(f"differentiate: no adjoint rule for primitive {e.op}")
    return RULES[e.op]

