"""The verifier: passes the good programs of the pass tests, names each kind of breakage."""

from __future__ import annotations

import pytest

from linnet.ir import tensor as ir
from linnet.ir.verify import broadcast_shapes, verify
from linnet.passes.middle.lower_index_notation import lower_index_notation
from tests.passes.middle.test_lower_index_notation import (T, V, Body, at, comp, ix, lit,
                                                           matmul_program, program, red,
                                                           softmax_program)
from tests.passes.test_traverse import nested_program


def one(problems: list[str], fragment: str) -> None:
    assert len(problems) == 1 and fragment in problems[0], problems


def single(e: ir.Expr, *params: ir.Var) -> list[str]:
    """Problems of a program binding e and returning it."""
    body = Body()
    y = body.let("y", e)
    return verify(program(params, body, y))


def test_good_programs_pass() -> None:
    for p in (softmax_program(3, 4), matmul_program(), nested_program()):
        assert verify(p, "tensor") == []
        assert verify(lower_index_notation(p), "tensor-core") == []


def test_comprehension_is_not_core() -> None:
    p = softmax_program(3, 4)
    problems = verify(p, "tensor-core")
    assert len(problems) == 4 and all("Comprehension" in m for m in problems)
    with pytest.raises(ValueError):
        verify(p, "tile")


def test_use_before_definition() -> None:
    x = V("x", 2)
    later = V("later", 2)
    body = Body()
    y = body.let("y", ir.Prim("exp", (later,), x.type))
    body.binds.append(ir.Bind(later, ir.Prim("neg", (x,), x.type)))
    one(verify(program((x,), body, y)), "later used before its definition")


def test_inner_block_bindings_do_not_leak() -> None:
    x, flag = V("x", 2), V("flag", dtype="bool")
    then, orelse = Body(), Body()
    a = then.let("a", ir.Prim("exp", (x,), x.type))
    body = Body()
    body.let("r", ir.If(flag, then.block(a), orelse.block(x), x.type))
    y = body.let("y", ir.Prim("neg", (a,), x.type))
    one(verify(program((x, flag), body, y)), "main/y: a used before its definition")


def test_defined_twice_and_wrong_use_type() -> None:
    x = V("x", 2)
    body = Body()
    body.let("y", ir.Prim("exp", (x,), x.type))
    y = body.let("y", ir.Prim("neg", (x,), x.type))
    one(verify(program((x,), body, y)), "y defined more than once")
    body = Body()
    z = body.let("z", ir.Prim("exp", (V("x", 3),), T(3)))
    one(verify(program((x,), body, z)), "x used as f32[3], defined as f32[2]")


def test_wrong_arity_unknown_op_missing_attribute() -> None:
    x = V("x", 2, 3)
    one(single(ir.Prim("add", (x,), x.type), x), "add takes 2 operands, has 1")
    one(single(ir.Prim("frobnicate", (x,), x.type), x), "unknown prim frobnicate")
    one(single(ir.Prim("permute", (x,), T(3, 2)), x), "permute lacks attribute perm")


def test_elementwise_result_types() -> None:
    x, r, c = V("x", 2, 3), V("r", 2, 1), V("c", 3)
    assert single(ir.Prim("add", (x, r), x.type), x, r) == []
    assert single(ir.Prim("mul", (r, c), x.type), r, c) == []
    one(single(ir.Prim("add", (x, V("w", 2)), x.type), x, V("w", 2)), "do not broadcast")
    one(single(ir.Prim("add", (x, r), T(2, 1)), x, r), "gives f32[2, 3], not f32[2, 1]")
    one(single(ir.Prim("lt", (x, lit(0.0)), x.type), x), "gives bool[2, 3]")
    one(single(ir.Prim("add", (x, lit(1, "i32")), x.type), x), "mixed dtypes")


def test_reductions_and_shape_prims() -> None:
    x = V("x", 2, 3, 4)
    ok = [
        ir.Prim("reduce_sum", (x,), T(2, 4), (("axes", (1,)),)),
        ir.Prim("permute", (x,), T(4, 2, 3), (("perm", (2, 0, 1)),)),
        ir.Prim("reshape", (x,), T(6, 4)),
        ir.Prim("broadcast_to", (V("x", 2, 3, 4),), T(5, 2, 3, 4)),
        ir.Prim("index", (x,), T(3, 2), (("items", (("at", 1), ("slice", 0, 3, 1),
                                                       ("slice", 1, 4, 2))),)),
    ]
    for e in ok:
        assert single(e, x) == [], e
    sq = V("sq", 3, 2, 3)
    assert single(ir.Prim("diagonal", (sq,), T(2, 3), (("axes", (0, 2)),)), sq) == []
    one(single(ir.Prim("reduce_sum", (x,), T(2, 3), (("axes", (1,)),)), x), "gives f32[2, 4]")
    one(single(ir.Prim("reduce_max", (x,), T(2), (("axes", (3,)),)), x), "invalid axes")
    one(single(ir.Prim("reshape", (x,), T(5, 5)), x), "reshape of")
    one(single(ir.Prim("permute", (x,), x.type, (("perm", (0, 0, 1)),)), x), "not a permutation")
    one(single(ir.Prim("diagonal", (x,), T(3, 2), (("axes", (0, 1)),)), x), "different extents")


def test_einsum_specs() -> None:
    a, b = V("a", 2, 3), V("b", 3, 4)
    assert single(ir.Einsum("mk,kn->mn", (a, b), T(2, 4), "f32"), a, b) == []
    one(single(ir.Einsum("mk,kn->nm", (a, b), T(2, 4), "f32"), a, b), "gives shape (4, 2)")
    one(single(ir.Einsum("mk,mn->mn", (a, b), T(2, 4), "f32"), a, b), "letter m")
    one(single(ir.Einsum("mk->m", (a, b), T(2), "f32"), a, b), "1 operand terms for 2")


def test_calls() -> None:
    hx = V("hx", 2)
    hb = Body()
    hy = hb.let("hy", ir.Prim("neg", (hx,), hx.type))
    helper = ir.Func("helper", "op", (hx,), hb.block(hy))
    x = V("x", 2)

    def calling(e: ir.Expr) -> list[str]:
        body = Body()
        y = body.let("y", e)
        return verify(program((x,), body, y, extra=(helper,)))

    assert calling(ir.Call("helper", (x,), x.type)) == []
    one(calling(ir.Call("nobody", (x,), x.type)), "unknown function nobody")
    one(calling(ir.Call("helper", (x, x), x.type)), "with 2 arguments, it takes 1")
    one(calling(ir.Call("helper", (lit(1.0),), x.type)), "argument 0 of helper")


def test_control_flow_types() -> None:
    x, n = V("x", 2), V("n", dtype="i32")
    then, orelse = Body(), Body()
    body = Body()
    y = body.let("y", ir.If(n, then.block(x), orelse.block(x), x.type))
    one(verify(program((x, n), body, y)), "if condition of type i32[], not bool")
    i, acc = V("i", dtype="i64"), V("acc", 2)
    lb = Body()
    nxt = lb.let("nxt", ir.Prim("exp", (acc,), acc.type))
    body = Body()
    loop = body.let("loop", ir.Loop(i, 0, 3, (acc,), (x,), lb.block(nxt), ir.TupleTy((T(3),))))
    one(verify(program((x,), body, loop)), "loop should have type (f32[2])")


def test_comprehension_checks() -> None:
    x = V("x", 2, 3)
    good = comp({"i": 2}, red("sum", {"k": 3}, at(x, "i", "k")))
    assert single(good, x) == []
    one(single(comp({"i": 2}, at(x, "i", "k")), x), "index k is neither an output nor reduced")
    one(single(comp({"i": 3}, red("sum", {"k": 3}, at(x, "i", "k"))), x),
        "index i of extent 3 indexes an axis of 2")
    bad_reduce = ir.IxReduce("sum", (("k", 3),), at(x, "i", "k"), "f64")
    one(single(ir.Comprehension((("i", 2),), bad_reduce, T(2, dtype="f64")), x),
        "sum<f64> over a body of dtype f32")
    one(single(comp({"i": 2, "j": 3}, ix("add", at(x, "i", "j"))), x),
        "add with 1 operands")


def test_broadcast_shapes() -> None:
    assert broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert broadcast_shapes((), (4, 5)) == (4, 5)
    assert broadcast_shapes((2,), (3,)) is None


# ------------------------------------------------------------------ kernels

BOOL = T(dtype="bool")
XM, YM = V("x", 4, 8), V("y", 4, 8)
OFFS = V("offs", 4, 8, dtype="i32")


def kernel_problems(*exprs: ir.Expr, outputs=(YM,), launch=None, result=None,
                    params=(XM,)) -> list[str]:
    """Problems of a program whose only function is a kernel binding `offs`, then exprs."""
    body = Body()
    flat = body.let("offs_0", ir.Prim("iota", (), T(32, dtype="i32")))
    body.let("offs", ir.Prim("reshape", (flat,), OFFS.type))
    for k, e in enumerate(exprs):
        body.let(f"e{k}", e)
    k = ir.Func("k", "kernel", params, body.block(result or lit(True, "bool")),
                outputs=outputs, launch=launch or ir.Launch((4,), 4, None, ("empty",)))
    return verify(ir.Program((k,), "k"))


def load(*args, ty=XM.type) -> ir.Prim:
    return ir.Prim("load", args, ty)


def store(*args, op="store") -> ir.Prim:
    return ir.Prim(op, args, BOOL)


def test_good_kernels_pass() -> None:
    mask = V("e0", 4, 8, dtype="bool")
    v = V("e2", 4, 8)
    assert kernel_problems(
        ir.Prim("lt", (OFFS, lit(30, "i32")), mask.type),
        ir.Prim("program_id", (), T(dtype="i32"), (("axis", 0),)),
        load(XM, OFFS, mask, lit(-1.0)),
        store(YM, OFFS, v, mask),
        store(YM, lit(0, "i32"), lit(2.0)),
        load(XM, OFFS), store(YM, OFFS, lit(0.0), lit(True, "bool"))) == []


def test_memory_is_only_loaded_and_stored() -> None:
    one(kernel_problems(ir.Prim("exp", (XM,), XM.type)), "memory x used as a value")
    one(kernel_problems(load(YM, OFFS)), "not a kernel input")
    one(kernel_problems(store(XM, OFFS, lit(0.0))), "not a kernel output")
    one(kernel_problems(result=lit(False, "bool")), "returns true")


def test_load_and_store_operands() -> None:
    one(kernel_problems(load(XM, OFFS, ty=T(8))), "load should have type f32[4, 8]")
    flat = V("offs_0", 32, dtype="i32")
    one(kernel_problems(ir.Prim("lt", (flat, lit(3, "i32")), T(32, dtype="bool")),
                        load(XM, OFFS, V("e0", 32, dtype="bool"))), "load mask")
    one(kernel_problems(load(XM, OFFS, lit(True, "bool"), lit(0, "i32"))), "load other")
    one(kernel_problems(ir.Prim("cast", (OFFS,), T(4, 8)), load(XM, V("e0", 4, 8))),
        "offsets of dtype f32")
    one(kernel_problems(store(YM, OFFS, lit(1, "i32"))), "store value")
    one(kernel_problems(store(YM, OFFS)), "store with 2 operands")
    half = V("y", 4, 8, dtype="f16")
    one(kernel_problems(store(half, lit(0, "i32"), lit(1.0, "f16"), op="atomic_max"),
                        outputs=(half,)), "atomic_max of f16 memory")
    assert kernel_problems(store(half, lit(0, "i32"), lit(1.0, "f16"), op="atomic_add"),
                           outputs=(half,)) == []


def test_kernel_launch_and_program_id() -> None:
    one(kernel_problems(ir.Prim("program_id", (), T(dtype="i32"), (("axis", 1),))),
        "program_id axis 1 for a grid of 1 axes")
    one(kernel_problems(launch=ir.Launch((1, 2, 3, 4), inits=("empty",))), "invalid grid")
    one(kernel_problems(launch=ir.Launch((1,), inits=("zero", "zero"))), "inits")
    one(kernel_problems(launch=ir.Launch((1,), inits=("full",))), "inits")


def _counted(lo, hi, yields: int = 0) -> ir.Loop:
    """A loop over lo..hi carrying an i64 scalar (a scan also yields it)."""
    i, acc = V("i", dtype="i64"), V("acc", dtype="i64")
    lb = Body()
    nxt = lb.let("nxt", ir.Prim("add", (acc, i), acc.type))
    result = lb.let("res", ir.MakeTuple((nxt, nxt), ir.TupleTy((acc.type, acc.type)))) \
        if yields else nxt
    ty = ir.TupleTy((acc.type, T(3, dtype="i64"))) if yields else ir.TupleTy((acc.type,))
    return ir.Loop(i, lo, hi, (acc,), (lit(0, "i64"),), lb.block(result), ty, yields)


def test_run_time_loop_bounds() -> None:
    pid = ir.Prim("program_id", (), T(dtype="i32"), (("axis", 0),))
    hi = V("e1", dtype="i64")
    good = (pid, ir.Prim("cast", (V("e0", dtype="i32"),), hi.type))
    assert kernel_problems(*good, _counted(0, hi)) == []
    assert kernel_problems(*good, _counted(hi, 8)) == []
    one(kernel_problems(pid, _counted(0, V("e0", dtype="i32"))), "loop bound e0 is i32[]")
    one(kernel_problems(_counted(0, V("later", dtype="i64"))), "later used before")
    one(kernel_problems(*good, _counted(hi, hi, yields=1)),
        "a scan with run-time bounds")
    one(kernel_problems(_counted(0, lit(3, "i64"))), "neither an integer nor a variable")
    one(kernel_problems(_counted(5, 2)), "runs backwards")
    n = V("n", dtype="i64")
    one(single(_counted(0, n), n), "run-time bounds outside a kernel")


def test_effects_outside_kernels_and_calls_of_kernels() -> None:
    x = V("x", 4)
    one(single(ir.Prim("program_id", (), T(dtype="i32"), (("axis", 0),))), "outside a kernel")
    one(single(ir.Prim("load", (x, lit(0, "i32")), T()), x), "outside a kernel")
    body = Body()
    body.let("offs", ir.Prim("iota", (), T(4, dtype="i32")))
    k = ir.Func("k", "kernel", (x,), body.block(lit(True, "bool")), outputs=(V("y", 4),),
                launch=ir.Launch((1,), inits=("empty",)))
    e = V("e", 4)
    eb = Body()
    r = eb.let("r", ir.Call("k", (e,), BOOL))
    main = ir.Func("main", "entry", (e,), eb.block(r))
    one(verify(ir.Program((main, k), "main")), "kernels are launched, never called")


def test_an_op_chooses_a_matching_kernel() -> None:
    x, y = V("x", 4), V("y", 4)
    body = Body()
    body.let("offs", ir.Prim("iota", (), T(4, dtype="i32")))
    k = ir.Func("k", "kernel", (x,), body.block(lit(True, "bool")), outputs=(y,),
                launch=ir.Launch((1,), inits=("empty",)))
    ox = V("ox", 4)
    op = ir.Func("op", "op", (ox,), ir.Block((), ox), kernel=ir.KernelChoice("k", (), "k"))
    assert verify(ir.Program((op, k), "op")) == []
    wrong = ir.Func("op", "op", (V("ox", 5),), ir.Block((), V("ox", 5)),
                    kernel=ir.KernelChoice("k", (), "k"))
    problems = verify(ir.Program((wrong, k), "op"))
    assert any("other parameters" in m for m in problems) and \
        any("writes" in m for m in problems)
    missing = ir.Func("op", "op", (ox,), ir.Block((), ox), kernel=ir.KernelChoice("k", (), "q"))
    one(verify(ir.Program((missing, k), "op")), "is not a kernel Func")
