"""fold-constants on hand-built IR: exact literal semantics, identities, literal ifs."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from linnet import prims
from linnet.ir import tensor as ir
from linnet.ir.verify import verify
from linnet.passes.middle import fold_constants as fc
from linnet.passes.middle.fold_constants import fold_constants
from tests.passes.middle.test_lower_index_notation import (T, V, Body, at, comp, ix, lit, program,
                                                            run)


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


def test_fold_reaches_comprehension_atoms() -> None:
    x = V("x", 3)
    body = Body()
    k = body.let("k", ir.Prim("mul", (lit(2.0), lit(3.0)), T()))
    y = body.let("y", comp({"i": 3}, ix("mul", at(x, "i"), ir.IxScalar(k, "f32"))))
    q = fold_constants(program((x,), body, y))
    (bd,) = q.funcs[0].body.binds
    assert bd.expr.body.args[1] == ir.IxScalar(lit(6.0), "f32")


def test_fold_keeps_a_transposing_permute_of_a_square_tensor() -> None:
    x = V("x", 2, 2)
    body = Body()
    y = body.let("y", ir.Prim("permute", (x,), x.type, (("perm", (1, 0)),)))
    q = fold_constants(program((x,), body, y))
    assert [bd.expr.op for bd in q.funcs[0].body.binds] == ["permute"]
    xs = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.testing.assert_array_equal(run(q, xs), xs.T)


# ------------------------------------------------------- read from the primitive table


def test_every_rule_a_row_names_is_the_folder_s_and_every_rule_is_named() -> None:
    rows = [r.fold for r in prims.PRIMS.values() if r.fold is not None]
    named = {"via": {f.via for f in rows} - {""},
             "units": {u for f in rows for u in (f.right, f.left)} - {""},
             "unchanged": {f.unchanged for f in rows} - {""}}
    assert named == {"via": set(fc.VIA), "units": set(fc.UNITS),
                     "unchanged": set(fc.UNCHANGED)}


def test_the_folded_primitives_are_the_rows_with_a_fold() -> None:
    folding = {r.name for r in prims.PRIMS.values() if r.fold is not None}
    assert {"add", "shl", "eq", "not", "sqrt", "select", "cast", "permute"} <= folding
    assert not folding & {"exp", "erf", "load", "store", "program_id", "reduce_sum"}


def test_a_row_s_fold_is_what_the_folder_evaluates(monkeypatch) -> None:
    """Folding reads the table: a row without a fold is left alone, and a row's fold
    function is what a literal evaluates to (then wrapped at the width)."""
    assert folded("add", (2, 3), "i32") == 5
    monkeypatch.setitem(prims.PRIMS, "add", replace(prims.PRIMS["add"], fold=None))
    assert folded("add", (2, 3), "i32") is None
    twice = prims.Fold(ints=lambda a, b, _bits: 2 * a + b, right="one")
    monkeypatch.setitem(prims.PRIMS, "add", replace(prims.PRIMS["add"], fold=twice))
    assert folded("add", (100, 1), "i8") == -55  # 201 wrapped
    assert fc.simplify(ir.Prim("add", (V("x", dtype="i8"), lit(1, "i8")), T(dtype="i8"))) \
        == V("x", dtype="i8")
