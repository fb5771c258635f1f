"""Building tensor IR for reverse mode: fresh variables, nested blocks, and the small
shape helpers every adjoint rule needs (zeros, sums back to an operand's shape, casts).

`Emitter` keeps a stack of open blocks; `emit` binds an expression to a fresh variable
in the innermost one. All names come from one `NameSupply` for the whole function, so
every variable the differentiated entry binds is bound exactly once.
"""

from __future__ import annotations

from ...ir import tensor as ir
from ...ir.prim_types import broadcast_shapes
from ..traverse import NameSupply

FLOATS = ("f16", "bf16", "f32", "f64")
I64 = ir.TType((), "i64")
BOOL = "bool"


def is_float(ty: ir.Ty) -> bool:
    """A floating tensor or scalar (the values that carry gradients)."""
    return isinstance(ty, ir.TType) and ty.dtype in FLOATS


def has_float(ty: ir.Ty) -> bool:
    """A floating value, or a tuple holding one somewhere."""
    if isinstance(ty, ir.TupleTy):
        return any(has_float(t) for t in ty.items)
    return is_float(ty)


def lit(value: float | int | bool, dtype: str) -> ir.Lit:
    if dtype in FLOATS:
        value = float(value)
    return ir.Lit(value, ir.TType((), dtype))


class Emitter:
    """Binds expressions to fresh variables in the innermost open block."""

    def __init__(self, names: NameSupply) -> None:
        self.names = names
        self.blocks: list[list[ir.Bind]] = [[]]

    # ------------------------------------------------------------ blocks

    def open(self) -> None:
        self.blocks.append([])

    def close(self, result: ir.Atom) -> ir.Block:
        return ir.Block(tuple(self.blocks.pop()), result)

    def bind(self, bind: ir.Bind) -> None:
        """Add an existing binding (its variable already has a unique name)."""
        self.blocks[-1].append(bind)

    def emit(self, expr: ir.Expr, hint: str = "t") -> ir.Var:
        var = self.fresh(hint, expr.type)
        self.blocks[-1].append(ir.Bind(var, expr))
        return var

    def fresh(self, hint: str, ty: ir.Ty) -> ir.Var:
        return ir.Var(self.names.fresh(hint), ty)

    # -------------------------------------------------------- primitives

    def literal(self, value: float | int | bool, dtype: str) -> ir.Lit:
        """A scalar literal: the derivative rules of `linnet.prims` build no IR nodes
        themselves."""
        return lit(value, dtype)

    def prim(self, op: str, args: tuple[ir.Atom, ...], ty: ir.TType,
             attrs: tuple = (), hint: str = "") -> ir.Var:
        return self.emit(ir.Prim(op, tuple(args), ty, tuple(attrs)), hint or "d_" + op)

    def elementwise(self, op: str, *args: ir.Atom, dtype: str | None = None) -> ir.Var:
        """An elementwise prim under numpy broadcasting; its dtype is the last operand's
        unless given (select's first operand is the bool condition)."""
        shape = broadcast_shapes(*(a.type.shape for a in args))
        if shape is None:
            raise ValueError(f"{op}: shapes {[a.type.shape for a in args]} do not broadcast")
        return self.prim(op, args, ir.TType(shape, dtype or args[-1].type.dtype))

    def add(self, a: ir.Atom, b: ir.Atom) -> ir.Var:
        return self.elementwise("add", a, b)

    def mul(self, a: ir.Atom, b: ir.Atom) -> ir.Var:
        return self.elementwise("mul", a, b)

    def div(self, a: ir.Atom, b: ir.Atom) -> ir.Var:
        return self.elementwise("div", a, b)

    def neg(self, a: ir.Atom) -> ir.Var:
        return self.prim("neg", (a,), a.type)

    def compare(self, op: str, a: ir.Atom, b: ir.Atom) -> ir.Var:
        return self.elementwise(op, a, b, dtype=BOOL)

    def select(self, c: ir.Atom, a: ir.Atom, b: ir.Atom) -> ir.Var:
        return self.elementwise("select", c, a, b, dtype=b.type.dtype)

    def cast(self, x: ir.Atom, dtype: str) -> ir.Atom:
        if x.type.dtype == dtype:
            return x
        return self.prim("cast", (x,), ir.TType(x.type.shape, dtype))

    def zeros(self, ty: ir.TType) -> ir.Atom:
        """A zero of a floating type: a literal for a scalar, else a `fill`."""
        zero = lit(0.0, ty.dtype)
        return zero if ty.rank == 0 else self.prim("fill", (zero,), ty, hint="zeros")

    def reshape(self, x: ir.Atom, shape: tuple[int, ...]) -> ir.Atom:
        if x.type.shape == tuple(shape):
            return x
        return self.prim("reshape", (x,), ir.TType(tuple(shape), x.type.dtype))

    def broadcast(self, x: ir.Atom, shape: tuple[int, ...]) -> ir.Atom:
        if x.type.shape == tuple(shape):
            return x
        return self.prim("broadcast_to", (x,), ir.TType(tuple(shape), x.type.dtype))

    def reduce_sum(self, x: ir.Atom, axes: tuple[int, ...]) -> ir.Atom:
        if not axes:
            return x
        shape = tuple(n for k, n in enumerate(x.type.shape) if k not in axes)
        return self.prim("reduce_sum", (x,), ir.TType(shape, x.type.dtype),
                         (("axes", tuple(axes)),))

    def index(self, x: ir.Atom, items: tuple, shape: tuple[int, ...]) -> ir.Var:
        return self.prim("index", (x,), ir.TType(shape, x.type.dtype), (("items", items),))

    def concat(self, parts: list[ir.Atom], axis: int) -> ir.Atom:
        if len(parts) == 1:
            return parts[0]
        shape = list(parts[0].type.shape)
        shape[axis] = sum(p.type.shape[axis] for p in parts)
        return self.prim("concat", tuple(parts), ir.TType(tuple(shape), parts[0].type.dtype),
                         (("axis", axis),))

    # ------------------------------------------------------------ shapes

    def sum_to(self, g: ir.Atom, ty: ir.TType) -> ir.Atom:
        """The adjoint `g` of a broadcast result brought back to an operand's type: the
        leading axes the operand lacks and its stretched size-1 axes are summed."""
        shape, target = g.type.shape, ty.shape
        if shape == target:
            return g
        if len(shape) < len(target) or any(
                t not in (1, s) for s, t in zip(shape[len(shape) - len(target):], target)):
            return self.broadcast(g, target)  # a smaller adjoint: stretch it instead
        lead = len(shape) - len(target)
        axes = tuple(range(lead)) + tuple(lead + k for k, (s, t) in enumerate(
            zip(shape[lead:], target)) if t == 1 and s != 1)
        return self.reshape(self.reduce_sum(g, axes), target)

    def unreduce(self, g: ir.Atom, axes: tuple[int, ...], shape: tuple[int, ...]) -> ir.Atom:
        """A reduction's result (or its adjoint) stretched back over the reduced `axes`
        of the operand `shape`."""
        kept = tuple(1 if k in axes else n for k, n in enumerate(shape))
        return self.broadcast(self.reshape(g, kept), shape)

    def i64(self, op: str, a: ir.Atom, b: ir.Atom) -> ir.Var:
        return self.prim(op, (a, b), I64, hint="t")
