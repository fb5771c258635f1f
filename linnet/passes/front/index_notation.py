"""Index notation for `elaborate`: `let y[i, j] = ...` and reductions as `Comprehension`s.

The mixin `IndexNotation` of the body translator (`elaborator.BodyTranslator`) and
the `Notation` it builds: index variables brought into scope under names
unique in the comprehension, their extents learned from the accesses that
name them, and each subexpression that reads no index computed once outside
and entered as an `IxScalar`. (A `fn` called on elements is expanded by
`BodyTranslator.ix_fn_call`, which builds a body translator of its own.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...ir import tensor as ir
from ...syntax import tree as t
from .vocabulary import BINARY, ELEMENTWISE, ElaborationError, IX_NODES, value_dtype
from .surface_walks import child_nodes


@dataclass
class Notation:
    """One comprehension being built: index extents (a tuple for a pack) and names taken."""
    extents: dict[str, object] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)


class IndexNotation:
    """Translates index notation into `Ix*` expressions of one comprehension."""

    def enter_notation(self) -> tuple:
        """Start a comprehension: no index in scope yet, extents learned from accesses."""
        saved = (self.ix, self.nt)
        self.ix, self.nt = {}, Notation()
        self.dep.clear()
        return saved

    def leave_notation(self, saved: tuple) -> None:
        self.ix, self.nt = saved
        self.dep.clear()

    def bind_ix(self, indices: tuple[t.IxVar, ...]) -> None:
        """Bring index variables into scope, each under a name unique in the comprehension."""
        for v in indices:
            name, n = v.name, 0
            while name in self.nt.taken:
                n += 1
                name = f"{v.name}_{n}"
            self.nt.taken.add(name)
            self.ix[v.name] = name
        self.dep.clear()

    def ix_axes(self, indices: tuple[t.IxVar, ...]) -> tuple[tuple[str, int], ...]:
        """The (name, extent) axes of index variables, a pack `*s` as `s.0`, `s.1`, ..."""
        axes = []
        for v in indices:
            base = self.ix[v.name]
            extent = self.nt.extents.get(base)
            if extent is None:
                raise ElaborationError(f"index `{v.name}` indexes nothing", v.span, "E3103")
            if v.pack:
                axes.extend((f"{base}.{k}", d) for k, d in enumerate(extent))
            else:
                axes.append((base, extent))
        return tuple(axes)

    def depends(self, e) -> bool:
        """Does e read an index variable in scope (or a value computed from one)?

        Memoized per node (cleared whenever the index scope changes), so a deep
        expression in index notation is walked once, not once per level.
        """
        found = self.dep.get(id(e))
        if found is None:
            if isinstance(e, t.Index) and any(_ix_name(i) in self.ix for i in e.items):
                found = True
            elif isinstance(e, t.Name):
                found = isinstance(self.env.lookup(e.id), IX_NODES)
            else:
                found = any(self.depends(c) for c in child_nodes(e))
            self.dep[id(e)] = found
        return found

    def ixe(self, e: t.Expr, want: str | None = None) -> ir.IxExpr:
        """e as an index expression; what reads no index is computed once, outside."""
        if not self.depends(e):
            saved = self.ix, self.nt
            self.ix, self.nt = None, None
            try:
                atom = self.expr(e, want)
            finally:
                self.ix, self.nt = saved
            if atom.type.rank:
                raise ElaborationError("not implemented yet: a tensor operand inside index "
                                       "notation", e.span)
            return ir.IxScalar(atom, atom.type.dtype)
        method = getattr(self, "ix_" + type(e).__name__, None)
        if method is None:
            raise ElaborationError(f"not implemented yet: {type(e).__name__} in index "
                                   "notation", e.span)
        return method(e, want)

    def ix_Index(self, e: t.Index, want: str | None) -> ir.IxExpr:
        """`x[i, *s, k]`: an access naming one index per axis; it fixes their extents.

        The indexed tensor may be computed (`iota<i32>(N)[i]`): it is then computed once,
        before the comprehension. A compile-time position (`x[r, 0]`) picks its axis's
        element by indexing the tensor first, so the access names index variables only.
        An integer expression reading an index (`table[ids[b, s], h]`) makes the access
        a gather, whose gathered axes fix no extent."""
        x, items = self.fix_positions(self.indexed(e.base), e.items)
        shape = x.type.shape
        width = len(shape) - (len(items) - sum(isinstance(i, t.PackIx) for i in items))
        positions: list = []
        for item in items:
            axis = len(positions)
            if isinstance(item, t.PackIx):
                base = self.ix[item.name]
                self.nt.extents.setdefault(base, tuple(shape[axis:axis + width]))
                positions.extend(f"{base}.{k}" for k in range(width))
            elif _ix_name(item) in self.ix:
                self.nt.extents.setdefault(self.ix[_ix_name(item)], shape[axis])
                positions.append(self.ix[_ix_name(item)])
            else:
                positions.append(self.ixe(item))
        if all(isinstance(p, str) for p in positions):
            return ir.IxAccess(x, tuple(positions), x.type.dtype)
        return ir.IxGather(x, tuple(positions), x.type.dtype)

    def is_gathered(self, item) -> bool:
        """Is this position a gather: neither a pack, an index variable nor a compile-time
        integer, but an integer expression reading an index (the checker's rule)?"""
        return (not isinstance(item, (t.PackIx, t.Slice)) and _ix_name(item) not in self.ix
                and self.depends(item))

    def indexed(self, base: t.Expr) -> ir.Atom:
        """The tensor an access in index notation reads: a variable, or an expression
        (which reads no index variable) computed outside the comprehension."""
        if isinstance(base, t.Name):
            return self.env.lookup(base.id)
        saved = self.ix, self.nt
        self.ix, self.nt = None, None
        try:
            return self.expr(base)
        finally:
            self.ix, self.nt = saved

    def fix_positions(self, x: ir.Atom, items: tuple) -> tuple[ir.Atom, tuple]:
        """x with its axes at compile-time positions dropped (an `index` prim), and the
        items left: the index variables and packs."""
        if all(isinstance(i, t.PackIx) or _ix_name(i) in self.ix or self.is_gathered(i)
               for i in items):
            return x, items
        width = x.type.rank - (len(items) - sum(isinstance(i, t.PackIx) for i in items))
        picks, kept, shape, axis = [], [], [], 0
        for item in items:
            span = width if isinstance(item, t.PackIx) else 1
            extents = x.type.shape[axis:axis + span]
            if isinstance(item, t.PackIx) or _ix_name(item) in self.ix \
                    or self.is_gathered(item):
                picks.extend(("slice", 0, n, 1) for n in extents)
                shape.extend(extents)
                kept.append(item)
            else:
                picks.append(("at", self.const_int(item)))
            axis += span
        ty = ir.TType(tuple(shape), x.type.dtype)
        picked = self.b.emit(ir.Prim("index", (x,), ty, (("items", tuple(picks)),)), "pick")
        return picked, tuple(kept)

    def ix_Name(self, e: t.Name, want: str | None) -> ir.IxExpr:
        return self.env.lookup(e.id)

    def ix_Unary(self, e: t.Unary, want: str | None) -> ir.IxExpr:
        x = self.ixe(e.operand, want)
        if e.op == "+":
            return x
        return ir.IxPrim("neg" if e.op == "-" else "not", (x,), self.dtype_of(e, want))

    def ix_Binary(self, e: t.Binary, want: str | None) -> ir.IxExpr:
        ty = self.type_of(e, want)
        side = self.operand_dtype(e, ty)
        return ir.IxPrim(BINARY[e.op], (self.ixe(e.left, side), self.ixe(e.right, side)),
                         ty.dtype)

    def ix_Reduce(self, e: t.Reduce, want: str | None) -> ir.IxReduce:
        """`op[k, ...] body`, accumulated in the reduction's dtype; its indices are in
        scope for the body only."""
        saved = dict(self.ix)
        self.bind_ix(e.indices)
        try:
            body = self.ixe(e.body)
            axes = self.ix_axes(e.indices)
        finally:
            self.ix = saved
            self.dep.clear()
        return ir.IxReduce(e.op, axes, body, self.dtype_of(e))

    def ix_If(self, e: t.If, want: str | None) -> ir.IxExpr:
        """An `if` on elements is a `select` (both branches are pure)."""
        dtype = self.dtype_of(e, want)
        cond = self.ixe(e.cond)
        then, orelse = self.ix_block(e.then, dtype), self.ix_block(e.orelse, dtype)
        return ir.IxPrim("select", (cond, then, orelse), dtype)

    def ix_block(self, b: t.Block, want: str | None) -> ir.IxExpr:
        self.env.push()
        try:
            self.ix_stmts(b.stmts)
            return self.ixe(b.value, want)
        finally:
            self.env.pop()
            self.dep.clear()

    def ix_stmts(self, stmts: tuple[t.Stmt, ...]) -> None:
        """Statements on elements: only `let`s, bound to index expressions when they
        read an index."""
        for s in stmts:
            if isinstance(s, t.Let) and not isinstance(s.value, t.ForExpr) \
                    and self.depends(s.value):
                self.env.define(s.name, self.ixe(s.value, value_dtype(self.val(s))))
                self.dep.clear()
            elif isinstance(s, (t.Let, t.VarDecl)) and not self.depends(s.value):
                self.stmt(s)
            else:
                raise ElaborationError("not implemented yet: this statement in a function "
                                       "applied inside index notation", s.span)

    def ix_Call(self, e: t.Call, want: str | None) -> ir.IxExpr:
        """Elementwise prelude calls become IxPrims (same op names); a fn expands."""
        item = self.globals.items.get(e.callee)
        if item is not None:
            return self.ix_fn_call(e, item)
        if e.callee not in ELEMENTWISE:
            raise ElaborationError(f"not implemented yet: `{e.callee}` inside index notation",
                                   e.span)
        dtype = self.dtype_of(e, want)
        args = self.args(e)
        if e.callee == "cast":
            return ir.IxPrim("cast", (self.ixe(args[0]),), dtype)
        if e.callee == "select":
            return ir.IxPrim("select", (self.ixe(args[0]), self.ixe(args[1], dtype),
                                        self.ixe(args[2], dtype)), dtype)
        return ir.IxPrim(e.callee, tuple(self.ixe(a, dtype) for a in args), dtype)


def _ix_name(item) -> str | None:
    if isinstance(item, t.PackIx):
        return item.name
    return item.id if isinstance(item, t.Name) else None
