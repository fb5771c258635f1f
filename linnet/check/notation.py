"""Index notation and reductions (E31xx), and ordinary indexing and slicing.

Inside `let y[i, j] = ...` or a reduction's body every access is a scalar and
names every axis; each index variable takes its domain from the axes it
indexes, and all of its uses must agree.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

from ..syntax import tree as t
from .dim_normal_form import Dim
from .dims import Facts
from .types import count, compile_time_int, ERR, DimItem, LitT, MemT, PackDim, TensorT, Val, is_scalar, scalar
from .unify import dims_equal, shape_text

NUMBER_REDUCTIONS = {"sum", "prod", "max", "min"}


class NotationChecker:
    # ------------------------------------------------------- let y[i] = ...
    def let_index(self, s: t.LetIndex) -> Val:
        names = [v.name for v in s.indices]
        for k, v in enumerate(s.indices):
            if v.name in names[:k]:
                return self.error("E3105", f"index `{v.name}` listed twice", v.span,
                                  "already an output", help="use a reduction for a diagonal "
                                                            "read, as in `a[i, i]`")
        saved = self.ix, self.ix_used
        self.notation += 1
        self.ix = {v.name: (None, v.pack) for v in s.indices}
        self.ix_used = set()
        try:
            value = self.expr(s.value)
            domains = dict(self.ix)
            used = set(self.ix_used)
        finally:
            self.ix, self.ix_used = saved
        if value.is_error:
            return ERR
        return self._notation_result(s, value, domains, used)

    def _notation_result(self, s: t.LetIndex, value: Val, domains: dict, used: set) -> Val:
        if isinstance(value.type, TensorT) and value.type.rank != 0:
            return self.error("E3104", f"index notation computes one element at a time, but "
                              f"this is {value.type}", s.value.span, "not a scalar",
                              help="index every tensor on the right-hand side, as in `x[i]`")
        dims: list[DimItem] = []
        for v in s.indices:
            if v.name not in used:
                return self.error("E3103", f"output index `{v.name}` is never used", v.span,
                                  "unused", help="every output index must index some tensor "
                                                 "on the right-hand side")
            domain = domains[v.name][0]
            dims.extend(domain if v.pack else (domain,))
        element = self.settled(value, s.value.span)
        if element.is_error:
            return ERR
        if not isinstance(element.type, TensorT):
            return self.error("E3104", f"index notation computes one tensor element at a time, "
                              f"but this is {element.type}", s.value.span, "not a scalar",
                              help="write one `let y[...] = ...` for each element value")
        return Val(TensorT(tuple(dims), element.type.dtype))

    # --------------------------------------------------------- reductions
    def reduction(self, e: t.Reduce) -> Val:
        outer = self.ix
        if outer is None:  # a reduction outside `let y[...] =` starts its own notation
            self.notation += 1
        current = dict(outer) if outer is not None else {}
        for k, v in enumerate(e.indices):
            if v.name in current or v.name in [x.name for x in e.indices[:k]]:
                return self.error("E3105", f"index `{v.name}` listed twice", v.span,
                                  "already bound", help="give the reduced index its own name")
            current[v.name] = (None, v.pack)
        saved_used = self.ix_used
        self.ix, self.ix_used = current, set()
        try:
            body = self.expr(e.body)
            used = set(self.ix_used)
        finally:
            if outer is not None:
                outer.update({k: v for k, v in current.items() if k in outer})
            self.ix = outer
            self.ix_used = saved_used | (used - {v.name for v in e.indices})
        if body.is_error:
            return ERR
        for v in e.indices:
            if v.name not in used:
                return self.error("E3102", f"reduction index `{v.name}` is never used", v.span,
                                  "unused", help="remove it, or index a tensor with it")
        return self._reduction_type(e, body)

    def _reduction_type(self, e: t.Reduce, body: Val) -> Val:
        body = self.settled(body, e.body.span)
        if body.is_error:
            return ERR
        if not isinstance(body.type, TensorT) or body.type.rank != 0:
            return self.error("E3104", f"a reduction's body must be a scalar, found {body.type}",
                              e.body.span)
        dtype = body.type.dtype
        if e.op in ("any", "all") and dtype != "bool":
            return self.error("E2104", f"`{e.op}` reduces bools, found {dtype}", e.span,
                              help="compare first, as in `any[i] x[i] > 0.0`")
        if e.op in NUMBER_REDUCTIONS and not self.is_numeric(dtype):
            return self.error("E2104", f"`{e.op}` reduces numbers, found {dtype}", e.span,
                              help="use `any` or `all` for bools")
        if e.acc is not None:
            acc = self.dtype_of_type(e.acc)  # type: ignore[attr-defined]
            if acc is None:
                return ERR
            if acc != dtype:
                return self.error("E2103", f"`{e.op}<{acc}>` accumulates {acc} but its body is "
                                  f"{dtype}", e.body.span, f"this is {dtype}",
                                  help=f"cast the body: `{e.op}<{acc}>[...] cast<{acc}>(...)`")
        return Val(scalar(dtype))

    # ------------------------------------------------------------ indexing
    def index(self, e: t.Index) -> Val:
        if self.ix is not None:
            return self.notation_access(e)
        base = self._index_base(e)
        if base.is_error:
            return ERR
        tensor = base.type
        if self.frame.kernel is not None and isinstance(tensor, TensorT) and tensor.rank:
            return self.error("E2127", "tiles cannot be indexed or sliced", e.span,
                              help="load the memory you need instead, or use index notation")
        return self.plain_index(e, tensor)

    def _index_base(self, e: t.Index) -> Val:
        if isinstance(e.base, t.Name):
            local = self.frame.lookup(e.base.id)
            if local is not None and isinstance(local.val.type, MemT):
                return self.error("E2127", "a kernel's memory is accessed only inside `load`, "
                                  "`store` and the atomics", e.span, "memory access here",
                                  help="write `load(x[...], mask)`")
        base = self.expr(e.base)
        if base.is_error:
            return ERR
        if not isinstance(base.type, TensorT) or base.type.rank == 0:
            return self.error("E2104", f"cannot index {base.type}", e.base.span,
                              f"this is {base.type}")
        return base

    def plain_index(self, e: t.Index, tensor: TensorT) -> Val:
        if tensor.has_pack:
            return self.error("E2190", "not implemented yet: indexing a tensor with a shape "
                              "pack outside index notation", e.span)
        if len(e.items) > tensor.rank:
            return self.error("E2204", f"{count(len(e.items), 'index', 'indices')} for a tensor of rank "
                              f"{tensor.rank}", e.span, f"this is {tensor}")
        dims: list[DimItem] = []
        for item, dim in zip(e.items, tensor.dims):
            kept = self._index_item(item, dim)
            if kept is False:
                return ERR
            if kept is not None:
                dims.append(kept)
        dims.extend(tensor.dims[len(e.items):])
        return Val(TensorT(tuple(dims), tensor.dtype))

    def _index_item(self, item, dim: Dim) -> Dim | None | bool:
        """The kept extent for a slice, None for a dropped axis, False after an error."""
        if isinstance(item, t.Slice):
            return self._slice_extent(item, dim)
        if isinstance(item, t.PackIx):
            self.error("E3106", "a pack index outside index notation", item.span)
            return False
        v = self.expr(item)
        if v.is_error:
            return False
        if compile_time_int(v) is not None:
            return None if self._in_range(v.const, dim, item) else False
        if is_scalar(v.type) and self.is_integer(v.type.dtype):  # type: ignore[union-attr]
            return None
        self.error("E2101", f"an index must be an integer scalar, found {v.type}", item.span,
                   f"this is {v.type}")
        return False

    def _in_range(self, k: Dim, dim: Dim, item: t.Expr) -> bool:
        facts = self.frame.facts
        if facts.prove(k, "<", Dim.const(0)) or (k.as_int() is not None and k.as_int() < 0):
            self.error("E2209", f"negative index {k}", item.span, "out of range",
                       help="indices count from 0; negative indices are errors")
            return False
        if not (facts.prove_nonnegative(k) and facts.prove(k, "<", dim)):
            self.error("E2209", f"index {k} not provably below the extent {dim}", item.span,
                       "may be out of range", help="add a `where` clause that bounds it")
            return False
        return True

    def _slice_extent(self, s: t.Slice, dim: Dim) -> Dim | bool:
        """The kept extent of `lo:hi:step`: bounds compile-time and non-negative, the step
        positive (E2209); bounds past the end clamp to the axis, as Python's do."""
        facts = self.frame.facts
        lo = self.expect_const_int(s.lo, "a slice bound") if s.lo is not None else Dim.const(0)
        hi = self.expect_const_int(s.hi, "a slice bound") if s.hi is not None else dim
        step = self.expect_const_int(s.step, "a slice step") if s.step is not None else Dim.const(1)
        if lo is None or hi is None or step is None:
            return False
        for bound, written in ((lo, s.lo), (hi, s.hi)):
            if written is not None and not facts.prove_nonnegative(bound):
                self.error("E2209", f"slice bound {bound} not provably non-negative",
                           written.span, "may be negative",
                           help="slice bounds count from 0 (there are no negative indices); "
                                "a bound past the end is clamped to the axis")
                return False
        if not facts.prove_positive(step):
            self.error("E2209", f"slice step {step} not provably positive", s.step.span,
                       "invalid step", help="the step of `lo:hi:step` is at least 1")
            return False
        return slice_length(lo, hi, step, dim, facts)

    # -------------------------------------------- access in index notation
    def notation_access(self, e: t.Index) -> Val:
        if not isinstance(e.base, t.Name):
            return self._computed_access(e)
        local = self.frame.lookup(e.base.id)
        if local is not None and local.val.is_error:  # its mistake is reported already
            self.ix_used.update(_index_names(e, self.ix))
            return ERR
        if local is None or not isinstance(local.val.type, (TensorT, MemT)):
            if local is None and e.base.id not in self.frame.globals.consts:
                return self.error("E1201", f"undeclared name `{e.base.id}`", e.base.span,
                                  "not found", help=self.undeclared_help(e.base.id),
                                  once=(e.base.id,))
            return self.error("E2104", f"cannot index `{e.base.id}`", e.base.span)
        tensor = local.val.type
        if isinstance(tensor, MemT):
            return self.error("E2127", "a kernel's memory is read only through `load`",
                              e.span, help="write `load(x[...], mask)` and index the tile")
        return self._bind_axes(e, tensor, self._declared(e.base.id, tensor), local.val.zero)

    def _computed_access(self, e: t.Index) -> Val:
        """`f(x)[i]`, `(a + b)[i, j]`: any tensor expression may be indexed. It is computed
        once, outside the comprehension (as if bound by `let` first), so it may not read
        the index variables."""
        used = _index_names(e.base, self.ix)
        if used:
            return self.error("E3104", f"the indexed value reads the index `{used[0]}`",
                              e.base.span, "computed once, outside the indexing",
                              help="index the tensors inside it instead, as in "
                                   "`a[i] + b[i]` for `(a + b)[i]`")
        base = self.outside_notation(e.base)
        if base.is_error:
            return ERR
        if isinstance(base.type, MemT):
            return self.error("E2127", "a kernel's memory is read only through `load`",
                              e.span, help="write `load(x[...], mask)` and index the tile")
        if not isinstance(base.type, TensorT) or base.type.rank == 0:
            return self.error("E2104", f"cannot index {base.type}", e.base.span,
                              f"this is {base.type}")
        return self._bind_axes(e, base.type, zero=base.zero)

    def outside_notation(self, e: t.Expr) -> Val:
        """e checked as an ordinary expression, with no index variable in scope."""
        saved = self.ix, self.ix_used
        self.ix, self.ix_used = None, set()
        try:
            return self.expr(e)
        finally:
            self.ix, self.ix_used = saved

    def _declared(self, name: str, tensor: TensorT) -> str:
        """"`w` is declared `Tensor[R; f32]` at line 3": where an access's extents come from."""
        local = self.frame.lookup(name)
        span = local.span if local is not None else None
        return f"`{name}` is declared `{tensor}`" + (self.bag.place(span) if span else "")

    def _bind_axes(self, e: t.Index, tensor: TensorT, declared: str = "",
                   zero: bool = False) -> Val:
        packs = [it for it in e.items if isinstance(it, t.PackIx)]
        plain = len(e.items) - len(packs)
        if len(packs) > 1 or (not packs and plain != tensor.rank) or plain > tensor.rank:
            return self.error("E2204", f"{count(len(e.items), 'index', 'indices')} for a tensor of rank "
                              f"{tensor.rank}", e.span, f"this is {tensor}",
                              help="index notation names every axis")
        width = tensor.rank - plain
        axis = 0
        for item in e.items:
            extent = tensor.dims[axis:axis + width] if isinstance(item, t.PackIx) \
                else tensor.dims[axis]
            if not self._bind_one(item, extent, (declared, axis)):
                return ERR
            axis += width if isinstance(item, t.PackIx) else 1
        return Val(TensorT((), tensor.dtype), zero=zero)

    def _bind_one(self, item, extent, origin: tuple[str, int] = ("", 0)) -> bool:
        if isinstance(item, t.Slice):
            self.error("E3104", "slices are not allowed in index notation", item.span)
            return False
        if _is_gather_position(item, self.ix):
            return self._gather_position(item)
        name = item.name if isinstance(item, t.PackIx) else getattr(item, "id", None)
        if not isinstance(item, t.PackIx) and (name is None or name not in self.ix):
            if name is None or self._compile_time_name(name):
                return self._constant_position(item, extent)
        if name not in self.ix:
            declared = self.frame.lookup(name) is not None or name in self.frame.generics
            code = "E3104" if declared else "E3101"
            what = ("a value, not an index variable" if declared
                    else "neither an output nor reduced")
            self.error(code, f"index `{name}` is {what}", item.span, "not bound",
                       help=f"list it on the left (`let y[..., {name}]`) or reduce it "
                            f"(`sum[{name}] ...`)", once=(self.notation, name))
            return False
        domain, is_pack = self.ix[name]
        if is_pack != isinstance(item, t.PackIx):
            self.error("E3106", f"index `{name}` is {'a pack' if is_pack else 'not a pack'}",
                       item.span, help="write `*s` for a pack index everywhere, or nowhere")
            return False
        self.ix_used.add(name)
        if domain is None:
            self.ix[name] = (extent, is_pack)
            return True
        if not self._domains_agree(domain, extent, is_pack):
            self.error("E2201", f"index `{name}` ranges over {_show(extent)} here but "
                       f"{_show(domain)} elsewhere", item.span, "extents disagree",
                       help=self._extent_help(name, extent, is_pack, origin))
            return False
        return True

    def _extent_help(self, name: str, extent, is_pack: bool, origin: tuple[str, int]) -> str:
        """E2201's help: where this axis's extent is declared, an index variable that does
        run over it, and only then a `where` clause (which cannot make R equal C)."""
        declared, axis = origin
        fits = [n for n, (d, pack) in (self.ix or {}).items()
                if n != name and d is not None and pack == is_pack
                and self._domains_agree(d, extent, is_pack)]
        head = f"{declared}, so its axis {axis} has {_show(extent)} elements; " if declared \
            else ""
        if fits:
            return head + f"index it with `{fits[0]}`, which runs over {_show(extent)}"
        return head + ("index it with a variable over that extent, or make the extents "
                       "provably equal with a `where` clause")

    def _compile_time_name(self, name: str) -> bool:
        """Is `name` a compile-time integer here (a `let` of one, a `Dim`, a `const`)?"""
        local = self.frame.lookup(name)
        if local is not None:
            return compile_time_int(local.val) is not None
        generic = self.frame.generics.get(name)
        if generic is not None:
            return generic.kind == "Dim"
        const = self.frame.globals.consts.get(name)
        return const is not None and compile_time_int(const) is not None

    def _gather_position(self, item: t.Expr) -> bool:
        """`table[ids[b, s], h]`: an integer scalar computed from the index variables picks
        the position, so the access is a gather. Its index variables take their extents
        where they index; the gathered axis takes none (a position outside it reads 0)."""
        if self.frame.kernel is not None:
            self.error("E2127", "a tile cannot be gathered from", item.span,
                       "a computed position",
                       help="load the rows you need instead: `load(table[ids, cols])` "
                            "reads memory at a tile of positions")
            return False
        v = self.expr(item)
        if v.is_error:
            return False
        v = self.settled(v, item.span)
        if v.is_error:
            return False
        if not (is_scalar(v.type) and self.is_integer(v.type.dtype)):  # type: ignore[union-attr]
            self.error("E2101", f"a gather position must be an integer scalar, found {v.type}",
                       item.span, f"this is {v.type}",
                       help="index with integers, as in `table[ids[b], h]` with "
                            "`ids: Tensor[B; i32]`; `cast<i32>(...)` converts")
            return False
        return True

    def _constant_position(self, item: t.Expr, extent: Dim) -> bool:
        """`x[r, 0]`, `x[r, C - 1]`: a compile-time integer provably in range picks one
        position of its axis (the axis is not iterated)."""
        if self.frame.kernel is not None:
            self.error("E2127", "a tile cannot be read at a fixed position", item.span,
                       "a position, not an index variable",
                       help="load the elements you need instead (tiles are not indexed)")
            return False
        used = _index_names(item, self.ix)
        v = ERR if used else self.outside_notation(item)
        if v.is_error and not used:
            return False
        if used or compile_time_int(v) is None:
            self.error("E3104", "index notation takes index variables and compile-time "
                       "integers only", item.span,
                       f"reads the index `{used[0]}`" if used else f"this is {v.type}",
                       help="compute shifted positions outside, or slice before")
            return False
        return self._in_range(v.const, extent, item)

    def _domains_agree(self, a, b, is_pack: bool) -> bool:
        if not is_pack:
            return dims_equal(a, b, self.frame.facts)
        return len(a) == len(b) and all(dims_equal(x, y, self.frame.facts) for x, y in zip(a, b))


def _index_names(e: t.Expr, ix: dict) -> list[str]:
    """The index variables in scope that e reads, in order of first appearance."""
    found: list[str] = []

    def visit(node) -> None:
        if isinstance(node, (t.Name, t.PackIx)):
            name = node.id if isinstance(node, t.Name) else node.name
            if name in ix and name not in found:
                found.append(name)
            return
        if isinstance(node, t.Reduce):  # its own indices are not the outer ones
            inner = {v.name for v in node.indices}
            found.extend(n for n in _index_names(node.body, {k: v for k, v in ix.items()
                                                              if k not in inner})
                         if n not in found)
            return
        for child in _children(node):
            visit(child)

    visit(e)
    return found


def _children(node):
    """The nodes directly inside a node of the surface tree."""
    for f in fields(node):
        if f.name in ("span", "callee_span", "name_spans"):
            continue
        value = getattr(node, f.name)
        for child in value if isinstance(value, tuple) else (value,):
            if is_dataclass(child):
                yield child


def _is_gather_position(item, ix: dict) -> bool:
    """Is this position of an access in index notation a gather: an expression (not a
    bare name) that reads a tensor and an index variable in scope, as `ids[b, s]` does?"""
    if isinstance(item, (t.Name, t.PackIx, t.Slice)) or not _index_names(item, ix):
        return False
    return any(isinstance(node, t.Index) for node in _nodes(item))


def _nodes(e):
    """Every node of an expression tree."""
    yield e
    for child in _children(e):
        yield from _nodes(child)


def _show(domain) -> str:
    return shape_text(domain) if isinstance(domain, tuple) else str(domain)


__all__ = ["NotationChecker", "PackDim"]


def slice_length(lo: Dim, hi: Dim, step: Dim, dim: Dim, facts: Facts) -> Dim:
    """How many positions `lo:hi:step` keeps of an axis of `dim`, its bounds clamped to the
    axis as Python's are: `max(0, (min(hi, dim) - min(lo, dim) + step - 1) / step)`,
    simplified under the facts: `[0::2]` and `[1::2]` of an even `L` keep `L / 2` (0 of
    an empty axis), `[::2]` of `2*L` keeps `L`, `[2:9]` of 4 keeps 2.

    `min(lo, dim)` is `lo` where `lo <= dim`, and also where `lo < step`: past the end,
    `min(hi, dim) - lo + step - 1` is then in `0 .. step - 1`, a length of 0 either way."""
    if facts.prove(hi, "<=", lo):
        return Dim.const(0)
    first = lo if facts.prove(lo, "<", step) else _clamped(lo, dim, facts)
    last = _clamped(hi, dim, facts)
    n = facts.simplify(last - first if step.as_int() == 1
                       else (last - first + step - 1).floordiv(step))
    if facts.prove(lo, "<=", hi) or facts.prove_nonnegative(n):
        return n
    return Dim.maximum(0, n)


def _clamped(bound: Dim, dim: Dim, facts: Facts) -> Dim:
    if facts.prove(bound, "<=", dim):
        return bound
    return dim if facts.prove(dim, "<=", bound) else Dim.minimum(bound, dim)
