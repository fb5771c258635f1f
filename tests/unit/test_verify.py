"""The verifier: passes the good programs of the pass tests, names each kind of breakage."""

from __future__ import annotations

import pytest

from linnet.ir import tensor as ir
from linnet.ir.verify import broadcast_shapes, verify
from linnet.passes.index_notation import lower_index_notation
from test_index_notation import (T, V, Body, at, comp, ix, lit, matmul_program, program, red,
                                 softmax_program)
from test_traverse import nested_program


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
