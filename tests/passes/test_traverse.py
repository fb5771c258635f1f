"""The shared traversal: copying, overriding one node kind, emitting, substitution, analyses."""

from __future__ import annotations

import numpy as np

from linnet.ir import tensor as ir
from linnet.passes.traverse import (NameSupply, Rewriter, expr_free_vars, free_vars, func_names,
                                     substitute, uses)
from tests.passes.middle.test_lower_index_notation import T, V, Body, lit, program, run


def nested_program() -> ir.Program:
    """exp in the entry, inside an If, a Loop, a While, and a grad clause."""
    x, flag = V("x", 3), V("flag", dtype="bool")
    then = Body()
    a = then.let("a", ir.Prim("exp", (x,), x.type))
    orelse = Body()
    b = orelse.let("b", ir.Prim("neg", (x,), x.type))
    i, acc = V("i", dtype="i64"), V("acc", 3)
    lbody = Body()
    step = lbody.let("step", ir.Prim("exp", (acc,), acc.type))
    lres = lbody.let("lres", ir.MakeTuple((step,), ir.TupleTy((acc.type,))))
    w, cnt = V("w", 3), V("cnt", dtype="i64")
    cond = Body()
    more = cond.let("more", ir.Prim("lt", (cnt, lit(2, "i64")), T(dtype="bool")))
    wbody = Body()
    w2 = wbody.let("w2", ir.Prim("exp", (w,), w.type))
    cnt2 = wbody.let("cnt2", ir.Prim("add", (cnt, lit(1, "i64")), cnt.type))
    wres = wbody.let("wres", ir.MakeTuple((w2, cnt2), ir.TupleTy((w.type, cnt.type))))
    body = Body()
    r = body.let("r", ir.If(flag, then.block(a), orelse.block(b), x.type))
    loop = body.let("loop", ir.Loop(i, 0, 2, (acc,), (r,), lbody.block(lres),
                                    ir.TupleTy((acc.type,))))
    l0 = body.let("l0", ir.GetItem(loop, 0, acc.type))
    wl = body.let("wl", ir.While((w, cnt), (l0, lit(0, "i64")), cond.block(more),
                                 wbody.block(wres), ir.TupleTy((w.type, cnt.type))))
    out = body.let("out", ir.GetItem(wl, 0, w.type))
    g = Body()
    gy = g.let("gy", ir.Prim("exp", (x,), x.type))
    p = program((x, flag), body, out)
    main = ir.Func("main", "entry", (x, flag), p.funcs[0].body,
                   grad=ir.Func("main_grad", "grad", (x,), g.block(gy)))
    return ir.Program((main,), "main")


class ExpToNeg(Rewriter):
    """Overrides one node kind; the rest is copied by the base class."""

    def prim(self, e: ir.Prim, bind: ir.Bind) -> ir.Expr:
        e = super().prim(e, bind)
        return ir.Prim("neg", e.args, e.type) if e.op == "exp" else e


def ops(p: ir.Program) -> list[str]:
    from tests.passes.middle.test_lower_index_notation import all_exprs
    return [e.op for e in all_exprs(p) if isinstance(e, ir.Prim)]


def test_identity_rewriter_shares_the_program() -> None:
    p = nested_program()
    assert Rewriter().program(p) is p


def test_one_override_reaches_every_nested_block_and_grad() -> None:
    p = nested_program()
    assert ops(p).count("exp") == 4
    q = ExpToNeg().program(p)
    assert "exp" not in ops(q) and ops(q).count("neg") == 5
    assert q.funcs[0].grad.body.binds[0].expr.op == "neg"
    xs = np.array([0.5, -1.0, 2.0], np.float32)
    np.testing.assert_allclose(run(q, xs, np.bool_(True)), -(-(-xs)))


class SplitSub(Rewriter):
    """`a - b` becomes `a + neg(b)`: exercises emit and fresh names."""

    def prim(self, e: ir.Prim, bind: ir.Bind) -> ir.Expr:
        e = super().prim(e, bind)
        if e.op != "sub":
            return e
        nb = self.emit_expr(ir.Prim("neg", (e.args[1],), e.args[1].type), bind.var.name)
        return ir.Prim("add", (e.args[0], nb), e.type)


class DropCopies(Rewriter):
    def atom_expr(self, e: ir.Atom, bind: ir.Bind) -> None:
        self.replace_uses(bind.var, self.atom(e))
        return None


def test_emit_and_replace_uses() -> None:
    x, y = V("x", 2), V("y", 2)
    body = Body()
    c = body.let("c", y)
    d = body.let("d", ir.Prim("sub", (x, c), x.type))
    d_1 = body.let("d_1", ir.Prim("sub", (d, c), x.type))
    p = program((x, y), body, d_1)
    q = DropCopies().program(SplitSub().program(p))
    names = [b.var.name for b in q.funcs[0].body.binds]
    assert names == ["d_2", "d", "d_3", "d_1"]  # fresh names avoid the existing d_1
    assert [b.expr.op for b in q.funcs[0].body.binds] == ["neg", "add", "neg", "add"]
    assert q.funcs[0].body.binds[0].expr.args == (y,)
    xs, ys = np.array([1.0, 2.0], np.float32), np.array([0.25, 4.0], np.float32)
    np.testing.assert_allclose(run(q, xs, ys), run(p, xs, ys))


def test_free_vars_and_uses() -> None:
    p = nested_program()
    body = p.funcs[0].body
    assert free_vars(body) == {V("x", 3), V("flag", dtype="bool")}
    loop = body.binds[1].expr
    assert expr_free_vars(loop) == {V("r", 3)}  # index and carried are bound by the loop
    while_ = body.binds[3].expr
    assert expr_free_vars(while_) == {V("l0", 3)}
    counts = uses(body)
    assert counts["x"] == 2 and counts["cnt"] == 2 and counts["out"] == 1


def test_func_names_and_name_supply() -> None:
    f = nested_program().funcs[0]
    names = func_names(f)
    assert {"x", "i", "acc", "w", "cnt", "step", "w2", "wl"} <= names
    supply = NameSupply({"t_1", "x_2"})
    assert [supply.fresh(), supply.fresh("x"), supply.fresh("x_7"), supply.fresh("")] == \
        ["t_2", "x_1", "x_3", "t_3"]


def test_substitute_reaches_nested_blocks() -> None:
    p = nested_program()
    x = V("x", 3)
    z = V("z", 3)
    block = substitute(p.funcs[0].body, {x: z})
    assert x not in free_vars(block) and z in free_vars(block)


def _bounded_loop(lo, hi) -> ir.Loop:
    i, acc = V("i", dtype="i64"), V("acc", dtype="i64")
    lb = Body()
    nxt = lb.let("nxt", ir.Prim("add", (acc, i), acc.type))
    return ir.Loop(i, lo, hi, (acc,), (lit(0, "i64"),), lb.block(nxt), ir.TupleTy((acc.type,)))


def test_run_time_loop_bounds_are_read_and_substituted() -> None:
    """A loop reads its run-time bounds as it reads its initial values: free variables, use
    counts and substitution see them; a bound replaced by a literal becomes its integer."""
    n, m = V("n", dtype="i64"), V("m", dtype="i64")
    loop = _bounded_loop(n, m)
    assert expr_free_vars(loop) == {n, m} and expr_free_vars(_bounded_loop(0, m)) == {m}
    assert not loop.static and loop.runtime_bounds == (n, m)
    body = Body()
    out = body.let("out", loop)
    assert uses(body.block(out))["n"] == 1
    renamed = substitute(body.block(out), {n: V("k", dtype="i64"), m: lit(6, "i64")})
    new = renamed.binds[0].expr
    assert new.lo == V("k", dtype="i64") and new.hi == 6 and isinstance(new.hi, int)
    assert not new.static and _bounded_loop(2, 6).static and _bounded_loop(2, 6).trips() == 4
    assert _bounded_loop(6, 2).trips() == 0
