"""`--grad` beyond random smooth inputs: op grad clauses are what the adjoint calls, the
tie rules agree with PyTorch autograd, products are exact at zeros, and the JAX printer
prints the same differentiated entry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated
from tests.grad.test_grad import Case, autograd, compiled, run_grad

HERE = Path(__file__).parent


def test_the_grad_clause_is_used_not_the_body():
    """square's clause says 2 * dy where the body's derivative is 2 * x * dy: through
    x * w and the factor 3, d/dx is 3 * 2 * w (the clause), not 3 * 2 * (x w) * w."""
    case = Case("wrong_clause", "main", generic_float=False)
    x = torch.tensor([0.5, -1.0, 2.0, 3.0, -0.25], dtype=torch.float64)
    w = torch.tensor([1.5, 2.0, -1.0, 0.5, 4.0], dtype=torch.float64)
    loss, (dx, dw) = run_grad(case, {}, [x, w])
    torch.testing.assert_close(loss, (3 * (x * w) ** 2).sum())
    torch.testing.assert_close(dx, 6 * w)
    torch.testing.assert_close(dw, 6 * x)
    assert not torch.allclose(dx, 6 * x * w * w)
    text = compile_source((HERE / "wrong_clause.linnet").read_text(), grad=True,
                          numerics="exact").stage("differentiate")
    assert any(f.name.endswith("__grad") for f in text.funcs)


def _against_autograd(case: Case, bind: dict, inputs: list[torch.Tensor]) -> None:
    original, params = compiled(case, bind, grad=False)
    loss, grads = run_grad(case, bind, inputs)
    want_loss, want = autograd(original, params, inputs)
    torch.testing.assert_close(loss, want_loss)
    for g, w in zip(grads, want):
        torch.testing.assert_close(g, w)


def test_ties_follow_autograd():
    """Equal operands of max/min each take half of dy; equal maxima and minima of a
    reduction share dy evenly; abs at 0 gives 0 (all as PyTorch's autograd)."""
    x = torch.tensor([1.0, 2.0, 0.0, 2.0, 0.5], dtype=torch.float64)
    y = torch.tensor([1.0, 0.0, 0.0, 2.0, -3.0], dtype=torch.float64)
    _against_autograd(Case("elementwise", "pick", {"N": (5, 5)}), {"N": 5, "T": "f64"}, [x, y])
    r = torch.tensor([[2.0, 2.0, 1.0], [0.0, 3.0, 3.0], [3.0, 1.0, 3.0]], dtype=torch.float64)
    _against_autograd(Case("reductions", "reduce", {"R": (3, 3), "C": (3, 3)}),
                      {"R": 3, "C": 3, "T": "f64"}, [r])


def test_products_are_exact_at_zeros():
    """One zero in a row: that entry gets the product of the others; two zeros: all 0."""
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.0, 2.0, 3.0, 5.0], [0.0, 0.0, 2.0, 1.0]],
                     dtype=torch.float64)
    loss, (dx,) = run_grad(Case("reductions", "products", generic_float=False), {}, [x])
    row = torch.tensor([[24.0, 12.0, 8.0, 6.0], [30.0, 0, 0, 0], [0, 0, 0, 0]],
                       dtype=torch.float64)
    weights = torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.float64)
    torch.testing.assert_close(loss, torch.tensor(24.0, dtype=torch.float64))
    torch.testing.assert_close(dx, row * weights)  # prod over everything is 0 with 3 zeros


def test_jax_prints_the_same_gradient():
    """`linnet jax --grad` exports the same entry: run it and compare with PyTorch's."""
    case = Case("control", "loops", {"N": (3, 3)})
    bind = {"N": 3, "T": "f64"}
    _, params = compiled(case, bind, grad=True)
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(p.type.shape) for p in params]
    loss, grads = run_grad(case, bind, [torch.tensor(a) for a in arrays])
    path = HERE / "control.linnet"
    text = compile_source(path.read_text(), path=str(path), target="jax", entry="loops",
                          bind=bind, numerics="exact", grad=True).text
    module = import_generated(text, "grad_loops", "jax")
    jloss, *jgrads = module.main(*arrays)
    np.testing.assert_allclose(np.asarray(jloss), loss.numpy(), rtol=1e-12)
    for j, g in zip(jgrads, grads):
        np.testing.assert_allclose(np.asarray(j), g.numpy(), rtol=1e-10, atol=1e-12)
