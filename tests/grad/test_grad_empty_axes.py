"""`--grad` through reductions over empty axes, on every target: generated PyTorch, JAX, ONNX
(onnxruntime) and StableHLO (XLA), and autograd through the PyTorch interpreter and the
generated module of the original entry.

The identities reach the loss (sum 0, prod 1, max -inf, min inf) and a reduction over
nothing passes no gradient back. Each entry of `empty_axes.linnet` has a loss and
gradients known by hand. The JAX module used to fail here: the reverse loop of a scan of no
trips still reads its stash at a runtime index when JAX traces it, and indexing an axis of
extent 0 is an error at trace time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.pipeline import compile_source
from linnet.torch import load_function
from linnet.torch.runtime import import_generated

SOURCE = Path(__file__).parent / "empty_axes.linnet"
Y = np.array([0.5, -1.25, 2.0])


def _case(entry: str) -> tuple[list[np.ndarray], float, list[np.ndarray]]:
    """(inputs, loss, gradient of each input) of an entry, computed by hand."""
    f32 = lambda a: np.asarray(a, np.float32)  # noqa: E731
    if entry == "sum_prod":
        return [f32(np.zeros((0, 3))), f32(Y)], float(Y.sum()), [f32(np.zeros((0, 3))),
                                                                 f32(np.ones(3))]
    if entry == "highest":
        return [f32(np.zeros((0, 3))), f32(Y)], float(2 * Y.sum()), [f32(np.zeros((0, 3))),
                                                                     f32(np.full(3, 2.0))]
    if entry == "lowest":
        return [np.zeros((0, 3)), Y], float((Y * Y).sum()), [np.zeros((0, 3)), 2 * Y]
    if entry == "scan_max":
        return [f32(Y)], -np.inf, [f32(np.zeros(3))]
    if entry == "scan_carry":  # h stays x: the loss is sum(x * x)
        return [f32(Y)], float((Y * Y).sum()), [f32(2 * Y)]
    raise KeyError(entry)


ENTRIES = ["sum_prod", "highest", "lowest", "scan_max", "scan_carry"]


def _grad_runner(target: str, entry: str):
    out = compile_source(SOURCE.read_text(), path=str(SOURCE), target=target, entry=entry,
                         numerics="exact", grad=True).text
    if target == "onnx":
        pytest.importorskip("onnxruntime")
        from linnet.fuzz.onnx_run import load_onnx
        return load_onnx(out)
    if target == "stablehlo":
        from linnet.fuzz.stablehlo_run import run_stablehlo
        return lambda *xs: run_stablehlo(out, *xs)
    if target == "jax":
        pytest.importorskip("jax")
    module = import_generated(out, f"grad_empty_{entry}", target)
    if target == "torch":
        return lambda *xs: [r.numpy() for r in module.main(*(torch.from_numpy(x) for x in xs))]
    return lambda *xs: [np.asarray(r) for r in module.main(*xs)]


def _same(got: list, loss: float, grads: list[np.ndarray]) -> None:
    assert len(got) == 1 + len(grads)
    np.testing.assert_allclose(np.asarray(got[0], np.float64), loss, rtol=1e-6)
    for g, want in zip(got[1:], grads):
        g = np.asarray(g)
        assert g.shape == want.shape and g.dtype == want.dtype, (g, want)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6)


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path_factory.getbasetemp() / "linnet-cache"))


@pytest.mark.parametrize("target", ["torch", "jax", "onnx", "stablehlo"])
@pytest.mark.parametrize("entry", ENTRIES)
def test_grad_export_through_an_empty_reduction(entry: str, target: str) -> None:
    inputs, loss, grads = _case(entry)
    _same(_grad_runner(target, entry)(*inputs), loss, grads)


@pytest.mark.parametrize("compile", [True, False], ids=["generated", "interpreter"])
@pytest.mark.parametrize("entry", ENTRIES)
def test_autograd_through_an_empty_reduction(entry: str, compile: bool) -> None:
    inputs, loss, grads = _case(entry)
    fn = load_function(str(SOURCE), entry, compile=compile, numerics="exact")
    leaves = [torch.from_numpy(x).requires_grad_() for x in inputs]
    out = fn(*leaves)
    assert float(out) == loss or np.isclose(float(out), loss, rtol=1e-6)
    if out.requires_grad:
        out.backward()
    got = [x.grad if x.grad is not None else torch.zeros_like(x) for x in leaves]
    _same([out.detach().numpy()] + [g.numpy() for g in got], loss, grads)
