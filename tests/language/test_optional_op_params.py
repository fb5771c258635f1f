"""An optional parameter of an op that binds a kernel, or of an op differentiated.

The kernel takes what the optional holds and runs for an instance where it is known
present; `none`, or a presence known only at run time, runs the body. An op with an
optional parameter has no `grad` clause (E2125): its body, for the choice made, is
differentiated, and an optional's value gets its true gradient. Spec program 173.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.check.frontend import check_program
from linnet.pipeline import compile_source
from linnet.fuzz.backends import as_numpy, compile_entry, loader
from linnet.torch import load_function

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "spec" / "valid" / "173_optional_op_params.linnet"


def _funcs(entry: str, target: str = "torch", grad: bool = False) -> dict:
    compiled = compile_source(PROGRAM.read_text(), path=str(PROGRAM), entry=entry,
                              target=target, grad=grad)
    return {f.name: f for f in compiled.stage("elaborate").funcs}


def test_the_kernel_binds_the_type_an_optional_holds() -> None:
    assert check_program(str(PROGRAM)).diagnostics == []
    wrong = PROGRAM.read_text().replace("b: Tensor[C; f32]?) -> Tensor[R, C; f32]",
                                        "b: Tensor[R; f32]?) -> Tensor[R, C; f32]")
    wrong = wrong.replace("broadcast_to(v, [R, C])", "x")
    found = [(d.code, d.message) for d in check_program("w.linnet", wrong).diagnostics]
    assert found[0] == ("E2126", "kernel parameter is Tensor[C; f32], but the op's `b` is "
                                 "Tensor[R; f32]")


def test_only_the_instance_with_the_optional_present_keeps_its_kernel() -> None:
    ops = {f.name: f for f in _funcs("main").values() if f.kind == "op"}
    by_params = {tuple(p.name for p in f.params): f for f in ops.values()}
    assert set(by_params) == {("x", "b"), ("x",), ("x", "b_present", "b")}
    assert by_params[("x", "b")].kernel is not None
    assert by_params[("x", "b")].kernel.kernel == "bias_rows"
    assert by_params[("x",)].kernel is None
    assert by_params[("x", "b_present", "b")].kernel is None


@pytest.mark.parametrize("c", [True, False])
def test_main_matches_numpy(c: bool) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    for target in ("interpreter", "torch"):
        compiled = compile_entry(PROGRAM.read_text(), str(PROGRAM), "main", {}, target)
        (y,) = loader(target)(compiled, "main")(torch.from_numpy(x), torch.from_numpy(b),
                                                torch.tensor(c))
        want = (x + b) + x + (x + b if c else x)
        np.testing.assert_allclose(as_numpy(y), want, rtol=1e-6, atol=1e-6)


GRAD_CLAUSE = ("    return match shift { some(v) => base + v  none => base }\n}\n",
               "    return match shift { some(v) => base + v  none => base }\n"
               "} grad(y, dy) {\n    return match s { some(k) => dy * k  none => dy }\n}\n")


def test_a_grad_clause_on_an_op_with_optionals_is_refused() -> None:
    """A clause would give the optionals no gradient, silently wrong where one carries an
    input (`some(t)`): E2125, at the first optional parameter."""
    text = PROGRAM.read_text()
    assert GRAD_CLAUSE[0] in text
    result = check_program(str(PROGRAM), text.replace(*GRAD_CLAUSE))
    [d] = result.diagnostics
    assert (d.code, d.label) == ("E2125", "not a tensor or scalar")
    assert d.message.endswith("parameter `s` of `scaled` is f32?")
    assert text[d.span.start:d.span.end] == "s: f32? = none"


RAMP = np.arange(4) * 0.5  # `loss`'s shifts
T_AS_SHIFT = ("scaled(x, maybe, some(ramp))", "scaled(x, maybe, some(t))")


def _expected(x: np.ndarray, t: np.ndarray, c: bool, t_shift: bool = False
              ) -> tuple[float, np.ndarray, np.ndarray]:
    """The loss and its true gradients: `x` and `t` each through `scaled`'s `x`; with
    `t_shift` (the program with `some(t)` for a shift), `t` also through the optional
    `shift`, which the differentiated body counts."""
    k = 2.0 if c else 1.0
    shift = t if t_shift else RAMP
    y = x + 3.0 * x + (k * x + shift) + (t + RAMP)
    return float((y * y).sum()), 2.0 * y * (1.0 + 3.0 + k), 2.0 * y * (2.0 if t_shift else 1.0)


def _check_grads(text: str, target: str, t_shift: bool) -> None:
    rng = np.random.default_rng(6)
    x, t = (rng.standard_normal(4).astype(np.float32) for _ in range(2))
    compiled = compile_entry(text, str(PROGRAM), "loss", {}, target, grad=True)
    run = loader(target)(compiled, "loss")
    for c in (True, False):
        loss, dx, dt = run(torch.from_numpy(x), torch.from_numpy(t), torch.tensor(c))
        want_loss, want_dx, want_dt = _expected(x.astype(np.float64), t.astype(np.float64),
                                                c, t_shift)
        assert float(as_numpy(loss)) == pytest.approx(want_loss, rel=1e-5)
        np.testing.assert_allclose(as_numpy(dx), want_dx, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(as_numpy(dt), want_dt, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["interpreter", "torch", "jax", "onnx", "stablehlo"])
def test_grad_of_the_loss_differentiates_the_bodies(target: str) -> None:
    _check_grads(PROGRAM.read_text(), target, t_shift=False)


@pytest.mark.parametrize("target", ["interpreter", "torch", "jax"])
def test_an_optional_gets_its_true_gradient(target: str) -> None:
    """`t` as the optional `shift` too: its gradient counts both paths."""
    text = PROGRAM.read_text()
    assert T_AS_SHIFT[0] in text
    _check_grads(text.replace(*T_AS_SHIFT), target, t_shift=True)


def test_torch_autograd_differentiates_the_bodies_too() -> None:
    loss_fn = load_function(str(PROGRAM), "loss")
    x = torch.randn(4, dtype=torch.float32, requires_grad=True)
    t = torch.randn(4, dtype=torch.float32, requires_grad=True)
    loss = loss_fn(x, t, torch.tensor(True))
    loss = loss[0] if isinstance(loss, tuple) else loss
    loss.backward()
    want_loss, want_dx, want_dt = _expected(x.detach().double().numpy(),
                                            t.detach().double().numpy(), True)
    assert float(loss.detach()) == pytest.approx(want_loss, rel=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), want_dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t.grad.numpy(), want_dt, rtol=1e-5, atol=1e-5)


def test_verify_checks_the_instance_that_runs_the_kernel() -> None:
    """`linnet verify` wraps the op in an entry taking what the optional holds and passing
    `some(b)`: the instance whose kernel runs."""
    from linnet.fuzz import harness
    spec = harness.target_spec(PROGRAM, "add_bias")
    assert [(n, str(ty)) for n, ty in spec.params] == [("x", "Tensor[R, C; f32]"),
                                                       ("b", "Tensor[C; f32]")]
    assert "add_bias<R, C>(x, some(b))" in spec.source
    assert spec.kernel == "bias_rows"
