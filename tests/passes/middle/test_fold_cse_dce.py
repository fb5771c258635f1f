"""fold-constants, cse and dce on hand-built IR: exact literal semantics, scoping, reachability."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linnet.ir import tensor as ir
from linnet.ir.verify import verify
from linnet.passes.middle.cse import cse
from linnet.passes.middle.dce import dce
from linnet.passes.middle.fold_constants import fold_constants
from tests.passes.middle.test_lower_index_notation import (T, V, Body, all_exprs, at, comp, ix,
                                                           lit, program, run)

# ------------------------------------------------------------------ folding


def fold_one(op: str, args: tuple[ir.Atom, ...], out: str) -> ir.Atom:
    """Fold `y = op(args)` in a one-binding program; return what the entry now returns."""
    body = Body()
    y = body.let("y", ir.Prim(op, args, T(dtype=out)))
    p = program((), body, y)
    q = fold_constants(p)
    assert verify(q) == []
    return q.funcs[0].body.result


def folded(op: str, values: tuple, dtype: str, out: str | None = None) -> object:
    """The folded value, or None when the prim was left alone."""
    args = tuple(lit(v, dtype) for v in values)
    result = fold_one(op, args, out or dtype)
    return result.value if isinstance(result, ir.Lit) else None


@pytest.mark.parametrize("op, values, dtype, want", [
    ("add", (100, 100), "i8", -56),
    ("add", (200, 100), "u8", 44),
    ("sub", (0, 1), "u32", 2**32 - 1),
    ("mul", (2**31 - 1, 2), "i32", -2),
    ("neg", (-128,), "i8", -128),
    ("abs", (-(2**63),), "i64", -(2**63)),
    ("div", (-7, 2), "i32", -3),
    ("div", (7, -2), "i32", -3),
    ("mod", (-7, 2), "i32", -1),
    ("mod", (7, -2), "i32", 1),
    ("div", (-(2**31), -1), "i32", -(2**31)),
    ("div", (250, 7), "u8", 35),
    ("shl", (1, 7), "i8", -128),
    ("shr", (-8, 1), "i32", -4),
    ("shr", (200, 3), "u8", 25),
    ("and", (12, 10), "i32", 8),
    ("xor", (-1, 5), "i16", -6),
    ("max", (-3, 2), "i64", 2),
])
def test_integer_folding_wraps_and_truncates(op: str, values: tuple, dtype: str, want: int) -> None:
    got = folded(op, values, dtype)
    assert got == want and type(got) is int


@pytest.mark.parametrize("op, values, dtype", [
    ("div", (1, 0), "i32"), ("mod", (1, 0), "i64"), ("div", (1.0, 0.0), "f32"),
    ("shl", (1, 8), "i8"), ("shr", (1, -1), "i32"), ("exp", (1.0,), "f32"),
    ("mod", (5.5, 2.0), "f32"),
])
def test_left_alone(op: str, values: tuple, dtype: str) -> None:
    assert folded(op, values, dtype) is None


def test_float_folding_rounds_once_to_the_dtype() -> None:
    want = float(np.float32(0.1) + np.float32(0.2))
    assert folded("add", (0.1, 0.2), "f32") == want
    assert folded("add", (0.1, 0.2), "f64") == 0.1 + 0.2
    assert folded("mul", (300.0, 300.0), "f16") == math.inf
    assert folded("div", (1.0, 3.0), "f32") == float(np.float32(1) / np.float32(3))
    assert folded("sqrt", (2.0,), "f32") == float(np.sqrt(np.float32(2)))
    assert math.isnan(folded("sub", (math.inf, math.inf), "f32"))
    assert folded("add", (1.0, 2.0**-8), "bf16") == 1.0  # the tie rounds to even


@pytest.mark.parametrize("values, src, out, want", [
    ((-2.7,), "f32", "i32", -2),
    ((3.9,), "f64", "u8", 3),
    ((300,), "i32", "u8", 44),
    ((-1,), "i64", "u16", 65535),
    ((True,), "bool", "f32", 1.0),
    ((0.0,), "f32", "bool", False),
    ((16777217,), "i64", "f64", 16777217.0),
    ((16777217,), "i64", "f32", 16777216.0),  # the tie rounds to even
    ((0.1,), "f64", "f32", float(np.float32(0.1))),
])
def test_casts(values: tuple, src: str, out: str, want) -> None:
    got = folded("cast", values, src, out)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("values, src, out", [
    ((1e10,), "f32", "i32"), ((math.nan,), "f32", "i64"), ((-1.0,), "f32", "u8"),
    ((2**53 + 1,), "i64", "f32"),  # inexact in f64: would round twice
])
def test_casts_left_alone(values: tuple, src: str, out: str) -> None:
    assert folded("cast", values, src, out) is None


def test_comparisons_give_bools() -> None:
    assert folded("lt", (-1, 1), "i32", "bool") is True
    assert folded("eq", (math.nan, math.nan), "f32", "bool") is False
    assert folded("ge", (200, 100), "u8", "bool") is True


def test_folding_propagates_through_a_chain() -> None:
    x = V("x", 3, dtype="i32")
    body = Body()
    a = body.let("a", ir.Prim("add", (lit(2, "i32"), lit(3, "i32")), T(dtype="i32")))
    b = body.let("b", ir.Prim("mul", (a, lit(4, "i32")), T(dtype="i32")))
    c = body.let("c", ir.Prim("add", (x, b), x.type))
    p = program((x,), body, c)
    q = fold_constants(p)
    (only,) = q.funcs[0].body.binds
    assert only.expr == ir.Prim("add", (x, lit(20, "i32")), x.type)
    xs = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(run(q, xs), xs + 20)


def identity(op: str, x: ir.Var, y: ir.Atom, swap: bool = False) -> bool:
    """Whether `op(x, y)` folds to x."""
    body = Body()
    args = (y, x) if swap else (x, y)
    r = body.let("r", ir.Prim(op, args, x.type))
    q = fold_constants(program((x,), body, r))
    return q.funcs[0].body.binds == () and q.funcs[0].body.result == x


def test_identities_hold_exactly() -> None:
    xi, xf, xb = V("xi", 3, dtype="i32"), V("xf", 3), V("xb", 3, dtype="bool")
    assert identity("add", xi, lit(0, "i32")) and identity("add", xi, lit(0, "i32"), swap=True)
    assert identity("mul", xi, lit(1, "i32"), swap=True) and identity("div", xi, lit(1, "i32"))
    assert identity("sub", xi, lit(0, "i32")) and not identity("sub", xi, lit(0, "i32"), swap=True)
    assert identity("mul", xf, lit(1.0)) and identity("div", xf, lit(1.0))
    assert not identity("add", xf, lit(0.0))  # -0.0 + 0.0 is +0.0
    assert identity("add", xf, lit(-0.0)) and identity("sub", xf, lit(0.0))
    assert identity("and", xb, lit(True, "bool")) and identity("or", xb, lit(False, "bool"))


def test_shape_ops_that_change_nothing() -> None:
    x = V("x", 2, 3)
    body = Body()
    a = body.let("a", ir.Prim("reshape", (x,), x.type))
    b = body.let("b", ir.Prim("permute", (a,), x.type, (("perm", (0, 1)),)))
    c = body.let("c", ir.Prim("cast", (b,), x.type))
    d = body.let("d", ir.Prim("reshape", (c,), T(3, 2)))
    s = body.let("s", ir.Prim("fill", (lit(1.5),), T()))
    out = body.let("out", ir.MakeTuple((d, s), ir.TupleTy((d.type, s.type))))
    q = fold_constants(program((x,), body, out))
    assert [bd.expr for bd in q.funcs[0].body.binds] == [
        ir.Prim("reshape", (x,), T(3, 2)), ir.MakeTuple((d, lit(1.5)), out.type)]


def test_identity_needs_the_exact_result_type() -> None:
    x = V("x", 1)
    body = Body()
    r = body.let("r", ir.Prim("select", (lit(True, "bool"), x, V("y", 3)), T(3)))
    p = program((x, V("y", 3)), body, r)
    assert fold_constants(p).funcs[0].body.binds[0].expr.op == "select"  # x is f32[1], not [3]


def test_if_on_a_literal_condition_is_inlined() -> None:
    x = V("x", 2)
    then, orelse = Body(), Body()
    a = then.let("a", ir.Prim("exp", (x,), x.type))
    b = orelse.let("b", ir.Prim("neg", (x,), x.type))
    body = Body()
    cond = body.let("cond", ir.Prim("lt", (lit(1, "i32"), lit(2, "i32")), T(dtype="bool")))
    r = body.let("r", ir.If(cond, then.block(a), orelse.block(b), x.type))
    s = body.let("s", ir.Prim("mul", (r, r), x.type))
    p = program((x,), body, s)
    q = fold_constants(p)
    assert [bd.var.name for bd in q.funcs[0].body.binds] == ["a", "s"]
    assert verify(q) == []
    xs = np.array([0.5, 1.0], np.float32)
    np.testing.assert_allclose(run(q, xs), np.exp(xs) ** 2, rtol=1e-6)


# --------------------------------------------------------------------- cse


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


def test_fold_reaches_comprehension_atoms() -> None:
    x = V("x", 3)
    body = Body()
    k = body.let("k", ir.Prim("mul", (lit(2.0), lit(3.0)), T()))
    y = body.let("y", comp({"i": 3}, ix("mul", at(x, "i"), ir.IxScalar(k, "f32"))))
    q = fold_constants(program((x,), body, y))
    (bd,) = q.funcs[0].body.binds
    assert bd.expr.body.args[1] == ir.IxScalar(lit(6.0), "f32")


# ---------------------------------------------------------- kernels: effects


def test_fold_keeps_a_transposing_permute_of_a_square_tensor() -> None:
    x = V("x", 2, 2)
    body = Body()
    y = body.let("y", ir.Prim("permute", (x,), x.type, (("perm", (1, 0)),)))
    q = fold_constants(program((x,), body, y))
    assert [bd.expr.op for bd in q.funcs[0].body.binds] == ["permute"]
    xs = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(run(q, xs), xs.T)


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
