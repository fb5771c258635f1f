"""The `differentiate` pass on hand-built tensor-core IR: primitives the front end does not
produce before it (`dot`, made later by `egraph-products`), and the While guard."""

from __future__ import annotations

import pytest
import torch

from linnet.diagnostics import CompileError
from linnet.ir import tensor as ir
from linnet.ir.verify import verify
from linnet.passes.adjoint.differentiate import differentiate
from linnet.passes.manager import Options
from linnet.torch.interpreter import run


def T(dtype: str, *shape: int) -> ir.TType:
    return ir.TType(tuple(shape), dtype)


def entry(params: tuple[ir.Var, ...], binds: list[ir.Bind], result: ir.Atom) -> ir.Program:
    f = ir.Func("main", "entry", params, ir.Block(tuple(binds), result))
    return ir.Program((f,), "main")


def grad_of(program: ir.Program, language: str = "tensor-core") -> ir.Program:
    """The program differentiated, checked to be in `language` (the pipeline's differentiate
    takes and returns tensor-core; a program with `dot`s is tensor-dots)."""
    out = differentiate(program, Options(grad=True))
    assert verify(out, language) == []
    return out


def test_dot_with_an_accumulator():
    a, b, c = ir.Var("a", T("f64", 2, 3)), ir.Var("b", T("f64", 3, 4)), ir.Var("c", T("f64", 2, 4))
    d = ir.Var("d", T("f64", 2, 4))
    sq = ir.Var("sq", T("f64", 2, 4))
    s = ir.Var("s", T("f64"))
    program = entry((a, b, c), [
        ir.Bind(d, ir.Prim("dot", (a, b, c), d.type, (("precision", ""),))),
        ir.Bind(sq, ir.Prim("mul", (d, d), d.type)),
        ir.Bind(s, ir.Prim("reduce_sum", (sq,), s.type, (("axes", (0, 1)),)))], s)
    xs = [torch.randn(2, 3, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64),
          torch.randn(2, 4, dtype=torch.float64)]
    loss, da, db, dc = run(grad_of(program, "tensor-dots"), *xs)
    leaves = [x.clone().requires_grad_() for x in xs]
    want = ((leaves[2] + leaves[0] @ leaves[1]) ** 2).sum()
    want.backward()
    torch.testing.assert_close(loss, want.detach())
    for got, leaf in zip((da, db, dc), leaves):
        torch.testing.assert_close(got, leaf.grad)


def test_a_while_carrying_an_active_float_is_refused():
    x = ir.Var("x", T("f32"))
    h, k = ir.Var("h", T("f32")), ir.Var("k", T("i64"))
    c = ir.Var("c", T("bool"))
    h2, k2 = ir.Var("h2", T("f32")), ir.Var("k2", T("i64"))
    nxt = ir.Var("next", ir.TupleTy((T("f32"), T("i64"))))
    loop = ir.Var("w", nxt.type)
    out = ir.Var("out", T("f32"))
    cond = ir.Block((ir.Bind(c, ir.Prim("lt", (k, ir.Lit(3, T("i64"))), T("bool"))),), c)
    body = ir.Block((ir.Bind(h2, ir.Prim("mul", (h, h), h.type)),
                     ir.Bind(k2, ir.Prim("add", (k, ir.Lit(1, T("i64"))), k.type)),
                     ir.Bind(nxt, ir.MakeTuple((h2, k2), nxt.type))), nxt)
    program = entry((x,), [
        ir.Bind(loop, ir.While((h, k), (x, ir.Lit(0, T("i64"))), cond, body, nxt.type)),
        ir.Bind(out, ir.GetItem(loop, 0, T("f32")))], out)
    with pytest.raises(CompileError) as err:
        differentiate(program, Options(grad=True))
    assert err.value.diagnostics[0].code == "E2129"
    assert differentiate(program, Options()) is program  # without --grad: unchanged
