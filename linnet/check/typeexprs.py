"""Written types to checker types: `Tensor[R, 2*C; T]` with its dimension expressions."""

from __future__ import annotations

from ..errors import closest
from ..syntax import tree as t
from .dim_normal_form import Dim
from .types import compile_time_int, DTYPES, KINDS, LitT, PackDim, ShapeT, TensorT, TupleT, Type, scalar


class TypeExprChecker:
    def resolve_type(self, te: t.TypeExpr) -> Type | None:
        """The checker type of a written type, or None after reporting why not."""
        if isinstance(te, t.TypeName):
            dtype = self.dtype_of_type(te)
            return scalar(dtype) if dtype is not None else None
        if isinstance(te, t.TupleType):
            items = [self.resolve_type(x) for x in te.items]
            return None if any(x is None for x in items) else TupleT(tuple(items))
        dtype = self.dtype_of_type(te.dtype)
        dims = [self.dim_item(d) for d in te.dims]
        if dtype is None or any(d is None for d in dims):
            return None
        return TensorT(self._splice_packs(dims), dtype)

    def _splice_packs(self, dims: list) -> tuple:
        """In an instance, a bound pack `*S` stands for its dimensions."""
        bound = self.frame.binding
        out: list = []
        for d in dims:
            if isinstance(d, PackDim) and bound is not None and d.name in bound.packs:
                out.extend(bound.packs[d.name])
            else:
                out.append(d)
        return tuple(out)

    def dtype_of_type(self, te: t.TypeExpr) -> str | None:
        if not isinstance(te, t.TypeName):
            self.error("E2101", f"expected a dtype, found a {type(te).__name__}", te.span)
            return None
        if te.name in DTYPES:
            return te.name
        g = self.frame.generics.get(te.name)
        if g is not None and g.kind not in KINDS:
            return None  # a generic of an unknown kind (E1201 where it is declared)
        if g is not None and g.kind not in ("Dim", "Shape"):
            bound = self.frame.binding
            return bound.dtypes.get(te.name, te.name) if bound is not None else te.name
        if g is not None:
            self.error("E2101", f"`{te.name}` is a {g.kind}, not a dtype", te.span)
            return None
        near = closest(te.name, DTYPES)
        self.error("E1201", f"undeclared type `{te.name}`", te.span, "not a dtype",
                   help=f"did you mean `{near}`?" if near else
                   "dtypes are bool, i8..i64, u8..u64, f16, bf16, f32, f64, or a dtype generic",
                   once=(te.name,))
        return None

    def dim_item(self, d) -> Dim | PackDim | None:
        if isinstance(d, t.PackIx):
            g = self.frame.generics.get(d.name)
            if g is None or g.kind != "Shape":
                self.error("E3106" if g is not None else "E1201",
                           f"`*{d.name}` needs a `*{d.name}: Shape` generic", d.span)
                return None
            return PackDim(d.name)
        return self.dim_expr(d)

    def dim_expr(self, e: t.Expr) -> Dim | None:
        """A dimension expression; it must be a compile-time integer, provably >= 0."""
        v = self.expr(e)
        if v.is_error:
            return None
        if isinstance(v.type, ShapeT):
            self.error("E3106", "a shape pack used as one dimension", e.span,
                       help="write `*S` to splice a pack into a shape")
            return None
        if compile_time_int(v) is None:
            self.error("E2123", "a dimension must be a compile-time integer", e.span,
                       f"this is {v.type}")
            return None
        if self.in_i64(v, e, "a dimension").is_error:
            return None
        if _maybe_negative(v.const) and self.frame.facts.prove(v.const, "<", Dim.const(0)):
            self.error("E2208", f"dimension `{v.const}` is provably negative", e.span,
                       "negative")
            return None
        return v.const


def _maybe_negative(d: Dim) -> bool:
    """Cheap filter before asking the prover: constants and lone symbols are settled."""
    value = d.as_int()
    if value is not None:
        return value < 0
    return len(d.symbols()) != 1 or d != Dim.sym(next(iter(d.symbols())))
