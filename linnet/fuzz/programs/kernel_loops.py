"""Kernel templates of atomics, tile products and loops (`KernelLoops`, a part of
`linnet.fuzz.programs.kernels.Kernels`, whose shared parts these methods use: `argument`,
`tile_expr`, `finish`, `hints`, `other`, `new_names`, `kernel_dtype`, and `g`, `scope`)."""

from __future__ import annotations

from ...syntax import tree as t
from .signature import Signature
from .exprs import Exprs, call, float_lit
from .index import reduce_info
from .kernel_parts import ATOMIC_DTYPES, ceil_div, i32
from .scope import Var
from .types import Dim, Info, Ty, dt, fits, lit_dim, mul_info


class KernelLoops:
    """Atomics into columns, a tiled product that becomes `tl.dot`, loops with run-time
    bounds and a `while`."""

    # ------------------------------------------------------------ atomics

    def atomics(self) -> list[t.Stmt]:
        """Each program adds (or maxes, mins) its row into column results, atomically;
        sometimes also its row total into one position (a scalar atomic)."""
        g = self.g
        names = [d for d in ATOMIC_DTYPES + ("f16",) if d in g.config.dtypes]
        if not names:
            return []
        dtype = dt(g.pick(names))
        kinds = ["atomic_add"] if dtype.name == "f16" else \
            [k for k in ("atomic_add", "atomic_max", "atomic_min") if g.chance(0.6)] or \
            ["atomic_max"]
        x = self.argument(2, dtype, exact=True)
        r, c = x.ty.dims
        kr, kc, bn, orr, oc = self.new_names("R", "C", "B", "R", "C")
        xs, row, cols, mask, v = self.new_names("x", "row", "cols", "mask", "v")
        stmts: list[t.Stmt] = [
            t.Let(row, None, call("program_id", t.IntLit(0))),
            t.Let(cols, None, i32(t.Name(bn))),
            t.Let(mask, None, t.Binary("<", t.Name(cols), t.Name(kc))),
            t.Let(v, None, call("load", t.Index(t.Name(xs), (t.Name(row), t.Name(cols))),
                                t.Name(mask)))]
        kdims = (Dim(kr, 0, t.Name(kr)), Dim(kc, 0, t.Name(kc)))
        rdim, cdim = Dim(orr, r.value, t.Name(orr)), Dim(oc, c.value, t.Name(oc))
        results_k, results, op_body, values = [], [], [], []
        for kind in kinds:
            red = {"atomic_add": "sum", "atomic_max": "max", "atomic_min": "min"}[kind]
            info = reduce_info(red, x.info.join(Info(0, 0)), r.value, dtype)
            if not fits(info, dtype) and info.finite:
                continue
            out = g.fresh("col")
            stmts.append(t.Effect(kind, (t.Arg(t.Index(t.Name(out), (t.Name(cols),))),
                                         t.Arg(t.Name(v)), t.Arg(t.Name(mask)))))
            results_k.append(t.Param(out, Ty((kdims[1],), dtype).node()))
            rr, cc, y = g.fresh("r"), g.fresh("c"), g.fresh("y")
            op_body.append(t.LetIndex(y, (t.IxVar(cc),), t.Reduce(
                red, None, (t.IxVar(rr),), t.Index(t.Name(xs), (t.Name(rr), t.Name(cc))))))
            values.append(t.Name(y))
            results.append((Ty((cdim,), dtype), info))
            g.count(f"kernel:{kind}:{dtype.name}")
        if dtype.name in ("f32", "i32", "i64", "f16") and g.chance(0.4):
            info = reduce_info("sum", x.info, r.value * c.value, dtype)
            if fits(info, dtype):
                out, k = g.fresh("total"), g.fresh("k")
                stmts.append(t.Effect("atomic_add", (
                    t.Arg(t.Index(t.Name(out), (t.IntLit(0),))),
                    t.Arg(t.Reduce("sum", None, (t.IxVar(k),),
                                   t.Index(t.Name(v), (t.Name(k),)))))))
                results_k.append(t.Param(out, Ty((lit_dim(1),), dtype).node()))
                rr, cc, s = g.fresh("r"), g.fresh("c"), g.fresh("s")
                op_body.append(t.Let(s, None, t.Reduce("sum", None, (t.IxVar(rr), t.IxVar(cc)),
                                                      t.Index(t.Name(xs), (t.Name(rr),
                                                                           t.Name(cc))))))
                values.append(call("reshape", t.Name(s), t.ListExpr((t.IntLit(1),))))
                results.append((Ty((lit_dim(1),), dtype), info))
                g.count("kernel:atomic_scalar")
        if not results:
            return []
        op_body.append(t.Return(values[0] if len(values) == 1 else t.TupleExpr(tuple(values))))
        sig = Signature(g)
        sig.dims.update({r.key: rdim, c.key: cdim})
        sig.back.update({orr: r, oc: c})
        kname = g.fresh("kern")
        kernel = t.Kernel(kname, (t.Generic(kr, "Dim"), t.Generic(kc, "Dim"),
                                  t.Generic(bn, "Dim")), (t.Param(xs, Ty(kdims, dtype).node()),),
                          tuple(results_k), len(results_k) > 1, (t.Name(kr),), None, None,
                          (t.Binary(">=", t.Name(bn), t.Name(kc)),), tuple(stmts))
        rtys = [ty for ty, _ in results]
        rnode = rtys[0].node() if len(rtys) == 1 else t.TupleType(tuple(x.node() for x in rtys))
        op = t.Op(g.fresh("kop"), (t.Generic(orr, "Dim"), t.Generic(oc, "Dim")),
                  (t.Param(xs, Ty((rdim, cdim), dtype).node()),), rnode,
                  t.KernelBinding(kname, (t.Name(orr), t.Name(oc), t.IntLit(32))), (),
                  tuple(op_body))
        return self.finish(kernel, op, sig, [t.Name(x.name)], results, ["kernel:atomic"])

    # ------------------------------------------------------------ tile products

    def dot(self) -> list[t.Stmt]:
        """A tiled matrix product: tiles of at least 16 on every side, a loop over K
        accumulating `sum[k] a[i, k] * b[k, j]` (which becomes `tl.dot`)."""
        g = self.g
        if "f32" not in g.config.dtypes:
            return []
        dtype = dt("f32")
        a = self.argument(2, dtype, exact=True)
        m, k = a.ty.dims
        b = self.argument(2, dtype, (k,), exact=True)
        n = b.ty.dims[1]
        km, kk, kn, bm, bn, bk = self.new_names("M", "K", "N", "BM", "BN", "BK")
        om, ok, on = self.new_names("M", "K", "N")
        t16 = [lit_dim(g.pick([16, 32])) for _ in range(3)]
        as_, bs, rows, cols, acc, tt, ks, at, bt, p, out = self.new_names(
            "a", "b", "rows", "cols", "acc", "t", "ks", "at", "bt", "p", "c")
        i, j, kx = g.fresh("i"), g.fresh("j"), g.fresh("k")
        pid = lambda q: call("program_id", t.IntLit(q))  # noqa: E731
        ma, mb, mc = self.new_names("ma", "mb", "mc")
        inner = (
            t.Let(ks, None, t.Binary("+", t.Binary("*", call("cast", t.Name(tt), generics=(
                t.Name("i32"),)), t.Name(bk)), i32(t.Name(bk)))),
            self.mask2(ma, rows, km, ks, kk),
            self.mask2(mb, ks, kk, cols, kn),
            t.Let(at, None, call("load", t.Index(t.Name(as_), (t.Name(rows), t.Name(ks))),
                                 t.Name(ma), float_lit(0.0))),
            t.Let(bt, None, call("load", t.Index(t.Name(bs), (t.Name(ks), t.Name(cols))),
                                 t.Name(mb), float_lit(0.0))),
            t.LetIndex(p, (t.IxVar(i), t.IxVar(j)), t.Reduce("sum", None, (t.IxVar(kx),), t.Binary(
                "*", t.Index(t.Name(at), (t.Name(i), t.Name(kx))),
                t.Index(t.Name(bt), (t.Name(kx), t.Name(j)))))),
            t.Assign(acc, t.Binary("+", t.Name(acc), t.Name(p))))
        stmts = (
            t.Let(rows, None, t.Binary("+", t.Binary("*", pid(0), t.Name(bm)), i32(t.Name(bm)))),
            t.Let(cols, None, t.Binary("+", t.Binary("*", pid(1), t.Name(bn)), i32(t.Name(bn)))),
            t.VarDecl(acc, None, call("fill", t.ListExpr((t.Name(bm), t.Name(bn))),
                                      float_lit(0.0), generics=(t.Name("f32"),))),
            t.For(tt, t.IntLit(0), ceil_div(t.Name(kk), t.Name(bk)), inner),
            self.mask2(mc, rows, km, cols, kn),
            t.Effect("store", (t.Arg(t.Index(t.Name(out), (t.Name(rows), t.Name(cols)))),
                               t.Arg(t.Name(acc)), t.Arg(t.Name(mc)))))
        kty = lambda *ds: Ty(tuple(Dim(d, 0, t.Name(d)) for d in ds), dtype).node()  # noqa
        kname = g.fresh("kern")
        kernel = t.Kernel(kname, tuple(t.Generic(q, "Dim") for q in (km, kk, kn, bm, bn, bk)),
                          (t.Param(as_, kty(km, kk)), t.Param(bs, kty(kk, kn))),
                          (t.Param(out, kty(km, kn)),), False,
                          (ceil_div(t.Name(km), t.Name(bm)), ceil_div(t.Name(kn), t.Name(bn))),
                          None, None, tuple(t.Binary(">=", t.Name(q), t.IntLit(16))
                                            for q in (bm, bn, bk)), stmts)
        mm, nn, kk2 = g.fresh("m"), g.fresh("n"), g.fresh("k")
        y = g.fresh("y")
        info = reduce_info("sum", mul_info(a.info, b.info), k.value, dtype)
        if not fits(info, dtype):
            return []
        body = (t.LetIndex(y, (t.IxVar(mm), t.IxVar(nn)), t.Reduce("sum", None, (t.IxVar(kk2),),
                t.Binary("*", t.Index(t.Name(as_), (t.Name(mm), t.Name(kk2))),
                         t.Index(t.Name(bs), (t.Name(kk2), t.Name(nn)))))), t.Return(t.Name(y)))
        sig = Signature(g)
        dm, dk, dn = (Dim(q, d.value, t.Name(q)) for q, d in ((om, m), (ok, k), (on, n)))
        for d, od in ((m, dm), (k, dk), (n, dn)):
            sig.dims.setdefault(d.key, od)
            sig.back[od.key] = d
        rty = Ty((dm, dn), dtype)
        op = t.Op(g.fresh("kop"), tuple(t.Generic(q, "Dim") for q in (om, ok, on)),
                  (t.Param(as_, Ty((dm, dk), dtype).node()), t.Param(bs, Ty((dk, dn), dtype).node())),
                  rty.node(), t.KernelBinding(kname, (t.Name(om), t.Name(ok), t.Name(on)) + tuple(
                      t.IntLit(q.value) for q in t16)), (), body)
        return self.finish(kernel, op, sig, [t.Name(a.name), t.Name(b.name)], [(rty, info)],
                           ["kernel:dot", "kernel:for"])

    def mask2(self, name: str, rows: str, m: str, cols: str, n: str) -> t.Stmt:
        """`let name[i, j] = rows[i] < M && cols[j] < N`: a tile's mask."""
        i, j = self.g.fresh("i"), self.g.fresh("j")
        return t.LetIndex(name, (t.IxVar(i), t.IxVar(j)), t.Binary(
            "&&", t.Binary("<", t.Index(t.Name(rows), (t.Name(i),)), t.Name(m)),
            t.Binary("<", t.Index(t.Name(cols), (t.Name(j),)), t.Name(n))))

    # ------------------------------------------------------------ loops

    def runtime_loop(self) -> list[t.Stmt]:
        """Sums of the first n columns of each row, n a run-time `i32` parameter: the
        loop's bound is computed at run time (no trips for n <= 0)."""
        g = self.g
        if not {"f32", "i32"} <= set(g.config.dtypes):
            return []
        dtype = dt("f32")
        x = self.argument(2, dtype, exact=True)
        r, c = x.ty.dims
        count = self.count_param(c.value)
        kr, kc, br, bc, orr, oc = self.new_names("R", "C", "BR", "BC", "R", "C")
        xs, ns, rows, acc, tt, cols, inside, tile, part, out = self.new_names(
            "x", "n", "rows", "acc", "t", "cols", "inside", "tile", "part", "y")
        i, j = g.fresh("i"), g.fresh("j")
        inner = (
            t.Let(cols, None, t.Binary("+", t.Binary("*", call("cast", t.Name(tt), generics=(
                t.Name("i32"),)), t.Name(bc)), i32(t.Name(bc)))),
            t.LetIndex(inside, (t.IxVar(i), t.IxVar(j)), t.Binary("&&", t.Binary(
                "&&", t.Binary("<", t.Index(t.Name(rows), (t.Name(i),)), t.Name(kr)),
                t.Binary("<", t.Index(t.Name(cols), (t.Name(j),)), t.Name(kc))),
                t.Binary("<", t.Index(t.Name(cols), (t.Name(j),)), t.Name(ns)))),
            t.Let(tile, None, call("load", t.Index(t.Name(xs), (t.Name(rows), t.Name(cols))),
                                   t.Name(inside), float_lit(0.0))),
            t.LetIndex(part, (t.IxVar(i),), t.Reduce("sum", None, (t.IxVar(j),), t.Index(
                t.Name(tile), (t.Name(i), t.Name(j))))),
            t.Assign(acc, t.Binary("+", t.Name(acc), t.Name(part))))
        stmts = (
            t.Let(rows, None, t.Binary("+", t.Binary("*", call("program_id", t.IntLit(0)),
                                                     t.Name(br)), i32(t.Name(br)))),
            t.VarDecl(acc, None, call("fill", t.ListExpr((t.Name(br),)), float_lit(0.0),
                                      generics=(t.Name("f32"),))),
            t.For(tt, t.IntLit(0), ceil_div(t.Name(ns), t.Name(bc)), inner),
            t.Effect("store", (t.Arg(t.Index(t.Name(out), (t.Name(rows),))), t.Arg(t.Name(acc)),
                               t.Arg(t.Binary("<", t.Name(rows), t.Name(kr))))))
        pos, y, rr, cc = g.fresh("pos"), g.fresh("y"), g.fresh("r"), g.fresh("c")
        body = (t.Let(pos, None, i32(t.Name(oc))),
                t.LetIndex(y, (t.IxVar(rr),), t.Reduce("sum", None, (t.IxVar(cc),), call(
                    "select", t.Binary("<", t.Index(t.Name(pos), (t.Name(cc),)), t.Name(ns)),
                    t.Index(t.Name(xs), (t.Name(rr), t.Name(cc))), float_lit(0.0)))),
                t.Return(t.Name(y)))
        info = reduce_info("sum", x.info, c.value, dtype)
        return self.loop_op(x, count, (kr, kc, br, bc), (orr, oc), (xs, ns), out, stmts, body,
                            info, (g.pick([4, 8, 16]), g.pick([16, 32])))

    def count_param(self, cols: int) -> Var:
        """An `i32` scalar input counting columns (negative, zero or past the end too)."""
        cands = [v for v in self.scope.vars() if v.ty.rank == 0 and v.ty.dtype.name == "i32"
                 and v.info.finite]
        if cands and self.g.chance(0.5):
            return self.g.pick(cands)
        Exprs(self.g, self.scope).new_param(dt("i32"), ())
        var = self.scope.root().own[-1]
        var.info = Info(-3, cols + 3)
        return var

    def loop_op(self, x: Var, count: Var, knames, onames, pnames, out, stmts, body, info,
                tiles) -> list[t.Stmt]:
        g = self.g
        r, c = x.ty.dims
        kr, kc, br, bc = knames
        orr, oc = onames
        xs, ns = pnames
        dtype = x.ty.dtype
        kty = Ty((Dim(kr, 0, t.Name(kr)), Dim(kc, 0, t.Name(kc))), dtype)
        kname = g.fresh("kern")
        kernel = t.Kernel(kname, tuple(t.Generic(q, "Dim") for q in knames),
                          (t.Param(xs, kty.node()), t.Param(ns, t.TypeName("i32"))),
                          (t.Param(out, Ty((Dim(kr, 0, t.Name(kr)),), dtype).node()),), False,
                          (ceil_div(t.Name(kr), t.Name(br)),), None, None,
                          (t.Binary(">=", t.Name(br), t.IntLit(1)),
                           t.Binary(">=", t.Name(bc), t.IntLit(1))), stmts)
        rdim, cdim = Dim(orr, r.value, t.Name(orr)), Dim(oc, c.value, t.Name(oc))
        sig = Signature(g)
        sig.dims.update({r.key: rdim, c.key: cdim})
        sig.back.update({orr: r, oc: c})
        rty = Ty((rdim,), dtype)
        op = t.Op(g.fresh("kop"), (t.Generic(orr, "Dim"), t.Generic(oc, "Dim")),
                  (t.Param(xs, Ty((rdim, cdim), dtype).node()), t.Param(ns, t.TypeName("i32"))),
                  rty.node(), t.KernelBinding(kname, (t.Name(orr), t.Name(oc)) + tuple(
                      t.IntLit(q) for q in tiles)), (), body)
        return self.finish(kernel, op, sig, [t.Name(x.name), t.Name(count.name)],
                           [(rty, info)], ["kernel:for", "kernel:runtime_bound"])

    def while_rows(self) -> list[t.Stmt]:
        """Row maxima walked by a `while` over tiles of B columns (C >= 1: the body's max
        of no columns is -inf)."""
        g = self.g
        if "f32" not in g.config.dtypes:
            return []
        dtype = dt("f32")
        x = self.argument(2, dtype)
        r, c = x.ty.dims
        kr, kc, bn, orr, oc = self.new_names("R", "C", "B", "R", "C")
        xs, row, start, best, cols, mask, v, out = self.new_names(
            "x", "row", "start", "best", "cols", "mask", "v", "y")
        low = float_lit(-(x.info.mag + 1))
        k = g.fresh("c")
        inner = (
            t.Let(cols, None, t.Binary("+", call("cast", t.Name(start), generics=(
                t.Name("i32"),)), i32(t.Name(bn)))),
            t.Let(mask, None, t.Binary("<", t.Name(cols), t.Name(kc))),
            t.Let(v, None, call("load", t.Index(t.Name(xs), (t.Name(row), t.Name(cols))),
                                t.Name(mask), low)),
            t.Assign(best, call("max", t.Name(best), t.Reduce("max", None, (t.IxVar(k),),
                                                               t.Index(t.Name(v), (t.Name(k),))))),
            t.Assign(start, t.Binary("+", t.Name(start), t.Name(bn))))
        stmts = (
            t.Let(row, None, call("program_id", t.IntLit(0))),
            t.VarDecl(start, None, t.IntLit(0)),
            t.VarDecl(best, t.TypeName("f32"), low),
            t.While(t.Binary("<", t.Name(start), t.Name(kc)), inner),
            t.Effect("store", (t.Arg(t.Index(t.Name(out), (t.Name(row),))), t.Arg(t.Name(best)))))
        kty = Ty((Dim(kr, 0, t.Name(kr)), Dim(kc, 0, t.Name(kc))), dtype)
        kname = g.fresh("kern")
        kernel = t.Kernel(kname, (t.Generic(kr, "Dim"), t.Generic(kc, "Dim"),
                                  t.Generic(bn, "Dim")), (t.Param(xs, kty.node()),),
                          (t.Param(out, Ty((Dim(kr, 0, t.Name(kr)),), dtype).node()),), False,
                          (t.Name(kr),), None, None,
                          (t.Binary(">=", t.Name(bn), t.IntLit(1)),
                           t.Binary(">=", t.Name(kc), t.IntLit(1))), stmts)
        rdim, cdim = Dim(orr, r.value, t.Name(orr)), Dim(oc, c.value, t.Name(oc))
        y, rr, cc = g.fresh("y"), g.fresh("r"), g.fresh("c")
        body = (t.LetIndex(y, (t.IxVar(rr),), t.Reduce("max", None, (t.IxVar(cc),), t.Index(
            t.Name(xs), (t.Name(rr), t.Name(cc))))), t.Return(t.Name(y)))
        sig = Signature(g)
        sig.dims.update({r.key: rdim, c.key: cdim})
        sig.back.update({orr: r, oc: c})
        rty = Ty((rdim,), dtype)
        op = t.Op(g.fresh("kop"), (t.Generic(orr, "Dim"), t.Generic(oc, "Dim")),
                  (t.Param(xs, Ty((rdim, cdim), dtype).node()),), rty.node(),
                  t.KernelBinding(kname, (t.Name(orr), t.Name(oc), t.IntLit(g.pick([16, 32])))),
                  (), body)
        info = reduce_info("max", x.info, c.value, dtype)
        return self.finish(kernel, op, sig, [t.Name(x.name)], [(rty, info)],
                           ["kernel:while"])
