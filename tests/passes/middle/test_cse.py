"""cse on hand-built IR: what merges, within a block and into nested ones, and what not."""

from __future__ import annotations

import numpy as np

from linnet.ir import tensor as ir
from linnet.ir.verify import verify
from linnet.passes.middle.cse import cse
from tests.passes.middle.test_lower_index_notation import V, Body, at, comp, lit, program, run


def test_cse_merges_within_a_block_and_into_nested_blocks() -> None:
    x, flag = V("x", 3), V("flag", dtype="bool")
    then = Body()
    e2 = then.let("e2", ir.Prim("exp", (x,), x.type))  # same as the outer e1: merged
    t = then.let("t", ir.Prim("add", (e2, e2), x.type))
    orelse = Body()
    n1 = orelse.let("n1", ir.Prim("neg", (x,), x.type))
    body = Body()
    e1 = body.let("e1", ir.Prim("exp", (x,), x.type))
    e3 = body.let("e3", ir.Prim("exp", (x,), x.type))
    r = body.let("r", ir.If(flag, then.block(t), orelse.block(n1), x.type))
    n2 = body.let("n2", ir.Prim("neg", (x,), x.type))  # the inner n1 is not visible here
    s = body.let("s", ir.MakeTuple((e1, e3, r, n2), ir.TupleTy((x.type,) * 4)))
    p = program((x, flag), body, s)
    q = cse(p)
    assert verify(q) == []
    names = [bd.var.name for bd in q.funcs[0].body.binds]
    assert names == ["e1", "r", "n2", "s"]
    if_ = q.funcs[0].body.binds[1].expr
    assert [bd.var.name for bd in if_.then.binds] == ["t"]
    assert if_.then.binds[0].expr.args == (e1, e1)
    assert q.funcs[0].body.binds[-1].expr.items == (e1, e1, r, n2)
    xs = np.array([0.5, -1.0, 2.0], np.float32)
    for flag_value in (True, False):
        for got, want in zip(run(q, xs, np.bool_(flag_value)), run(p, xs, np.bool_(flag_value))):
            np.testing.assert_allclose(got, want)


def test_cse_keeps_calls_and_distinct_literals_apart() -> None:
    x = V("x", 3)
    helper_x = V("hx", 3)
    hb = Body()
    hy = hb.let("hy", ir.Prim("neg", (helper_x,), helper_x.type))
    helper = ir.Func("helper", "op", (helper_x,), hb.block(hy))
    body = Body()
    c1 = body.let("c1", ir.Call("helper", (x,), x.type))
    c2 = body.let("c2", ir.Call("helper", (x,), x.type))
    m1 = body.let("m1", ir.Prim("mul", (x, lit(0.0)), x.type))
    m2 = body.let("m2", ir.Prim("mul", (x, lit(-0.0)), x.type))
    m3 = body.let("m3", ir.Prim("mul", (x, lit(0.0)), x.type))
    s = body.let("s", ir.MakeTuple((c1, c2, m1, m2, m3), ir.TupleTy((x.type,) * 5)))
    p = program((x,), body, s, extra=(helper,))
    q = cse(p)
    assert [bd.var.name for bd in q.funcs[0].body.binds] == ["c1", "c2", "m1", "m2", "s"]
    assert q.funcs[0].body.result == s
    assert q.funcs[0].body.binds[-1].expr.items == (c1, c2, m1, m2, m1)


def test_cse_merges_comprehensions_and_chains() -> None:
    x = V("x", 2, 3)
    body = Body()
    t1 = body.let("t1", comp({"j": 3, "i": 2}, at(x, "i", "j")))
    t2 = body.let("t2", comp({"j": 3, "i": 2}, at(x, "i", "j")))
    a1 = body.let("a1", ir.Prim("exp", (t1,), t1.type))
    a2 = body.let("a2", ir.Prim("exp", (t2,), t2.type))  # equal once t2 reads t1
    s = body.let("s", ir.Prim("add", (a1, a2), t1.type))
    q = cse(program((x,), body, s))
    assert [bd.var.name for bd in q.funcs[0].body.binds] == ["t1", "a1", "s"]
    assert q.funcs[0].body.binds[-1].expr.args == (a1, a1)


def test_cse_does_not_merge_loops() -> None:
    x, i, acc = V("x", 2), V("i", dtype="i64"), V("acc", 2)
    lb = Body()
    nxt = lb.let("nxt", ir.Prim("exp", (acc,), acc.type))
    loop = ir.Loop(i, 0, 1, (acc,), (x,), lb.block(nxt), ir.TupleTy((acc.type,)))
    body = Body()
    l1 = body.let("l1", loop)
    s = body.let("s", ir.MakeTuple((l1,), ir.TupleTy((l1.type,))))
    p = program((x,), body, s)
    assert cse(p) == p
