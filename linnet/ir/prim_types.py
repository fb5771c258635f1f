"""The result type each tensor-IR primitive calls for, from its operands and attributes.

`prim_type(e, attrs)` is the verifier's (`linnet.ir.verify`) rule for a `Prim`: numpy
broadcasting for elementwise ops, the axes of reductions, the shape ops' shapes, `dot`,
`concat`, `index` and einsum specs. It answers with the type, with a message saying what
is wrong, or with None where the operands leave the type open.
"""

from __future__ import annotations

import math

from ..prims import ops_of
from ..prims.shapes import REDUCTIONS as REDUCE_OPS  # noqa: F401 (re-exported)
from . import tensor as ir

# The elementwise families of the table (linnet.prims): one rule below serves them all.
COMPARISONS = ops_of("compare")
BINARY = ops_of("binary")
UNARY = ops_of("unary", "math")
ELEMENTWISE = BINARY + COMPARISONS + UNARY + ("select", "cast")

def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy's right-aligned broadcast of the shapes, or None if they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        dims = {s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0} - {1}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)



def prim_type(e: ir.Prim, attrs: dict) -> ir.TType | str | None:
    """The result type e's operands and attributes call for; a message if they are wrong;
    None where the operands leave it open (its own checks passed)."""
    shapes = [a.type.shape for a in e.args]
    dtypes = [a.type.dtype for a in e.args]
    op = e.op
    if op in ELEMENTWISE:
        shape = broadcast_shapes(*shapes)
        if shape is None:
            return f"shapes {shapes} do not broadcast"
        if op == "cast":
            return ir.TType(shape, e.type.dtype)
        if op == "select":
            if dtypes[0] != "bool" or dtypes[1] != dtypes[2]:
                return f"select needs a bool condition and two values of one dtype: {dtypes}"
            return ir.TType(shape, dtypes[1])
        if len(set(dtypes)) != 1:
            return f"mixed dtypes {dtypes}"
        return ir.TType(shape, "bool" if op in COMPARISONS else dtypes[0])
    if op.startswith("reduce_"):
        axes = attrs["axes"]
        if not _valid_axes(axes, len(shapes[0])):
            return f"invalid axes {axes} for rank {len(shapes[0])}"
        if op in ("reduce_any", "reduce_all") and (dtypes[0], e.type.dtype) != ("bool", "bool"):
            return "any/all reduce bools to a bool"
        shape = tuple(d for k, d in enumerate(shapes[0]) if k not in axes)
        return ir.TType(shape, e.type.dtype)
    if op == "dot":
        return _dot_type(e, attrs, shapes, dtypes)
    return _shape_prim_type(e, attrs, shapes, dtypes)


FLOATS = ("f16", "bf16", "f32", "f64")


def _dot_type(e: ir.Prim, attrs: dict, shapes: list, dtypes: list) -> ir.TType | str:
    """`dot(a[M, K], b[K, N][, acc[M, N]])`: float operands of one dtype, a result of that
    dtype or f32; an accumulator of the result's type; precision "", "ieee" or "tf32"."""
    if len(e.args) not in (2, 3) or any(len(s) != 2 for s in shapes[:2]):
        return "dot takes two matrices and an optional accumulator"
    (m, k), (k2, n) = shapes[0], shapes[1]
    out = ir.TType((m, n), e.type.dtype)
    if k != k2:
        return f"dot of {shapes[0]} and {shapes[1]}"
    if dtypes[0] != dtypes[1] or dtypes[0] not in FLOATS or out.dtype not in (dtypes[0], "f32"):
        return f"dot of {dtypes[:2]} to {out.dtype}"
    if len(e.args) == 3 and e.args[2].type != out:
        return f"dot accumulator {e.args[2].type}, not {out}"
    if attrs.get("precision") not in ("", "ieee", "tf32"):
        return f"dot precision {attrs.get('precision')!r}"
    return out


def _valid_axes(axes: object, rank: int) -> bool:
    return (isinstance(axes, tuple) and all(isinstance(a, int) and 0 <= a < rank for a in axes)
            and len(set(axes)) == len(axes))


def _shape_prim_type(e: ir.Prim, attrs: dict, shapes: list, dtypes: list
                     ) -> ir.TType | str | None:
    op, out = e.op, e.type
    if op in ("iota",):
        return None if out.rank == 1 else "iota gives one axis"
    if op in ("fill",):
        return ir.TType(out.shape, dtypes[0]) if shapes[0] == () else "fill of a non-scalar"
    same = dtypes[0] if dtypes else out.dtype
    if op == "broadcast_to":
        ok = broadcast_shapes(shapes[0], out.shape) == out.shape
        return ir.TType(out.shape, same) if ok else f"{shapes[0]} does not broadcast to {out.shape}"
    if op == "reshape":
        ok = math.prod(shapes[0]) == math.prod(out.shape)
        return ir.TType(out.shape, same) if ok else f"reshape of {shapes[0]} to {out.shape}"
    if op == "permute":
        perm = attrs["perm"]
        if not isinstance(perm, tuple) or sorted(perm) != list(range(len(shapes[0]))):
            return f"{perm} is not a permutation of {len(shapes[0])} axes"
        return ir.TType(tuple(shapes[0][p] for p in perm), same)
    if op == "diagonal":
        axes = attrs["axes"]
        if not _valid_axes(axes, len(shapes[0])) or len(axes) < 2:
            return f"invalid diagonal axes {axes}"
        extents = {shapes[0][a] for a in axes}
        if len(extents) != 1:
            return f"diagonal of axes of different extents {sorted(extents)}"
        rest = tuple(d for k, d in enumerate(shapes[0]) if k not in axes)
        return ir.TType(rest + (extents.pop(),), same)
    if op == "cumsum":
        axis = attrs["axis"]
        if not isinstance(axis, int) or not -len(shapes[0]) <= axis < len(shapes[0]):
            return f"invalid axis {axis}"
        return ir.TType(shapes[0], same)
    if op == "concat":
        return _concat_type(attrs["axis"], shapes, dtypes)
    if op == "index":
        return _index_type(attrs["items"], shapes[0], same)
    if op in ("gather", "scatter_add"):
        return _gather_type(op, attrs["axes"], shapes, dtypes, out)
    if op == "dyn_index":
        if not e.args or any(s != () or d[0] not in "iu" for s, d in zip(shapes[1:], dtypes[1:])):
            return "dyn_index takes a tensor and integer scalars"
        n = len(e.args) - 1
        if n > len(shapes[0]):
            return f"{n} indices into rank {len(shapes[0])}"
        return ir.TType(shapes[0][n:], same)
    return None


def _gathered_shape(table: tuple[int, ...], axes: tuple[int, ...],
                   positions: tuple[int, ...]) -> tuple[int, ...]:
    """The shape `gather` reads from a table: the positions' shape, then the table's axes
    that are not gathered, in order."""
    return positions + tuple(n for k, n in enumerate(table) if k not in axes)


def _gather_type(op: str, axes: object, shapes: list, dtypes: list, out: ir.TType
                 ) -> ir.TType | str:
    """`gather(x, i_0, ...)` and its adjoint `scatter_add(g, i_0, ...)` (of the table's
    type, the result): one integer position tensor per axis in `axes`, all of one shape."""
    table = shapes[0] if op == "gather" else out.shape
    if len(shapes) < 2 or not _valid_axes(axes, len(table)) or len(axes) != len(shapes) - 1 \
            or tuple(sorted(axes)) != axes:
        return f"{op} of {len(shapes) - 1} positions on axes {axes} of rank {len(table)}"
    if len(set(shapes[1:])) != 1 or any(d[0] not in "iu" for d in dtypes[1:]):
        return f"{op} positions of shapes {shapes[1:]} and dtypes {dtypes[1:]}"
    read = _gathered_shape(table, axes, shapes[1])
    if op == "gather":
        return ir.TType(read, dtypes[0])
    if shapes[0] != read:
        return f"scatter_add of {shapes[0]} into {out.shape}, which reads {read}"
    return ir.TType(out.shape, dtypes[0])


def _concat_type(axis: object, shapes: list, dtypes: list) -> ir.TType | str:
    if not shapes or len(set(dtypes)) != 1 or len({len(s) for s in shapes}) != 1:
        return f"concat of {shapes} with dtypes {dtypes}"
    rank = len(shapes[0])
    if not isinstance(axis, int) or not -rank <= axis < rank:
        return f"invalid axis {axis}"
    axis %= rank
    others = {s[:axis] + s[axis + 1:] for s in shapes}
    if len(others) != 1:
        return f"concat of {shapes} along {axis}"
    first = shapes[0]
    return ir.TType(first[:axis] + (sum(s[axis] for s in shapes),) + first[axis + 1:],
                    dtypes[0])


def _index_type(items: object, shape: tuple[int, ...], dtype: str) -> ir.TType | str:
    if not isinstance(items, tuple) or len(items) > len(shape):
        return f"index items {items!r} for rank {len(shape)}"
    out: list[int] = []
    for item, extent in zip(items, shape):
        if item[0] == "at" and len(item) == 2 and 0 <= item[1] < extent:
            continue
        if item[0] == "slice" and len(item) == 4 and 0 <= item[1] <= item[2] <= extent \
                and item[3] > 0:  # bounds clamped to the axis by elaboration
            out.append(len(range(item[1], item[2], item[3])))
            continue
        return f"invalid index item {item!r} for an axis of {extent}"
    return ir.TType(tuple(out) + shape[len(items):], dtype)


def einsum_type(e: ir.Einsum) -> tuple[int, ...] | str:
    """The shape e's spec gives its operands, or what is wrong with the spec."""
    if e.spec.count("->") != 1:
        return "a spec needs exactly one '->'"
    ins, out = e.spec.split("->")
    terms = ins.split(",")
    if len(terms) != len(e.args):
        return f"{len(terms)} operand terms for {len(e.args)} operands"
    extent: dict[str, int] = {}
    for term, a in zip(terms, e.args):
        if len(term) != a.type.rank or not term.isalpha():
            return f"term {term!r} for an operand of type {a.type}"
        for c, d in zip(term, a.type.shape):
            if extent.setdefault(c, d) != d:
                return f"letter {c} has extents {extent[c]} and {d}"
    if len(set(out)) != len(out) or any(c not in extent for c in out):
        return f"output {out!r} repeats a letter or uses one no operand has"
    return tuple(extent[c] for c in out)
