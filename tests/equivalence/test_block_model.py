"""A block entry runs on every target like a module-level one: `examples/block_model.linnet` (an
array of Mlp children inside a Model, each Mlp counting its calls, the Model its steps)
against a NumPy reference written here, with the weights passed as the extra inputs
after the entry's own, in manifest order, and the next states returned after the result.
"""

from __future__ import annotations


import numpy as np
import pytest

from linnet.pipeline import compile_file
from linnet.fuzz.backends import as_numpy, compile_entry, loader, to_torch

from block_model_case import H, PROGRAM, V, mixed, weights
from kernel_cases import DEVICE

L, B = 3, 2
BIND = {"L": L, "H": H, "V": V, "B": B}
TARGETS = ["interpreter", "torch", "jax", "onnx", "stablehlo"]


def _run(target: str, entry: str, x: np.ndarray, w: dict[str, np.ndarray], grad: bool = False):
    """The entry compiled for target, run on x and the weights (on the GPU, where there is
    one, for the PyTorch targets)."""
    compiled = compile_entry(PROGRAM.read_text(), str(PROGRAM), entry, BIND, target, grad=grad)
    device = DEVICE if target in ("interpreter", "torch") else "cpu"
    return loader(target)(compiled, entry)(*(to_torch(v, device) for v in (x, *w.values())))


def _weights(seed: int = 0) -> dict[str, np.ndarray]:
    """Every parameter by path, in manifest order: `block_model_case.weights`, each layer's
    state after its param and buffers, states at small counts."""
    base = weights(L, seed)
    w = {"embed": base["embed"]}
    for k in range(L):
        for name in ("up", "down", "scale"):
            w[f"layers.{k}.{name}"] = base[f"layers.{k}.{name}"]
        w[f"layers.{k}.calls"] = np.array([10 * k], dtype=np.int64)
    w["steps"] = np.array([7], dtype=np.int64)
    return w


def _reference(x: np.ndarray, w: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """The model in NumPy (float64): the logits, then each next state in manifest order."""
    logits = mixed(x, w, L) @ w["embed"].T.astype(np.float64)
    calls = [w[f"layers.{k}.calls"] + 1 for k in range(L)]
    return (logits, *calls, w["steps"] + 1)


def _inputs(seed: int = 1) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    x = np.random.default_rng(seed).standard_normal((B, H)).astype(np.float32)
    return x, _weights()


def test_the_manifest_lists_every_parameter_in_order() -> None:
    compiled = compile_file(PROGRAM, target="torch", entry="main", bind=BIND)
    manifest = compiled.parameters
    assert (manifest.root, manifest.entry) == ("Model", "main")
    assert [p.path for p in manifest.inputs] == list(_weights())
    kinds = {p.path: p.kind for p in manifest.parameters}
    assert (kinds["embed"], kinds["layers.1.scale"], kinds["layers.2.calls"]) == (
        "param", "buffer", "state")
    shapes = {p.path: p.shape for p in manifest.parameters}
    assert shapes["layers.0.up"] == (2 * H, H) and shapes["steps"] == (1,)
    assert manifest.assigned == tuple(f"layers.{k}.calls" for k in range(L)) + ("steps",)


@pytest.mark.parametrize("target", TARGETS)
def test_block_entry_matches_numpy(target: str) -> None:
    if target == "jax":
        pytest.importorskip("jax")
    if target == "onnx":
        pytest.importorskip("onnxruntime")
    x, w = _inputs()
    results = _run(target, "main", x, w)
    want = _reference(x, w)
    assert len(results) == len(want) == 1 + L + 1
    np.testing.assert_allclose(as_numpy(results[0]).astype(np.float64), want[0],
                               rtol=1e-4, atol=1e-4)
    for got, expected in zip(results[1:], want[1:]):
        assert as_numpy(got).dtype == np.int64
        np.testing.assert_array_equal(as_numpy(got), expected)


def test_an_entry_that_assigns_no_state_returns_no_state() -> None:
    """`loss` calls the layers (which count their calls) but not `steps`: it returns the
    loss and the layers' next counts, not `steps`."""
    compiled = compile_file(PROGRAM, target="torch", entry="loss", bind=BIND)
    assert compiled.parameters.assigned == tuple(f"layers.{k}.calls" for k in range(L))
    x, w = _inputs()
    results = _run("interpreter", "loss", x, w)
    y = x.astype(np.float64)
    for k in range(L):
        h = np.tanh(y @ w[f"layers.{k}.up"].T)
        y = y + (h @ w[f"layers.{k}.down"].T) * w[f"layers.{k}.scale"]
    assert len(results) == 1 + L
    np.testing.assert_allclose(float(as_numpy(results[0])), float((y * y).sum()), rtol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_grad_of_a_block_entry(target: str) -> None:
    """`--grad` of `loss`: the loss, its gradient with respect to the entry's input and
    to every floating param in manifest order (not the buffers `scale`, nor the integer
    states), then the next states; against torch autograd in float64."""
    if target in ("jax", "onnx"):
        pytest.importorskip({"jax": "jax", "onnx": "onnxruntime"}[target])
    import torch
    x, w = _inputs()
    results = _run(target, "loss", x, w, grad=True)
    trained = ["embed"] + [f"layers.{k}.{n}" for k in range(L) for n in ("up", "down")]
    leaves = {"x": torch.from_numpy(x).double().requires_grad_()}
    leaves.update({n: torch.from_numpy(w[n]).double().requires_grad_() for n in trained})
    y = leaves["x"]
    for k in range(L):
        h = torch.tanh(y @ leaves[f"layers.{k}.up"].T)
        y = y + (h @ leaves[f"layers.{k}.down"].T) * torch.from_numpy(w[f"layers.{k}.scale"])
    loss = (y * y).sum()
    loss.backward()
    want = [loss.detach()] + [torch.zeros_like(leaves[n]) if leaves[n].grad is None
                              else leaves[n].grad for n in ["x", *trained]]
    assert len(results) == len(want) + L
    for got, expected in zip(results, want):
        np.testing.assert_allclose(as_numpy(got).astype(np.float64), expected.numpy(),
                                   rtol=1e-3, atol=1e-4)
    assert not as_numpy(results[2]).any()  # `loss` does not read `embed`
    for k, got in enumerate(results[len(want):]):
        np.testing.assert_array_equal(as_numpy(got), w[f"layers.{k}.calls"] + 1)
