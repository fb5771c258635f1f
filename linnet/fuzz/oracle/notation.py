"""Index notation and reductions (docs/language.md, "Index notation and reductions"), by
broadcasting over an index space.

Each index variable owns one axis of an *index space* (a pack `*s` owns one per dimension);
the outputs of `let y[i, j] = ...` come first, in order, and each reduction appends the axes
of its own variables while its body is computed. An access `x[i, k]` is `x` gathered at
`arange` grids along the axes of `i` and `k`, so it is an array of the space's rank with its
extents on those axes and 1 elsewhere (`a[i, i]` reads the diagonal; a compile-time position
`x[r, 0]` picks that element). A gather position (`table[ids[b, s], h]`) is its integer
expression's array over the space: a position outside its axis reads 0. Every operator then broadcasts, and a reduction reduces its
own (trailing) axes. Nothing is summed implicitly: that would need an index the checker
rejects.
"""

from __future__ import annotations

import numpy as np

from ...check.types import TensorT
from ...syntax import tree as t
from .dtypes import Lit, to_dtype
from .errors import OracleError
from .exprs import Ix, NeedScalar
from .reductions import reduce


class NotationEval:
    def let_index(self, s: t.LetIndex):
        """`let y[i, j] = e`: the value of e over the outputs' domains."""
        if self.elementwise:
            raise NeedScalar("index notation")
        ty = self.ty(s)
        if not isinstance(ty, TensorT):
            raise OracleError("index notation without a known result type")
        shape = tuple(_extent(d) for d in ty.dims)
        plain = sum(1 for v in s.indices if not v.pack)
        packs = [v for v in s.indices if v.pack]
        axes: dict[str, tuple[int, ...]] = {}
        depth = 0
        for v in s.indices:
            width = 1
            if v.pack:
                width = (len(shape) - plain) if len(packs) == 1 else self.pack_width(v.name, s.value)
            axes[v.name] = tuple(range(depth, depth + width))
            depth += width
        value = self.in_space(Ix(axes, depth), s.value)
        value = to_dtype(value, ty.dtype, self.prec)
        return np.broadcast_to(value, shape).copy()

    def in_space(self, ix: Ix, e):
        saved, self.ix = self.ix, ix
        try:
            return self.expr(e)
        finally:
            self.ix = saved

    def outside(self, e):
        """e as an ordinary expression (a computed base, a constant position)."""
        saved, self.ix = self.ix, None
        try:
            return self.expr(e)
        finally:
            self.ix = saved

    def reduction(self, e: t.Reduce):
        if self.elementwise:
            raise NeedScalar("a reduction")
        outer = self.ix if self.ix is not None else Ix({}, 0)
        axes = dict(outer.axes)
        depth = outer.depth
        own: list[int] = []
        for v in e.indices:
            width = self.pack_width(v.name, e.body) if v.pack else 1
            axes[v.name] = tuple(range(depth, depth + width))
            own.extend(axes[v.name])
            depth += width
        body = self.in_space(Ix(axes, depth), e.body)
        dtype = self.dtype_of(e)
        body = np.asarray(to_dtype(body, dtype, self.prec))
        if body.ndim < depth:
            body = body.reshape((1,) * (depth - body.ndim) + body.shape)
        return reduce(e.op, body, tuple(own), dtype, self.prec)

    def notation_access(self, e: t.Index):
        """`x[i, *s, 0]` inside index notation: an array over the index space."""
        if isinstance(e.base, t.Name):
            base = self.lookup(e.base.id)
        else:
            base = self.outside(e.base)
        base = np.asarray(base)
        ix = self.ix
        key: list = []
        inside = None  # where every gather position lies inside its axis
        axis = 0
        width = base.ndim - sum(1 for it in e.items if not isinstance(it, t.PackIx))
        for item in e.items:
            if isinstance(item, t.PackIx):
                owned = ix.axes.get(item.name)
                if owned is None or len(owned) != width:
                    raise OracleError(f"pack index `{item.name}` of an unexpected width")
                for a in owned:
                    key.append(_grid(base.shape[axis], a, ix.depth))
                    axis += 1
            elif isinstance(item, t.Name) and item.id in ix.axes:
                key.append(_grid(base.shape[axis], ix.axes[item.id][0], ix.depth))
                axis += 1
            elif isinstance(item, t.Slice):
                raise OracleError("a slice in index notation")
            elif _reads_an_index(item, ix):
                position, ok = _gathered(self.expr(item), base.shape[axis])
                key.append(position)
                inside = ok if inside is None else inside & ok
                axis += 1
            else:
                key.append(self._constant_position(item, base.shape[axis]))
                axis += 1
        if inside is None:
            return np.asarray(base[tuple(key)])
        zero = base.dtype.type(0)
        if base.size == 0:  # an empty axis: every position is outside it
            return np.full(np.broadcast_shapes(*(np.shape(k) for k in key)), zero)
        return np.where(inside, np.asarray(base[tuple(key)]), zero)

    def _constant_position(self, item, extent: int) -> int:
        v = self.outside(item)
        k = int(v.value if isinstance(v, Lit) else np.asarray(v).item())
        if not 0 <= k < extent:
            raise OracleError(f"position {k} outside an axis of {extent}")
        return k

    def pack_width(self, name: str, e) -> int:
        """How many axes the pack index `*name` stands for: read from an access of it."""
        for node in _walk(e):
            if isinstance(node, t.Index) and any(
                    isinstance(it, t.PackIx) and it.name == name for it in node.items):
                if isinstance(node.base, t.Name):
                    rank = np.ndim(self.lookup(node.base.id))
                else:
                    ty = self.ty(node.base)
                    if not isinstance(ty, TensorT):
                        raise OracleError("a computed access of unknown rank")
                    rank = ty.rank
                return rank - (len(node.items) - 1)
        raise OracleError(f"pack index `{name}` never used")


def _reads_an_index(item, ix) -> bool:
    """Is this position an expression of index variables (a gather), not a constant?"""
    return any(isinstance(node, t.Name) and node.id in ix.axes
               or isinstance(node, t.PackIx) and node.name in ix.axes for node in _walk(item))


def _gathered(value, extent: int) -> tuple[np.ndarray, np.ndarray]:
    """A gather position's values clamped into an axis of `extent`, and where they were
    inside it (outside, the language reads 0)."""
    p = np.asarray(value.value if isinstance(value, Lit) else value)
    if p.dtype.kind not in "iu":
        raise OracleError(f"a gather position of dtype {p.dtype}")
    inside = (p >= 0) & (p < extent)
    return np.clip(p, 0, max(extent - 1, 0)).astype(np.int64), inside


def _grid(extent: int, axis: int, depth: int) -> np.ndarray:
    shape = [1] * depth
    shape[axis] = extent
    return np.arange(extent).reshape(shape)


def _extent(d) -> int:
    n = d.as_int() if hasattr(d, "as_int") else None
    if n is None:
        raise OracleError(f"dimension {d} is not a number")
    return n


def _walk(node):
    """Every node of an expression tree (spans and names left out)."""
    yield node
    for field in getattr(node, "__dataclass_fields__", {}):
        if field in ("span", "callee_span", "name_spans"):
            continue
        value = getattr(node, field)
        for child in value if isinstance(value, tuple) else (value,):
            if hasattr(child, "__dataclass_fields__"):
                yield from _walk(child)
