"""dce on hand-built IR: dead chains, unreachable functions, effects kept; and the three
clean-ups together (fold-constants, cse, dce) keeping values and effects."""

from __future__ import annotations

import numpy as np

from linnet.ir import tensor as ir
from linnet.ir.verify import verify
from linnet.passes.middle.cse import cse
from linnet.passes.middle.dce import dce
from linnet.passes.middle.fold_constants import fold_constants
from tests.passes.middle.test_lower_index_notation import T, V, Body, all_exprs, lit, program, run

# --------------------------------------------------------------------- dce


def test_dce_drops_dead_chains_and_dead_code_in_loops() -> None:
    x, i, acc = V("x", 2), V("i", dtype="i64"), V("acc", 2)
    lb = Body()
    lb.let("waste", ir.Prim("neg", (acc,), acc.type))
    nxt = lb.let("nxt", ir.Prim("exp", (acc,), acc.type))
    body = Body()
    d1 = body.let("d1", ir.Prim("neg", (x,), x.type))
    body.let("d2", ir.Prim("exp", (d1,), x.type))
    dead_loop = ir.Loop(i, 0, 2, (acc,), (x,), lb.block(nxt), ir.TupleTy((acc.type,)))
    body.let("dead_loop", dead_loop)
    i2, acc2 = V("i2", dtype="i64"), V("acc2", 2)
    lb2 = Body()
    lb2.let("waste2", ir.Prim("neg", (acc2,), acc2.type))
    nxt2 = lb2.let("nxt2", ir.Prim("exp", (acc2,), acc2.type))
    live = body.let("live", ir.Loop(i2, 0, 2, (acc2,), (x,), lb2.block(nxt2),
                                     ir.TupleTy((acc2.type,))))
    out = body.let("out", ir.GetItem(live, 0, x.type))
    p = program((x,), body, out)
    q = dce(p)
    assert verify(q) == []
    binds = q.funcs[0].body.binds
    assert [bd.var.name for bd in binds] == ["live", "out"]
    assert [bd.var.name for bd in binds[0].expr.body.binds] == ["nxt2"]
    xs = np.array([0.1, 0.2], np.float32)
    np.testing.assert_allclose(run(q, xs), np.exp(np.exp(xs)), rtol=1e-6)


def func(name: str, calls: tuple[str, ...] = (), grad_calls: tuple[str, ...] = ()) -> ir.Func:
    x = V(f"{name}_x", 2)

    def block(targets: tuple[str, ...]) -> ir.Block:
        body = Body()
        last: ir.Atom = x
        for k, target in enumerate(targets):
            last = body.let(f"{name}_c{k}", ir.Call(target, (last,), x.type))
        return body.block(last)

    grad = ir.Func(f"{name}_grad", "fn", (x,), block(grad_calls)) if grad_calls else None
    return ir.Func(name, "entry" if name == "main" else "op", (x,), block(calls), grad=grad)


def test_dce_drops_unreachable_functions() -> None:
    funcs = (func("main", ("a",)), func("a", ("b",), grad_calls=("c",)), func("b"), func("c"),
             func("orphan", ("b",)))
    p = ir.Program(funcs, "main")
    assert verify(p) == []
    q = dce(p)
    assert [f.name for f in q.funcs] == ["main", "a", "b", "c"]


def test_dce_keeps_calls_it_needs_and_drops_unused_ones() -> None:
    funcs = (func("main", ()), func("a"))
    x = funcs[0].params[0]
    body = Body()
    body.let("unused", ir.Call("a", (x,), x.type))
    main = ir.Func("main", "entry", (x,), body.block(x))
    q = dce(ir.Program((main, funcs[1]), "main"))
    assert [f.name for f in q.funcs] == ["main"] and q.funcs[0].body.binds == ()


def test_pipeline_fold_cse_dce_keeps_values() -> None:
    x = V("x", 4)
    body = Body()
    two = body.let("two", ir.Prim("add", (lit(1.0), lit(1.0)), T()))
    a = body.let("a", ir.Prim("mul", (x, two), x.type))
    b = body.let("b", ir.Prim("mul", (x, lit(2.0)), x.type))
    one = body.let("one", ir.Prim("cast", (lit(True, "bool"),), T()))
    c = body.let("c", ir.Prim("mul", (b, one), x.type))
    body.let("dead", ir.Prim("exp", (c,), x.type))
    s = body.let("s", ir.Prim("add", (a, c), x.type))
    p = program((x,), body, s)
    q = dce(cse(fold_constants(p)))
    assert verify(q) == []
    assert [bd.var.name for bd in q.funcs[0].body.binds] == ["a", "s"]
    assert q.funcs[0].body.binds[1].expr.args == (V("a", 4), V("a", 4))
    xs = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(run(q, xs), run(p, xs))
    assert not any(isinstance(e, ir.Lit) for e in all_exprs(q))


# ---------------------------------------------------------- kernels: effects


B = T(dtype="bool")


def kernel_func(body: Body, xm: ir.Var, ym: ir.Var, grid=(1,)) -> ir.Func:
    """A kernel Func reading memory x and writing memory y (hand-built)."""
    return ir.Func("k", "kernel", (xm,), body.block(lit(True, "bool")), outputs=(ym,),
                   launch=ir.Launch(grid, inits=("empty",)))


def kernel_program(k: ir.Func, xm: ir.Var) -> ir.Program:
    """An op choosing the kernel k (so dce keeps it) and an entry calling the op."""
    x = V("ox", *xm.type.shape)
    op = ir.Func("op", "op", (x,), ir.Block((), x),
                 kernel=ir.KernelChoice("k", (), func="k"))
    e = V("ex", *xm.type.shape)
    eb = Body()
    r = eb.let("r", ir.Call("op", (e,), e.type))
    main = ir.Func("main", "entry", (e,), eb.block(r))
    return ir.Program((main, k, op), "main")


def test_effects_survive_fold_cse_and_dce() -> None:
    xm, ym = V("x", 8), V("y", 8)
    i32 = lambda n: lit(n, "i32")  # noqa: E731
    offs_t = T(8, dtype="i32")
    body = Body()
    offs = body.let("offs", ir.Prim("iota", (), offs_t))
    a = body.let("a", ir.Prim("load", (xm, offs), xm.type))
    b = body.let("b", ir.Prim("load", (xm, offs), xm.type))  # equal, but loads stay apart
    s = body.let("s", ir.Prim("add", (a, b), xm.type))
    body.let("st1", ir.Prim("store", (ym, offs, s), B))
    body.let("st2", ir.Prim("store", (ym, offs, s), B))  # an effect is never merged
    body.let("dead", ir.Prim("mul", (s, lit(2.0)), xm.type))
    body.let("one", ir.Prim("add", (i32(1), i32(2)), T(dtype="i32")))
    p = kernel_program(kernel_func(body, xm, ym), xm)
    assert verify(p) == []
    q = dce(cse(fold_constants(p)))
    assert verify(q) == []
    k = q.func("k")
    assert [bd.var.name for bd in k.body.binds] == ["offs", "a", "b", "s", "st1", "st2"]


def test_dce_keeps_loops_and_ifs_that_write() -> None:
    xm, ym = V("x", 8), V("y", 8)
    i, flag = V("i", dtype="i64"), V("flag", dtype="bool")
    offs_t = T(8, dtype="i32")
    lb = Body()
    offs = lb.let("offs", ir.Prim("iota", (), offs_t))
    v = lb.let("v", ir.Prim("load", (xm, offs), xm.type))
    lb.let("st", ir.Prim("store", (ym, offs, v), B))
    lb.let("waste", ir.Prim("neg", (v,), xm.type))
    nxt = lb.let("nxt", ir.MakeTuple((), ir.TupleTy(())))
    then = Body()
    then.let("st_then", ir.Prim("store", (ym, lit(0, "i32"), lit(1.0)), B))
    body = Body()
    pid = body.let("pid", ir.Prim("program_id", (), T(dtype="i32"), (("axis", 0),)))
    body.let("flag", ir.Prim("eq", (pid, lit(0, "i32")), B))
    body.let("loop", ir.Loop(i, 0, 2, (), (), lb.block(nxt), ir.TupleTy(())))
    body.let("if", ir.If(flag, then.block(lit(True, "bool")),
                         Body().block(lit(False, "bool")), B))
    p = kernel_program(kernel_func(body, xm, ym), xm)
    assert verify(p) == []
    k = dce(p).func("k")
    assert [bd.var.name for bd in k.body.binds] == ["pid", "flag", "loop", "if"]
    assert [bd.var.name for bd in k.body.binds[2].expr.body.binds] == ["offs", "v", "st", "nxt"]


def test_dce_keeps_chosen_kernels_and_drops_unchosen_ones() -> None:
    xm, ym = V("x", 8), V("y", 8)
    body = Body()
    offs = body.let("offs", ir.Prim("iota", (), T(8, dtype="i32")))
    body.let("st", ir.Prim("store", (ym, offs, lit(0.0)), B))
    k = kernel_func(body, xm, ym)
    p = kernel_program(k, xm)
    assert [f.name for f in dce(p).funcs] == ["main", "k", "op"]
    unchosen = ir.Program(tuple(f if f.kind != "op" else
                                ir.Func(f.name, f.kind, f.params, f.body) for f in p.funcs),
                          "main")
    assert [f.name for f in dce(unchosen).funcs] == ["main", "op"]
