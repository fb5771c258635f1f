"""A `grad` clause on an op that returns a tuple (docs/language.md, "Gradients"): the clause
takes the result and its gradient as tuples, an unused item's gradient as zeros. Generated
PyTorch runs the op's kernel (Triton's interpreter) and the clause under autograd; the PyTorch
interpreter and generated JAX run the clause too; `--grad` calls it from the adjoint."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from linnet.pipeline import compile_source  # noqa: E402
from linnet.torch.runtime import import_generated  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "tuple_clause.linnet"
N = 40
# each entry's gradient of the loss with respect to x
WANT = {"both": lambda x: 6.0 * x * x, "first": lambda x: 8.0 * x}


def inputs() -> torch.Tensor:
    return torch.randn(N, generator=torch.Generator().manual_seed(5))


@pytest.mark.parametrize("entry", ["both", "first"])
def test_generated_torch_runs_the_kernel_and_the_clause(entry: str) -> None:
    from linnet.torch import load_function
    fn = load_function(str(PROGRAM), entry)
    x = inputs().requires_grad_()
    fn(x).backward()
    assert torch.allclose(x.grad, WANT[entry](x.detach()), rtol=1e-5, atol=1e-5)
    assert fn.ran() == {f"double_and_square__N{N}": {"kernel": 1, "body": 0}}


@pytest.mark.parametrize("entry", ["both", "first"])
def test_the_interpreter_runs_the_clause(entry: str) -> None:
    from linnet.torch import load_function
    fn = load_function(str(PROGRAM), entry, compile=False)
    x = inputs().requires_grad_()
    fn(x).backward()
    assert torch.allclose(x.grad, WANT[entry](x.detach()), rtol=1e-5, atol=1e-5)


def test_generated_jax_runs_the_clause(monkeypatch) -> None:
    jax = pytest.importorskip("jax")
    if jax.default_backend() != "gpu":
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    from linnet.jax import load_function
    fn = load_function(str(PROGRAM), "first")
    x = inputs().numpy()
    got = np.asarray(jax.grad(fn)(x))
    assert np.allclose(got, WANT["first"](x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("entry", ["both", "first"])
def test_grad_export_calls_the_clause(entry: str) -> None:
    text = compile_source(PROGRAM.read_text(), path=str(PROGRAM), target="torch", entry=entry,
                          bind={"N": N}, grad=True).text
    module = import_generated(text, f"tuple_clause_{entry}", "torch")
    x = inputs()
    loss, grad = module.main(x)
    assert torch.allclose(grad, WANT[entry](x), rtol=1e-5, atol=1e-5)
    assert "double_and_square__N40__grad" in text
