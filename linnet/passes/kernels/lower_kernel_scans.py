"""lower-kernel-scans: tensor-dots -> tensor-kernel-loops, scans in kernels as loops over buffers.

A scan stacks what each trip yields, but a kernel's tiles cannot be joined (docs/language.md,
"Kernels"): Triton has no way to grow a tile across trips, and Pallas's Triton lowering
takes `lax.scan` only in its `fori_loop` form, without stacked outputs. A scan's trip
count is a compile-time number and its stacks are tiles, though, so in a kernel it
becomes a plain counted loop that carries one more value per yield, the stack itself:
all zeros before the loop, and at trip `index` the yield written into row `index - lo`
by a select on a row mask (`iota == index - lo`, the mask and the row broadcast to the
stack's shape). The loop's value keeps its layout (the carried values, then the
stacks), so nothing that reads it changes; the printers see only plain loops in kernels.
Op bodies keep their scans: every backend there has a stacking loop.
"""

from __future__ import annotations

from ...ir import tensor as ir
from ..traverse import Rewriter

I64 = "i64"
FLOATS = ("f16", "bf16", "f32", "f64")


def lower_kernel_scans(program: ir.Program) -> ir.Program:
    """Replace every scan in a kernel by a loop carrying its stacks."""
    return _Lower().program(program)


class _Lower(Rewriter):
    def loop(self, e: ir.Loop, bind: ir.Bind) -> ir.Expr | None:
        e = super().loop(e, bind)  # scans nested in the body first
        if not e.yields or self.func_now is None or self.func_now.kind != "kernel":
            return e
        stacks = e.stacked_types
        trips = e.hi - e.lo
        rows = self.emit_expr(ir.Prim("iota", (), ir.TType((trips,), I64)), "rows")
        zeros = tuple(self.emit_expr(ir.Prim("fill", (_zero(st.dtype),), st), "stack")
                      for st in stacks)
        buffers = tuple(ir.Var(self.names.fresh("stack"), st) for st in stacks)
        body = _Body(self.names, e.body)
        items = body.items(len(e.carried) + e.yields)
        hit = body.prim("eq", (rows, body.trip(e.index, e.lo)), ir.TType((trips,), "bool"),
                        "hit")
        written = [body.write(buf, y, hit) for buf, y in zip(buffers, items[len(e.carried):])]
        nexts = tuple(items[:len(e.carried)]) + tuple(written)
        result = body.prim_expr(ir.MakeTuple(nexts, ir.TupleTy(tuple(a.type for a in nexts))),
                                "next")
        return ir.Loop(e.index, e.lo, e.hi, e.carried + buffers, e.init + zeros,
                       ir.Block(tuple(body.binds), result), e.type)


class _Body:
    """A scan's body being extended with the writes of its yields into the buffers."""

    def __init__(self, names, block: ir.Block) -> None:
        self.names = names
        self.block = block
        self.binds = list(block.binds)

    def prim_expr(self, e: ir.Expr, hint: str) -> ir.Var:
        var = ir.Var(self.names.fresh(hint), e.type)
        self.binds.append(ir.Bind(var, e))
        return var

    def prim(self, op: str, args: tuple[ir.Atom, ...], ty: ir.TType, hint: str) -> ir.Var:
        return self.prim_expr(ir.Prim(op, args, ty), hint)

    def items(self, count: int) -> list[ir.Atom]:
        """What the body returns, item by item: next carried values, then the yields."""
        res = self.block.result
        if count == 1 and not isinstance(res.type, ir.TupleTy):
            return [res]
        return [self.prim_expr(ir.GetItem(res, k, t), "item")
                for k, t in enumerate(res.type.items)]

    def trip(self, index: ir.Var, lo: int) -> ir.Atom:
        """The row of this trip: `index - lo`."""
        if lo == 0:
            return index
        return self.prim("sub", (index, ir.Lit(lo, ir.TType((), I64))), ir.TType((), I64),
                         "trip")

    def write(self, buffer: ir.Var, y: ir.Atom, hit: ir.Var) -> ir.Var:
        """`buffer` with the row that `hit` marks replaced by `y`."""
        stack = buffer.type
        ones = (1,) * len(y.type.shape)
        mask = self.shaped("reshape", hit, ir.TType(stack.shape[:1] + ones, "bool"), "mask")
        mask = self.shaped("broadcast_to", mask, ir.TType(stack.shape, "bool"), "mask")
        row = self.shaped("reshape", y, ir.TType((1,) + y.type.shape, stack.dtype), "row")
        row = self.shaped("broadcast_to", row, stack, "row")
        return self.prim("select", (mask, row, buffer), stack, "stack")

    def shaped(self, op: str, x: ir.Atom, ty: ir.TType, hint: str) -> ir.Atom:
        """x reshaped or broadcast to ty (x itself when it has that shape already)."""
        return x if x.type == ty else self.prim(op, (x,), ty, hint)


def _zero(dtype: str) -> ir.Lit:
    value: bool | int | float = False if dtype == "bool" else 0.0 if dtype in FLOATS else 0
    return ir.Lit(value, ir.TType((), dtype))
