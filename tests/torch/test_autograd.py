"""Gradients through generated PyTorch (docs/language.md, "Gradients").

An op with a kernel or a `grad` clause is called through its own `torch.autograd.Function`
when an input requires grad: forward runs the kernel (or the body), backward runs the grad
clause, or else the body again, differentiated by autograd. Without requires_grad the op
is called directly. Kernels run in Triton's interpreter here (see `tests/emit/test_triton.py`,
whose hand-built programs these tests reuse).
"""

from __future__ import annotations

import pytest
import torch

from linnet.passes.manager import Options
from tests.emit.test_triton import (INTERPRETED, S, T, V, Blk, L, column_stats, generate,  # noqa
                                    ir, kernel_ran, on, program, scaled, softmax, whole)


@pytest.fixture(autouse=True)
def _interpret(monkeypatch, tmp_path_factory):
    if INTERPRETED:
        monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path_factory.getbasetemp() / "linnet-cache"))


def leaf(x: torch.Tensor) -> torch.Tensor:
    return on(x)[0].clone().requires_grad_()


@pytest.mark.parametrize("numerics", ["equivalent", "exact"])
def test_a_grad_clause_is_the_backward(numerics):
    """`scaled`'s grad clause returns 3 * dy, which is not the derivative of its kernel
    (x * 2): the gradient must be 3 * dy, with a kernel or without one."""
    text, module = generate(scaled(grad=True), options=Options(numerics=numerics))
    assert "_autograd(torch.autograd.Function)" in text and "f1_op_grad(" in text
    x = leaf(torch.arange(20, dtype=torch.float32))
    dy = torch.linspace(-1, 1, 20).to(x.device)
    (y,) = module.main(x)
    factor = 2.0 if numerics == "equivalent" and kernel_ran(module) else 3.0
    torch.testing.assert_close(y.detach(), x.detach() * factor)
    y.backward(dy)
    torch.testing.assert_close(x.grad, 3 * dy)
    if numerics == "exact":
        assert "triton" not in text.lower()


def test_a_kernel_without_grad_clause_gets_the_bodys_gradient():
    """The backward runs the body again: `scaled`'s body is x * 3 (its kernel x * 2)."""
    _, module = generate(scaled())
    x = leaf(torch.arange(20, dtype=torch.float32))
    (y,) = module.main(x)
    assert kernel_ran(module)
    torch.testing.assert_close(y.detach(), x.detach() * 2)
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.full_like(x, 3.0))


def test_softmax_kernel_gradient_is_the_true_one():
    _, module = generate(softmax())
    x0 = torch.randn(64, 40)
    x = leaf(x0)
    (y,) = module.main(x)
    w = torch.randn(64, 40).to(x.device)
    (y * w).sum().backward()
    ref = x0.clone().requires_grad_()
    (torch.softmax(ref, 1) * w.cpu()).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), ref.grad, rtol=1e-5, atol=1e-6)


def test_several_results_each_with_its_gradient():
    """column_stats returns (column sums, column maxima), written by atomics."""
    _, module = generate(column_stats())
    x0 = torch.randn(50, 24)
    x = leaf(x0)
    s, m = module.main(x)
    (s * 2 + m * 5).sum().backward()
    want = torch.full((50, 24), 2.0)
    want[x0.argmax(0), torch.arange(24)] += 5.0
    torch.testing.assert_close(x.grad.cpu(), want)


def test_no_requires_grad_calls_the_op_directly():
    _, module = generate(scaled(grad=True))
    calls = []
    original = module.f1_op_autograd.apply
    module.f1_op_autograd.apply = lambda *a: calls.append(a) or original(*a)
    try:
        (y,) = module.main(*on(torch.ones(20)))
        assert y.grad_fn is None and not calls
        with torch.no_grad():
            module.main(leaf(torch.ones(20)))
        assert not calls
        module.main(leaf(torch.ones(20)))
        assert len(calls) == 1
    finally:
        module.f1_op_autograd.apply = original


def test_second_derivatives_through_the_body():
    """y = x * x * x by a kernel without grad clause: d2y/dx2 = 6x."""
    def cube(b, x):
        return b.p("mul", b.p("mul", x, x, ty=x.type), x, ty=x.type)
    _, module = generate(whole(cube, [T("f32", *S)], T("f32", *S)))
    x = leaf(torch.randn(*S))
    (y,) = module.main(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    torch.testing.assert_close(g, 3 * x.detach() ** 2)
    (h,) = torch.autograd.grad(g.sum(), x)
    torch.testing.assert_close(h, 6 * x.detach())


def test_non_float_and_scalar_parameters_get_no_gradient():
    """op(x: f32[4], n: i32[4], s: f32) with a grad clause returning dy * 2 for x alone."""
    x, n, s = V("x", T("f32", 4)), V("n", T("i32", 4)), V("s", T("f32"))
    b = Blk()
    scaled_x = b.p("mul", x, s, ty=x.type)
    out = b.p("add", scaled_x, b.p("cast", n, ty=x.type), ty=x.type)
    gx, gn, gs = V("gx", T("f32", 4)), V("gn", T("i32", 4)), V("gs", T("f32"))
    gy, gdy = V("gy", T("f32", 4)), V("gdy", T("f32", 4))
    gb = Blk()
    grad = ir.Func("op__grad", "grad", (gx, gn, gs, gy, gdy),
                   gb.done(gb.p("mul", gdy, L(2.0, "f32"), ty=gdy.type)), "grad of op")
    text, module = generate(program([x, n, s], b.done(out), None, grad=grad))
    assert "return (None, g, None, None)" in text
    xv, sv = leaf(torch.ones(4)), leaf(torch.tensor(3.0))
    (y,) = module.main(xv, *on(torch.arange(4, dtype=torch.int32)), sv)
    y.sum().backward()
    torch.testing.assert_close(xv.grad, torch.full_like(xv, 2.0))
    assert sv.grad is None
