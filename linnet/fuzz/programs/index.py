"""Index notation: `let y[i, j] = red[k] body`, contractions, diagonals, nested reductions.

Why built from accesses first: every index on the left must be used and every other one
reduced (E3101-E3103), and all uses of an index must have one extent (E2201). Choosing the
accesses first, and naming their axes, makes both true by construction; the rest of the
body is then any element expression over those indices.
"""

from __future__ import annotations

import math

from ...syntax import tree as t
from .exprs import E, Exprs
from .scope import Gen, Scope, Var
from .types import BOOL_INFO, DType, Dim, Info, Ty, dt, fits, power_info, scale_sum, settle

NUMERIC_REDUCTIONS = ("sum", "prod", "max", "min")


def reduce_info(op: str, body: Info, n: int, dtype: DType) -> Info:
    """The facts of `op` over `n` values with facts `body` (the identity when n is 0)."""
    if op in ("any", "all"):
        return BOOL_INFO
    if op == "sum":
        return settle(scale_sum(body, n), dtype)
    if op == "prod":
        return settle(power_info(body, n), dtype)
    if n == 0:  # the lowest (max) or highest (min) value: fine to return, not to compute on
        return Info(-math.inf, -math.inf) if op == "max" else Info(math.inf, math.inf)
    return body


class IndexNotation:
    """Builds one index-notation statement in a scope."""

    def __init__(self, g: Gen, scope: Scope) -> None:
        self.g, self.scope = g, scope
        self.indices: dict[str, Dim] = {}

    def fresh_index(self, dim: Dim, base: str = "i") -> str:
        name = self.g.fresh(base)
        self.indices[name] = dim
        return name

    def name_axes(self, var: Var, reuse: dict[str, str] | None = None) -> list[str]:
        """An index for each axis of `var`; an axis whose extent already has an index may
        reuse it (a diagonal, or a contraction with another access)."""
        names = []
        for d in var.ty.dims:
            same = [n for n, dom in self.indices.items() if dom.key == d.key]
            if same and self.g.chance(0.35 if reuse is None else 0.8):
                names.append(self.g.pick(same))
            else:
                names.append(self.fresh_index(d, "k" if reuse is not None else "i"))
        return names

    @staticmethod
    def access(var: Var, names: list[str]) -> E:
        if not names:
            return E(t.Name(var.name), Ty((), var.ty.dtype), var.info)
        node = t.Index(t.Name(var.name), tuple(t.Name(n) for n in names))
        return E(node, Ty((), var.ty.dtype), var.info)

    def build(self, anchor: Var) -> tuple[t.Stmt, Var] | None:
        """`let y[outs] = body` (or `let y = red[...] body` when nothing is an output)."""
        g = self.g
        names = self.name_axes(anchor)
        if len(set(names)) < len(names):
            g.count("diagonal")
        terms = [self.access(anchor, names)]
        dtype = anchor.ty.dtype
        partner = self.partner(anchor, dtype)
        if partner is not None:
            pnames = self.name_axes(partner, reuse={})
            shared = set(pnames) & set(names)
            terms.append(self.access(partner, pnames))
        else:
            shared = set()
        used = list(dict.fromkeys(n for n in self.indices))
        outs = [n for n in used if n not in shared or g.chance(0.3)]
        if g.chance(0.5):
            outs = [n for n in outs if g.chance(0.6)]
        if len(outs) > 1 and g.chance(0.3):
            g.rng.shuffle(outs)
            g.count("transpose")
        reduced = [n for n in used if n not in outs]
        if reduced and shared & set(reduced):
            g.count("contract")
        exprs = Exprs(g, self.scope, dict(self.indices))
        body = self.combine(exprs, terms, dtype)
        body = self.extra_term(exprs, body, dtype, outs)
        out_var_name = g.fresh("y")
        value, info = self.reduce(body, reduced, dtype)
        if value is None:
            return None
        ty = Ty(tuple(self.indices[n] for n in outs), value.ty.dtype)
        g.count("index")
        var = Var(out_var_name, ty, info)
        if not outs:
            return t.Let(out_var_name, None, value.node), var
        ixs = tuple(t.IxVar(n) for n in outs)
        return t.LetIndex(out_var_name, ixs, value.node), var

    def partner(self, anchor: Var, dtype: DType) -> Var | None:
        """A second tensor sharing an extent with the anchor (a product over it)."""
        if not self.g.has("contract") or not self.g.chance(0.5):
            return None
        keys = {d.key for d in anchor.ty.dims}
        cands = [v for v in self.scope.vars() if v.ty.dtype == dtype and v.info.finite
                 and v.ty.dims and keys & {d.key for d in v.ty.dims}]
        return self.g.pick(cands) if cands else None

    def combine(self, exprs: Exprs, terms: list[E], dtype: DType) -> E:
        body = terms[0]
        for term in terms[1:]:
            if dtype.is_bool:
                body = exprs.binary(self.g.pick(["&&", "||", "&", "|", "^"]), body, term,
                                    dtype, BOOL_INFO)
                continue
            op = self.g.pick(["*", "*", "+", "-"])
            body = exprs.arith(op, body, term) or exprs.minmax("max", body, term)
        if self.g.chance(0.4):
            other = exprs.expr(dtype, (), depth=2)
            if dtype.is_bool:
                body = exprs.binary("&&", body, other, dtype, BOOL_INFO)
            else:
                body = exprs.arith(self.g.pick(["+", "-", "*"]), body, other) or body
        return body

    def extra_term(self, exprs: Exprs, body: E, dtype: DType, outs: list[str]) -> E:
        """Sometimes `body + red[k] z[o, k]`: a reduction nested in the element expression."""
        g = self.g
        if dtype.is_bool or not g.has("nested_reduce") or not g.chance(0.3):
            return body
        cands = [v for v in self.scope.vars() if v.ty.dtype == dtype and v.info.finite
                 and v.ty.dims]
        if not cands:
            return body
        var = g.pick(cands)
        local: list[str] = []
        names = []
        for d in var.ty.dims:
            same = [n for n in outs if self.indices[n].key == d.key]
            if same and g.chance(0.5):
                names.append(g.pick(same))
            else:
                name = g.fresh("j")
                self.indices[name] = d
                local.append(name)
                names.append(name)
        term = self.access(var, names)
        if not local:
            return exprs.arith("+", body, term) or body
        op = g.pick(["sum", "max", "min"])
        n = math.prod(self.indices[k].value for k in local)
        info = reduce_info(op, term.info, n, dtype)
        if not info.finite or not fits(info, dtype):
            return body
        red = E(t.Reduce(op, None, tuple(t.IxVar(k) for k in local), term.node),
                Ty((), dtype), info)
        g.count("nested_reduce", f"reduce:{op}")
        return exprs.arith("+", body, red) or body

    def reduce(self, body: E, reduced: list[str], dtype: DType) -> tuple[E | None, Info]:
        if not reduced:
            return body, body.info
        g = self.g
        n = math.prod(self.indices[k].value for k in reduced)
        if dtype.is_bool:
            ops = ["any", "all"]
        else:
            ops = list(NUMERIC_REDUCTIONS)
        op = g.pick(ops)
        info = reduce_info(op, body.info, n, dtype)
        acc = None
        if op in ("sum", "prod") and not fits(info, dtype) and info.finite:
            widened = self.widen(body, n, op)
            if widened is not None:
                body, info, acc = widened
            else:
                op = g.pick(["max", "min"])
                info = reduce_info(op, body.info, n, dtype)
        elif op == "sum" and g.has("accumulator") and g.chance(0.2):
            acc = t.TypeName(dtype.text)
            g.count("accumulator")
        g.count("reduce", f"reduce:{op}")
        node = t.Reduce(op, acc, tuple(t.IxVar(k) for k in reduced), body.node)
        return E(node, Ty((), body.ty.dtype), info), info

    def widen(self, body: E, n: int, op: str):
        """`sum<i64>[k] cast<i64>(body)`: a wider accumulator where the sum would overflow."""
        if not self.g.has("accumulator") or op != "sum":
            return None
        wide = dt("i64") if body.ty.dtype.is_int and body.ty.dtype.signed else \
            dt("f64") if body.ty.dtype.is_float else None
        if wide is None or wide == body.ty.dtype:
            return None
        cast = Exprs(self.g, self.scope, self.indices).cast(body, wide)
        if cast is None:
            return None
        info = reduce_info("sum", cast.info, n, wide)
        if not fits(info, wide):
            return None
        self.g.count("accumulator")
        return cast, info, t.TypeName(wide.text)
