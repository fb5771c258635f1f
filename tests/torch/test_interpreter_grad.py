"""The PyTorch interpreter under autograd honours op `grad` clauses (docs/language.md, "Gradients").

`load_function(..., compile=False)` must differentiate exactly as generated PyTorch does:
an op with a clause goes through an autograd Function whose backward is the clause (even a
deliberately wrong one), so a body that autograd cannot differentiate needs no derivative.
Each test runs the interpreter and the generated module and compares both with values
computed by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from linnet.torch import load_function

GRAD_DIR = Path(__file__).parent.parent / "grad"

ROUNDING = """module rounding

// cast through an integer: autograd sees no path from x to the result
op round_ste<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return cast<f32>(cast<i32>(x))
} grad(y, dy) {
    return dy
}

entry main(x: Tensor[4; f32]) -> f32 {
    let y = round_ste(x * 3.0)
    return sum[i] y[i] * y[i]
}
"""

MIXED = """module mixed

// two gradients from the clause; the scalar s and the integer k take none
op weigh<N: Dim>(a: Tensor[N; f64], b: Tensor[N; f64], s: f64, k: Tensor[N; i32]) -> f64 {
    return sum[i] a[i] * b[i] * s * cast<f64>(k[i])
} grad(y, dy) {
    return (fill<f64>([N], 10.0) * dy, fill<f64>([N], 100.0) * dy)
}

entry main(a: Tensor[3; f64], b: Tensor[3; f64], s: f64, k: Tensor[3; i32]) -> f64 {
    return weigh(a, b, s, k) * 2.0
}
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path_factory.getbasetemp() / "linnet-cache"))


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / (text.split()[1] + ".linnet")
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
def test_a_wrong_clause_is_what_backward_returns(compile):
    """`square`'s clause is 2 * dy, not the body's 2 * x * dy: with the loss
    3 * sum(square(x * w)), x's gradient is 2 * 3 * w whatever x is."""
    f = load_function(str(GRAD_DIR / "wrong_clause.linnet"), "main", compile=compile,
                      numerics="exact")
    x = torch.tensor([0.0, 1.0, -2.0, 3.5, 7.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([2.0, -1.0, 0.5, 4.0, 1.0], dtype=torch.float64, requires_grad=True)
    loss = f(x, w)
    torch.testing.assert_close(loss.detach(), 3 * ((x * w) ** 2).sum().detach())
    loss.backward()
    torch.testing.assert_close(x.grad, 6.0 * w.detach())
    torch.testing.assert_close(w.grad, 6.0 * x.detach())


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
def test_a_body_autograd_cannot_differentiate_takes_the_clause(compile, tmp_path):
    """round_ste's body has no derivative for autograd (a cast through i32); the clause
    passes dy through, so d/dx sum(round(3x)^2) = 2 * round(3x) * 3."""
    f = load_function(_write(tmp_path, ROUNDING), "main", compile=compile)
    x = torch.tensor([0.3, 1.2, -2.7, 4.0], requires_grad=True)
    loss = f(x)
    rounded = torch.tensor([0.0, 3.0, -8.0, 12.0])
    torch.testing.assert_close(loss.detach(), (rounded ** 2).sum())
    loss.backward()
    torch.testing.assert_close(x.grad, 6.0 * rounded)


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
def test_clause_gradients_go_to_the_floating_tensor_parameters_only(compile, tmp_path):
    """The clause's tuple gives a's and b's gradients in order; s (a floating scalar) and
    k (integers) take none, though the body depends on s."""
    f = load_function(_write(tmp_path, MIXED), "main", compile=compile)
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64, requires_grad=True)
    s = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    k = torch.tensor([1, 2, 3], dtype=torch.int32)
    loss = f(a, b, s, k)
    torch.testing.assert_close(loss.detach(), torch.tensor(2 * 0.5 * (4 + 20 + 54.0),
                                                          dtype=torch.float64))
    loss.backward()
    torch.testing.assert_close(a.grad, torch.full((3,), 20.0, dtype=torch.float64))
    torch.testing.assert_close(b.grad, torch.full((3,), 200.0, dtype=torch.float64))
    assert s.grad is None


def test_without_requires_grad_the_interpreter_calls_the_body(tmp_path):
    """No input requires a gradient: nothing is recorded, as generated code's dispatcher."""
    f = load_function(_write(tmp_path, ROUNDING), "main", compile=False)
    loss = f(torch.tensor([0.3, 1.2, -2.7, 4.0]))
    assert loss.grad_fn is None and float(loss) == 217.0


def test_a_clause_is_differentiated_again_for_second_derivatives():
    """Under create_graph the clause itself is recorded: with wrong_clause's 2 * dy, the
    gradient is linear in w and does not depend on x, so d(sum dx)/dw is 6 everywhere."""
    f = load_function(str(GRAD_DIR / "wrong_clause.linnet"), "main", compile=False,
                      numerics="exact")
    x = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.5, 1.0, 1.5, 2.0, 2.5], dtype=torch.float64, requires_grad=True)
    (gx,) = torch.autograd.grad(f(x, w), x, create_graph=True)
    (gw,) = torch.autograd.grad(gx.sum(), w)
    torch.testing.assert_close(gw, torch.full((5,), 6.0, dtype=torch.float64))
