"""Ops bound to kernels: tile programs of 1 to 3 grid axes and the op bodies that define them.

Why templates with random parts: a kernel must compute exactly what its op's body computes
(else the program is wrong, docs/language.md, "Kernels"), which a free-form generator cannot
promise. Each template is a known-correct kernel shape (blocks of a vector, rows with
reductions and `cumsum`, 2-D and 3-D tiles, atomics into columns, a tiled product that
becomes `tl.dot`, loops with run-time bounds, a `while`), and the element expression that
both sides compute is random: it is generated once over the loaded tiles and written
again over the op's tensors by renaming.
"""

from __future__ import annotations

from ...syntax import tree as t
from .signature import Signature
from .exprs import E, Exprs, call, float_lit, int_lit
from .index import reduce_info
from .kernel_loops import KernelLoops
from .kernel_parts import ceil_div, i32, rename
from .scope import Gen, Scope, Var
from .types import DType, Dim, Info, Ty, dt, fits, lit_dim, scale_sum, settle

class Kernels(KernelLoops):
    """Writes a kernel and its op for values in the entry's scope, and calls the op."""

    def __init__(self, g: Gen, scope: Scope) -> None:
        self.g, self.scope = g, scope

    def call(self) -> list[t.Stmt]:
        g = self.g
        makers = [self.blocks, self.rows, self.tiles, self.grid3, self.atomics, self.dot,
                  self.runtime_loop, self.while_rows]
        saved, g.float_generic = g.float_generic, None  # kernels are written in concrete dtypes
        try:
            return g.pick(makers)()
        finally:
            g.float_generic = saved

    # ---------------------------------------------------------------- shared parts

    def kernel_dtype(self, allowed=None) -> DType | None:
        names = [d for d in (allowed or ("f32", "f32", "f16", "bf16", "i32", "f64"))
                 if d in self.g.config.dtypes]
        return dt(self.g.pick(names)) if names else None

    def argument(self, rank: int, dtype: DType, lead: tuple[Dim, ...] = (),
                 exact: bool = False) -> Var:
        """A tensor of this rank and dtype from scope (its leading dims as given), or a new
        entry parameter."""
        g = self.g
        cands = [v for v in self.scope.vars() if v.ty.rank == rank and v.ty.dtype == dtype
                 and v.info.finite and v.info.mag <= 16 and v.ty.dims[:len(lead)] == lead
                 and (v.info.same or not exact) and (v.info.frac is not None or not exact)]
        if cands and g.chance(0.7):
            return g.pick(cands)
        dims = list(lead) + [g.pick(g.dims) for _ in range(rank - len(lead))]
        Exprs(g, self.scope).new_param(dtype, tuple(dims))
        var = self.scope.root().own[-1]
        if exact and dtype.is_float:  # small integers: exact sums in any order
            params = self.scope.root().params
            params[-1].style = "ints"
            var.info = Info(-4, 4, 0, True)
        return var

    def tile_expr(self, tiles: list[Var], dtype: DType, shape: tuple[Dim, ...],
                  scalars: list[Var] = ()) -> E:
        """An element expression over loaded tiles that reads the first tile."""
        scope = Scope(kernel=True)
        for v in list(tiles) + list(scalars):
            scope.add(v)
        ex = Exprs(self.g, scope)
        e = ex.expr(dtype, shape, depth=2)
        base = E(t.Name(tiles[0].name), tiles[0].ty, tiles[0].info)
        return ex.arith(self.g.pick(["+", "*"]), base, e) or ex.minmax("max", base, e)

    def finish(self, kernel: t.Kernel, op: t.Op, sig: Signature, args: list[t.Expr],
               results: list[tuple[Ty, Info]], constructs: list[str]) -> list[t.Stmt]:
        g = self.g
        g.items += [kernel, op]
        g.count("kernel", f"kernel:grid{len(kernel.grid)}", *constructs)
        if kernel.warps is not None:
            g.count("kernel:hints")
        node = t.Call(op.name, None, tuple(t.Arg(a) for a in args))
        names = [g.fresh("k") for _ in results]
        g.kernel_results.update(names)
        for name, (ty, info) in zip(names, results):
            self.scope.add(Var(name, sig.caller_ty(ty), info))
        if len(names) == 1:
            return [t.Let(names[0], None, node)]
        return [t.LetTuple(tuple(names), node)]

    def hints(self) -> tuple[t.Expr | None, t.Expr | None]:
        if not self.g.chance(0.3):
            return None, None
        return t.IntLit(self.g.pick([1, 2, 4])), t.IntLit(self.g.pick([1, 2, 3]))

    def other(self, dtype: DType) -> tuple[list[t.Expr], Info]:
        """A masked load's `other` (or none: 0), and its facts."""
        g = self.g
        r = g.rng.random()
        if r < 0.3:
            return [], Info(0, 0)
        v = g.pick([0, 1, 2])
        lit = float_lit(float(v)) if dtype.is_float else t.IntLit(v)
        return [lit], Info(v, v)

    def new_names(self, *bases: str) -> list[str]:
        return [self.g.fresh(b) for b in bases]

    # ---------------------------------------------------------------- templates

    def blocks(self) -> list[t.Stmt]:
        """1-D blocks of B elements: masked loads of one or two vectors, a scalar
        parameter, an element expression, a masked store."""
        g = self.g
        dtype = self.kernel_dtype()
        if dtype is None:
            return []
        x = self.argument(1, dtype)
        n = x.ty.dims[0]
        y = self.argument(1, dtype, (n,)) if g.chance(0.5) else None
        sig = Signature(g)
        kn, on, bn = self.new_names("N", "N", "B")
        kb = lit_dim(g.pick([16, 32, 64, 128]))
        tile = (kb,)
        xs, ys, offs, mask, out = self.new_names("x", "y", "offs", "mask", "z")
        stmts: list[t.Stmt] = [
            t.Let(offs, None, t.Binary("+", t.Binary("*", call("program_id", t.IntLit(0)),
                                                     t.Name(bn)), i32(t.Name(bn)))),
            t.Let(mask, None, t.Binary("<", t.Name(offs), t.Name(kn)))]
        tiles, rename_map, params_k, params_o, args = [], {}, [], [], []
        for src, pname in ((x, xs), (y, ys)):
            if src is None:
                continue
            other, oinfo = self.other(dtype)
            tv = g.fresh("v")
            stmts.append(t.Let(tv, None, call("load", t.Index(t.Name(pname), (t.Name(offs),)),
                                              t.Name(mask), *other)))
            tiles.append(Var(tv, Ty(tile, dtype), src.info.join(oinfo)))
            rename_map[tv] = pname
            params_k.append(t.Param(pname, Ty((Dim(kn, n.value, t.Name(kn)),), dtype).node()))
            params_o.append(t.Param(pname, Ty((Dim(on, n.value, t.Name(on)),), dtype).node()))
            args.append(t.Name(src.name))
        e = self.tile_expr(tiles, dtype, tile)
        stmts.append(t.Effect("store", (t.Arg(t.Index(t.Name(out), (t.Name(offs),))),
                                        t.Arg(e.node), t.Arg(t.Name(mask)))))
        sig.dims[n.key] = Dim(on, n.value, t.Name(on))
        sig.back[on] = n
        warps, stages = self.hints()
        result_k = t.Param(out, Ty((Dim(kn, n.value, t.Name(kn)),), dtype).node())
        kname = g.fresh("kern")
        kernel = t.Kernel(kname, (t.Generic(kn, "Dim"), t.Generic(bn, "Dim")), tuple(params_k),
                          (result_k,), False, (ceil_div(t.Name(kn), t.Name(bn)),), warps,
                          stages, (t.Binary(">=", t.Name(bn), t.IntLit(1)),), tuple(stmts))
        rty = Ty((Dim(on, n.value, t.Name(on)),), dtype)
        body = (t.Return(rename(e.node, rename_map)),)
        op = t.Op(g.fresh("kop"), (t.Generic(on, "Dim"),), tuple(params_o), rty.node(),
                  t.KernelBinding(kname, (t.Name(on), kb.node)), (), body)
        return self.finish(kernel, op, sig, args, [(rty, e.info)],
                           ["kernel:masked_load", "kernel:store_tile"])

    def rows(self) -> list[t.Stmt]:
        """One row per program: a reduction stored as a scalar, maybe the row's total
        stored into every column, or the row's running sums (`cumsum`)."""
        g = self.g
        dtype = self.kernel_dtype()
        if dtype is None:
            return []
        x = self.argument(2, dtype, exact=True)
        r, c = x.ty.dims
        sig = Signature(g)
        kr, kc, bn, orr, oc = self.new_names("R", "C", "B", "R", "C")
        kb = lit_dim(g.pick([16, 32, 64]))
        xs, row, cols, mask, v, w = self.new_names("x", "row", "cols", "mask", "v", "w")
        other, oinfo = self.other(dtype)
        stmts: list[t.Stmt] = [
            t.Let(row, None, call("program_id", t.IntLit(0))),
            t.Let(cols, None, i32(t.Name(bn))),
            t.Let(mask, None, t.Binary("<", t.Name(cols), t.Name(kc))),
            t.Let(v, None, call("load", t.Index(t.Name(xs), (t.Name(row), t.Name(cols))),
                                t.Name(mask), *other))]
        tile = Var(v, Ty((kb,), dtype), x.info.join(oinfo))
        e = self.tile_expr([tile], dtype, (kb,))
        mode = g.pick(["sum", "max", "min", "cumsum", "spread"])
        cdim = Dim(oc, c.value, t.Name(oc))
        rdim = Dim(orr, r.value, t.Name(orr))
        where = [t.Binary(">=", t.Name(bn), t.Name(kc))]
        ident = {"sum": 0, "spread": 0, "cumsum": 0, "max": -1, "min": 1}[mode]
        if mode in ("max", "min"):  # the body's max of no columns is -inf: the kernel's
            where.append(t.Binary(">=", t.Name(kc), t.IntLit(1)))  # is not, so C >= 1
            ident = int(-e.info.mag - 1) if mode == "max" else int(e.info.mag + 1)
        idl = float_lit(float(ident)) if dtype.is_float else int_lit(ident)
        stmts.append(t.Let(w, None, call("select", t.Name(mask), e.node, idl)))
        ex = E(t.Name(w), Ty((kb,), dtype), e.info)
        red = "sum" if mode in ("spread", "cumsum") else mode
        n = c.value
        info = reduce_info(red, e.info, n, dtype) if mode != "cumsum" else \
            settle(scale_sum(e.info, n), dtype)
        if not fits(info, dtype) and info.finite:
            return []
        j = g.fresh("c")
        total = t.Reduce(red, None, (t.IxVar(j),), t.Index(t.Name(w), (t.Name(j),)))
        ename = g.fresh("e")
        op_body: list[t.Stmt] = [t.Let(ename, None, rename(e.node, {v: xs}))]
        oi, oj = g.fresh("r"), g.fresh("c")
        op_total = t.Reduce(red, None, (t.IxVar(oj),),
                            t.Index(t.Name(ename), (t.Name(oi), t.Name(oj))))
        results_k = []
        constructs = ["kernel:masked_load"]
        if mode == "cumsum":
            stmts.append(t.Effect("store", (
                t.Arg(t.Index(t.Name("out"), (t.Name(row), t.Name(cols)))),
                t.Arg(call("cumsum", t.Name(w), axis=t.IntLit(0))), t.Arg(t.Name(mask)))))
            results_k.append(t.Param("out", Ty((Dim(kr, 0, t.Name(kr)), Dim(kc, 0, t.Name(kc))),
                                               dtype).node()))
            rty = Ty((rdim, cdim), dtype)
            op_body.append(t.Return(call("cumsum", t.Name(ename), axis=t.IntLit(1))))
            results = [(rty, info)]
            constructs.append("kernel:cumsum")
        else:
            tot = g.fresh("t")
            stmts.append(t.Let(tot, None, total))
            stmts.append(t.Effect("store", (t.Arg(t.Index(t.Name("out"), (t.Name(row),))),
                                            t.Arg(t.Name(tot)))))
            results_k.append(t.Param("out", Ty((Dim(kr, 0, t.Name(kr)),), dtype).node()))
            red_name = g.fresh("y")
            op_body.append(t.LetIndex(red_name, (t.IxVar(oi),), op_total))
            results = [(Ty((rdim,), dtype), info)]
            constructs += ["kernel:scalar_store", f"kernel:reduce_{red}"]
            value: t.Expr = t.Name(red_name)
            if mode == "spread":
                stmts.append(t.Effect("store", (
                    t.Arg(t.Index(t.Name("spread"), (t.Name(row), t.Name(cols)))),
                    t.Arg(t.Name(tot)), t.Arg(t.Name(mask)))))
                results_k.append(t.Param("spread", Ty((Dim(kr, 0, t.Name(kr)),
                                                       Dim(kc, 0, t.Name(kc))), dtype).node()))
                spread = call("broadcast_to", call("reshape", t.Name(red_name),
                                                   t.ListExpr((t.Name(orr), t.IntLit(1)))),
                              t.ListExpr((t.Name(orr), t.Name(oc))))
                value = t.TupleExpr((value, spread))
                results.append((Ty((rdim, cdim), dtype), info))
                constructs.append("kernel:scalar_into_tile")
            op_body.append(t.Return(value))
            rty = None
        sig.dims.update({r.key: rdim, c.key: cdim})
        sig.back.update({orr: r, oc: c})
        kname = g.fresh("kern")
        kty = Ty((Dim(kr, 0, t.Name(kr)), Dim(kc, 0, t.Name(kc))), dtype)
        warps, stages = self.hints()
        kernel = t.Kernel(kname, (t.Generic(kr, "Dim"), t.Generic(kc, "Dim"),
                                  t.Generic(bn, "Dim")), (t.Param(xs, kty.node()),),
                          tuple(results_k), len(results_k) > 1, (t.Name(kr),), warps, stages,
                          tuple(where), tuple(stmts))
        rtys = [ty for ty, _ in results]
        rnode = rtys[0].node() if len(rtys) == 1 else t.TupleType(tuple(x.node() for x in rtys))
        op = t.Op(g.fresh("kop"), (t.Generic(orr, "Dim"), t.Generic(oc, "Dim")),
                  (t.Param(xs, Ty((rdim, cdim), dtype).node()),), rnode,
                  t.KernelBinding(kname, (t.Name(orr), t.Name(oc), t.IntLit(kb.value))), (),
                  tuple(op_body))
        return self.finish(kernel, op, sig, [t.Name(x.name)], results, constructs)

    # ------------------------------------------------------------ 2-D and 3-D tiles

    def tiles(self) -> list[t.Stmt]:
        return self._tiles(batch=False)

    def grid3(self) -> list[t.Stmt]:
        return self._tiles(batch=True)

    def _tiles(self, batch: bool) -> list[t.Stmt]:
        """[BM, BN] tiles of a matrix (grid of two axes), or of each matrix of a batch
        (three axes: the batch index is a scalar next to two tile indices), with a masked
        row vector broadcast over each tile; masks built in index notation."""
        g = self.g
        dtype = self.kernel_dtype()
        if dtype is None:
            return []
        rank = 3 if batch else 2
        x = self.argument(rank, dtype)
        dims = x.ty.dims
        bias = self.argument(1, dtype, (dims[-1],)) if g.chance(0.5) else None
        names = self.new_names(*(["B"] if batch else []), "M", "N")
        onames = self.new_names(*(["B"] if batch else []), "M", "N")
        bm, bn = self.new_names("BM", "BN")
        tm, tn = lit_dim(g.pick([1, 2, 4, 8, 16])), lit_dim(g.pick([4, 8, 16, 32]))
        xs, bs, rows, cols, inside, tile, bv, out = self.new_names(
            "x", "b", "rows", "cols", "inside", "tile", "bv", "y")
        pid = lambda k: call("program_id", t.IntLit(k))  # noqa: E731
        a0 = 1 if batch else 0
        stmts: list[t.Stmt] = []
        lead: tuple[t.Expr, ...] = ()
        if batch:
            bi = g.fresh("batch")
            stmts.append(t.Let(bi, None, pid(0)))
            lead = (t.Name(bi),)
        m, n = names[-2], names[-1]
        i, j = g.fresh("i"), g.fresh("j")
        stmts += [
            t.Let(rows, None, t.Binary("+", t.Binary("*", pid(a0), t.Name(bm)), i32(t.Name(bm)))),
            t.Let(cols, None, t.Binary("+", t.Binary("*", pid(a0 + 1), t.Name(bn)),
                                       i32(t.Name(bn)))),
            t.LetIndex(inside, (t.IxVar(i), t.IxVar(j)), t.Binary(
                "&&", t.Binary("<", t.Index(t.Name(rows), (t.Name(i),)), t.Name(m)),
                t.Binary("<", t.Index(t.Name(cols), (t.Name(j),)), t.Name(n))))]
        other, oinfo = self.other(dtype)
        stmts.append(t.Let(tile, None, call("load", t.Index(t.Name(xs), lead + (
            t.Name(rows), t.Name(cols))), t.Name(inside), *other)))
        tiles = [Var(tile, Ty((tm, tn), dtype), x.info.join(oinfo))]
        rename_map = {tile: xs}
        kdims = [Dim(k, d.value, t.Name(k)) for k, d in zip(names, dims)]
        odims = [Dim(k, d.value, t.Name(k)) for k, d in zip(onames, dims)]
        params_k = [t.Param(xs, Ty(tuple(kdims), dtype).node())]
        params_o = [t.Param(xs, Ty(tuple(odims), dtype).node())]
        args: list[t.Expr] = [t.Name(x.name)]
        if bias is not None:
            stmts.append(t.Let(bv, None, call("load", t.Index(t.Name(bs), (t.Name(cols),)),
                                              t.Binary("<", t.Name(cols), t.Name(n)))))
            tiles.append(Var(bv, Ty((tn,), dtype), bias.info.join(Info(0, 0))))
            rename_map[bv] = bs
            params_k.append(t.Param(bs, Ty((kdims[-1],), dtype).node()))
            params_o.append(t.Param(bs, Ty((odims[-1],), dtype).node()))
            args.append(t.Name(bias.name))
        e = self.tile_expr(tiles, dtype, (tm, tn))
        stmts.append(t.Effect("store", (t.Arg(t.Index(t.Name(out), lead + (
            t.Name(rows), t.Name(cols)))), t.Arg(e.node), t.Arg(t.Name(inside)))))
        sig = Signature(g)
        for d, od in zip(dims, odims):
            sig.dims.setdefault(d.key, od)
            sig.back[od.key] = d
        grid = ((t.Name(names[0]),) if batch else ()) + (
            ceil_div(t.Name(m), t.Name(bm)), ceil_div(t.Name(n), t.Name(bn)))
        kname = g.fresh("kern")
        warps, stages = self.hints()
        kernel = t.Kernel(kname, tuple(t.Generic(k, "Dim") for k in names + [bm, bn]),
                          tuple(params_k), (t.Param(out, Ty(tuple(kdims), dtype).node()),),
                          False, grid, warps, stages,
                          (t.Binary(">=", t.Name(bm), t.IntLit(1)),
                           t.Binary(">=", t.Name(bn), t.IntLit(1))), tuple(stmts))
        rty = Ty(tuple(odims), dtype)
        body = rename(e.node, rename_map)
        op = t.Op(g.fresh("kop"), tuple(t.Generic(k, "Dim") for k in onames), tuple(params_o),
                  rty.node(), t.KernelBinding(kname, tuple(t.Name(k) for k in onames) + (
                      t.IntLit(tm.value), t.IntLit(tn.value))), (), (t.Return(body),))
        return self.finish(kernel, op, sig, args, [(rty, e.info)],
                           ["kernel:masked_load", "kernel:index_mask", "kernel:store_tile"]
                           + (["kernel:batch_scalar_index"] if batch else []))
