"""fold-proved-masks: tensor-core -> tensor-core, what a proved mask decides, done.

`egraph-tiles` turns a mask it proves into a literal (`fill` of it for a tile). This
pass follows through: `select` on a known condition is the chosen side (broadcast to
the result's shape), `not` of a known mask is known, a `load` whose mask is always
false reads nothing and is its `other` (0 without one) everywhere, and a `store` or
atomic whose mask is always false writes nothing and goes. (An always-true mask was
already dropped from its access.)
"""

from __future__ import annotations

from ...ir import tensor as ir
from ..traverse import Rewriter

MEMORY = ("store", "atomic_add", "atomic_max", "atomic_min")


def fold_proved_masks(program: ir.Program) -> ir.Program:
    """Fold selects, negations and accesses over masks known to be true or false."""
    return _Fold().program(program)


class _Fold(Rewriter):
    def __init__(self) -> None:
        super().__init__()
        self.known: dict[ir.Var, bool] = {}

    def func(self, f: ir.Func) -> ir.Func:
        saved, self.known = self.known, {}
        try:
            return super().func(f)
        finally:
            self.known = saved

    def value(self, a: ir.Atom) -> bool | None:
        """The constant a boolean operand is known to be, if any."""
        a = self.atom(a)
        if isinstance(a, ir.Lit):
            return a.value if isinstance(a.value, bool) else None
        return self.known.get(a)

    def prim(self, e: ir.Prim, bind: ir.Bind) -> ir.Expr | None:
        if e.op in ("fill", "broadcast_to") and e.type.dtype == "bool":
            known = self.value(e.args[0])
            if known is not None:
                self.known[bind.var] = known
        elif e.op == "not" and self.value(e.args[0]) is not None:
            return self.filled(not self.value(e.args[0]), bind)
        elif e.op == "select" and self.value(e.args[0]) is not None:
            chosen = self.atom(e.args[1] if self.value(e.args[0]) else e.args[2])
            if chosen.type == e.type:
                self.replace_uses(bind.var, chosen)
                return None
            return ir.Prim("broadcast_to", (chosen,), e.type)
        elif e.op == "load" and len(e.args) > 2 and self.value(e.args[2]) is False:
            other = self.atom(e.args[3]) if len(e.args) > 3 else _zero(e.type.dtype)
            return ir.Prim("fill", (other,), e.type)
        elif e.op in MEMORY and len(e.args) > 3 and self.value(e.args[3]) is False:
            self.replace_uses(bind.var, ir.Lit(True, ir.TType((), "bool")))
            return None  # writes nothing
        return super().prim(e, bind)

    def filled(self, value: bool, bind: ir.Bind) -> ir.Expr | None:
        lit = ir.Lit(value, ir.TType((), "bool"))
        self.known[bind.var] = value
        if not bind.var.type.shape:
            self.replace_uses(bind.var, lit)
            return None
        return ir.Prim("fill", (lit,), bind.var.type)


def _zero(dtype: str) -> ir.Lit:
    value = False if dtype == "bool" else 0.0 if dtype.startswith(("f", "bf")) else 0
    return ir.Lit(value, ir.TType((), dtype))
