"""Statements that change shapes: slices, integer indices, reshape, broadcast_to, permute,
concat, iota, fill, cumsum.

Why dims carry keys: each of these makes a dimension the checker must reason about
(`(N + 1) / 2` for a slice with step 2, `A + B` for a concat, `A * B` for a reshape). The
new dimension's key is derived from its operands', so the generator only combines
dimensions whose equality the checker can prove, and their values stay known for the
value facts and the inputs.
"""

from __future__ import annotations

from ...syntax import tree as t
from .exprs import E, Exprs, call, int_lit, shape_list
from .forms import with_ellipsis
from .scope import Gen, Scope, Var
from .types import Dim, Info, Ty, dim_op, dt, lit_dim, scale_sum, settle, fits


class Shapes:
    """Shape-function statements over one scope; each returns (value, facts) or None."""

    def __init__(self, g: Gen, scope: Scope) -> None:
        self.g, self.scope = g, scope

    def tensors(self, min_rank: int = 1) -> list[Var]:
        return [v for v in self.scope.vars() if v.ty.rank >= min_rank and v.info.finite]

    def make(self) -> E | None:
        g = self.g
        makers = [(f, getattr(self, f)) for f in ("slice", "int_index", "reshape",
                                                  "broadcast_to", "permute", "concat",
                                                  "iota", "cumsum") if g.has(f)]
        if not makers:
            return None
        feature, maker = g.pick(makers)
        return maker()

    def slice(self) -> E | None:
        """`x[lo:hi:s, ...]`: literal bounds on literal extents, `0:N:s` on generic ones."""
        g = self.g
        cands = self.tensors()
        if not cands:
            return None
        v = g.pick(cands)
        items, dims, full = [], [], []
        for d in v.ty.dims:
            full.append(g.chance(0.4))
            if full[-1]:
                items.append(t.Slice(t.IntLit(0), d.node, None))
                dims.append(d)
                continue
            step = g.pick([1, 2, 3])
            if d.literal:
                lo = g.rng.randrange(0, d.value + 1)
                hi = g.rng.randrange(lo, d.value + 1)
                n = len(range(lo, hi, step))
                items.append(t.Slice(t.IntLit(lo), t.IntLit(hi),
                                     None if step == 1 and g.chance(0.5) else t.IntLit(step)))
                dims.append(lit_dim(n))
            else:
                lo = 1 if d.key in g.positive and g.chance(0.5) else 0
                n = len(range(lo, d.value, step))
                items.append(t.Slice(t.IntLit(lo), d.node, t.IntLit(step)))
                span = dim_op("-", d, lit_dim(lo)) if lo else d
                dim = dim_op("/", dim_op("+", span, lit_dim(step - 1)), lit_dim(step)) \
                    if step > 1 else span
                dims.append(Dim(dim.key, n, dim.node))
        g.count("slice")
        if any(s.step is not None and s.step != t.IntLit(1) for s in items):
            g.count("slice:step")
        return E(t.Index(t.Name(v.name), with_ellipsis(g, items, full) or tuple(items)),
                 Ty(tuple(dims), v.ty.dtype), v.info)

    def int_index(self) -> E | None:
        """`x[k]`, `x[N - 1, 0:M]`: a compile-time index provably in range drops the axis."""
        g = self.g
        cands = [v for v in self.tensors() if v.ty.dims[0].value >= 1
                 and (v.ty.dims[0].literal or v.ty.dims[0].key in g.positive)]
        if not cands:
            return None
        v = g.pick(cands)
        d = v.ty.dims[0]
        if d.literal:
            first = t.IntLit(g.rng.randrange(d.value))
        else:
            first = g.pick([t.IntLit(0), t.Binary("-", d.node, t.IntLit(1))])
        rest = tuple(t.Slice(t.IntLit(0), e.node, None) for e in v.ty.dims[1:]
                     ) if g.chance(0.5) else ()
        g.count("int_index")
        whole = [t.Slice(t.IntLit(0), e.node, None) for e in v.ty.dims[1:]]  # what x[k] keeps
        items = with_ellipsis(g, [first, *whole], [False] + [True] * len(whole))
        return E(t.Index(t.Name(v.name), items or (first,) + rest),
                 Ty(v.ty.dims[1:] if rest or g.chance(1) else (), v.ty.dtype), v.info)

    def reshape(self) -> E | None:
        """Merge two neighbouring axes (`[A * B]`), or add an axis of 1."""
        g = self.g
        cands = self.tensors()
        if not cands:
            return None
        v = g.pick(cands)
        dims = list(v.ty.dims)
        if len(dims) >= 2 and g.chance(0.6):
            k = g.rng.randrange(len(dims) - 1)
            dims[k:k + 2] = [dim_op("*", dims[k], dims[k + 1])]
        else:
            dims.insert(g.rng.randrange(len(dims) + 1), lit_dim(1))
        g.count("reshape")
        return E(call("reshape", t.Name(v.name), shape_list(dims)), Ty(tuple(dims), v.ty.dtype),
                 v.info)

    def broadcast_to(self) -> E | None:
        g = self.g
        cands = self.tensors(0)
        if not cands or not g.dims:
            return None
        v = g.pick(cands)
        dims = list(v.ty.dims)
        if dims and g.chance(0.4):
            k = g.rng.randrange(len(dims))
            if dims[k].key == "1":
                dims[k] = g.pick(g.dims)
        lead = [g.pick(g.dims) for _ in range(g.rng.randrange(1, 3) if len(dims) < 3 else 0)]
        target = tuple(lead + dims)
        old = (lit_dim(1),) * (len(target) - len(v.ty.dims)) + v.ty.dims
        if any(a.key != b.key and a.key != "1" for a, b in zip(old, target)):
            return None
        g.count("broadcast_to")
        return E(call("broadcast_to", t.Name(v.name), shape_list(target)),
                 Ty(target, v.ty.dtype), v.info)

    def permute(self) -> E | None:
        g = self.g
        cands = self.tensors(2)
        if not cands:
            return None
        v = g.pick(cands)
        order = list(range(v.ty.rank))
        g.rng.shuffle(order)
        g.count("permute")
        perm = t.ListExpr(tuple(t.IntLit(k) for k in order))
        return E(call("permute", t.Name(v.name), perm),
                 Ty(tuple(v.ty.dims[k] for k in order), v.ty.dtype), v.info)

    def concat(self) -> E | None:
        """Two or three tensors along one axis (`axis = -1` counts from the back)."""
        g = self.g
        cands = self.tensors()
        if not cands:
            return None
        v = g.pick(cands)
        axis = g.rng.randrange(v.ty.rank)
        rest = [d.key for k, d in enumerate(v.ty.dims) if k != axis]
        mates = [w for w in cands if w.ty.dtype == v.ty.dtype and w.ty.rank == v.ty.rank
                 and [d.key for k, d in enumerate(w.ty.dims) if k != axis] == rest]
        parts = [v] + [g.pick(mates) for _ in range(g.pick([1, 1, 2]))]
        dim = parts[0].ty.dims[axis]
        for p in parts[1:]:
            dim = dim_op("+", dim, p.ty.dims[axis])
        info = parts[0].info
        for p in parts[1:]:
            info = info.join(p.info)
        dims = list(v.ty.dims)
        dims[axis] = dim
        written = axis - v.ty.rank if g.chance(0.4) else axis
        g.count("concat")
        node = call("concat", *(t.Name(p.name) for p in parts), axis=int_lit(written))
        return E(node, Ty(tuple(dims), v.ty.dtype), info)

    def iota(self) -> E | None:
        g = self.g
        if not g.dims:
            return None
        d = g.pick(g.dims)
        dtypes = [x for x in g.numeric_dtypes() if x.text == x.name]
        dtype = g.pick(dtypes) if dtypes and g.chance(0.7) else None
        info = settle(Info(0, max(d.value - 1, 0)), dtype or dt("i64"))
        if dtype is not None and not fits(info, dtype):
            return None
        g.count("iota")
        node = call("iota", d.node, generics=None if dtype is None else (t.Name(dtype.text),))
        return E(node, Ty((d,), dtype or dt("i64")), info)

    def cumsum(self) -> E | None:
        g = self.g
        cands = [v for v in self.tensors() if not v.ty.dtype.is_bool]
        if not cands:
            return None
        v = g.pick(cands)
        axis = g.rng.randrange(v.ty.rank)
        info = settle(scale_sum(v.info, v.ty.dims[axis].value), v.ty.dtype)
        if not fits(info, v.ty.dtype):
            return None
        g.count("cumsum")
        node = call("cumsum", t.Name(v.name), axis=t.IntLit(axis))
        return E(node, v.ty, info)
