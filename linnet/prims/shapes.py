"""Primitives that move, join or make elements: shapes, construction, scans, reductions,
`diagonal` and `dot`. Their printing is a function of each printer (`Via`), named after
the primitive (the reductions share "reduce"), since each reads attributes and shapes."""

from __future__ import annotations

from .definition import PrimDef, Via
from .folds import FOLDS

REDUCTIONS = ("sum", "prod", "max", "min", "any", "all")


def _row(name: str, arity: int | None, family: str, attrs: tuple[str, ...] = (),
         doc: str = "", triton: str | None = "", prelude: str = "") -> PrimDef:
    """A row printed by each target's function `name` (Triton's `triton`, when given;
    None: not in kernels)."""
    fn = Via(name)
    kernel = fn if triton == "" else (Via(triton) if triton else None)
    return PrimDef(name, arity, family, attrs, prelude=prelude, fold=FOLDS.get(name),
                   torch=fn, jax=fn, onnx=fn, stablehlo=fn, triton=kernel, doc=doc)


def _reduce_row(op: str) -> PrimDef:
    fn = Via("reduce")
    return PrimDef(f"reduce_{op}", 1, "reduce", ("axes",), torch=fn, jax=fn, onnx=fn,
                   stablehlo=fn, triton=fn, doc="over `axes`, accumulated in the result dtype")


ROWS = (
    _row("broadcast_to", 1, "shape", doc="to the result shape", prelude="broadcast_to"),
    _row("reshape", 1, "shape", prelude="reshape"),
    _row("permute", 1, "shape", ("perm",), prelude="permute"),
    _row("concat", None, "shape", ("axis",), triton="no_slicing", prelude="concat"),
    _row("index", 1, "shape", ("items",), doc='items: per axis ("at", k) | '
         '("slice", lo, hi, step)'),
    _row("dyn_index", None, "shape", triton="no_slicing",
         doc="x[i, j] with runtime i64 scalars, leading axes"),
    _row("iota", 0, "construct", doc="0..n-1 along the result's one axis", prelude="iota"),
    _row("fill", 1, "construct", doc="a scalar broadcast to the result shape",
         prelude="fill"),
    _row("cumsum", 1, "construct", ("axis",), prelude="cumsum"),
    *(_reduce_row(op) for op in REDUCTIONS),
    _row("gather", None, "shape", ("axes",), triton=None,
         doc="(x, i_0, ..., i_k-1): x at the integer positions i_j on `axes`; the positions "
         "share one shape S, the result is S then x's other axes; a position outside its "
         "axis reads 0"),
    _row("scatter_add", None, "shape", ("axes",), triton=None,
         doc="(g, i_0, ..., i_k-1): zeros of the result type, g added at the positions i_j "
         "on `axes` (gather's adjoint); positions outside their axis add nothing"),
    _row("diagonal", 1, "shape", ("axes",), triton="no_slicing",
         doc="x[i, i]: merge the listed axes into one, last"),
    _row("dot", None, "dot", ("precision",),
         doc="(a[M, K], b[K, N][, acc[M, N]]): acc + a @ b"),
)
