"""Optional block members on every target: `examples/optional_model.linnet` (a bias each
layer may have, an optional head, an optional output bias) compiled for several
checkpoints, each holding a different set of them, against a NumPy reference that reads
the same set. Present members are inputs after the entry's own, in manifest order; absent
ones are not inputs at all.
"""

from __future__ import annotations


import numpy as np
import pytest

from linnet.pipeline import compile_file
from linnet.fuzz.backends import as_numpy, compile_entry, loader, to_torch

from kernel_cases import DEVICE
from optional_model_case import CHECKPOINTS, H, L, PROGRAM, V, main
from optional_model_case import checkpoint as _checkpoint, has_head as _head_present

B = 2
BIND = {"L": L, "H": H, "V": V, "B": B}
TARGETS = ["interpreter", "torch", "jax", "onnx", "stablehlo"]


def _reference(x: np.ndarray, w: dict[str, np.ndarray], calls: dict[str, int]):
    """`main` in NumPy (float64, `optional_model_case.main`): the logits, then each next
    state."""
    return (main(x, w), *[np.array([c + 1]) for c in calls.values()])


def _inputs(compiled, w: dict[str, np.ndarray], calls: dict[str, int]) -> list[np.ndarray]:
    """The weights in the manifest's order, states at their counts."""
    out = []
    for p in compiled.parameters.inputs:
        out.append(np.array([calls[p.path]], np.int64) if p.kind == "state" else w[p.path])
    return out


def _compile(target: str, entry: str, paths: list[str], grad: bool = False):
    return compile_entry(PROGRAM.read_text(), str(PROGRAM), entry, BIND, target, grad=grad,
                         present=paths)


def _run(target: str, entry: str, paths: list[str], x: np.ndarray, weights: list,
         grad: bool = False):
    device = DEVICE if target in ("interpreter", "torch") else "cpu"
    run = loader(target)(_compile(target, entry, paths, grad), entry)
    return run(*(to_torch(v, device) for v in (x, *weights)))


def test_presence_decides_the_inputs() -> None:
    """Each checkpoint's present members, and only those, are inputs in manifest order;
    the head is present only with both its required params."""
    for name, paths in CHECKPOINTS.items():
        compiled = compile_file(PROGRAM, target="torch", entry="main", bind=BIND,
                                present=paths)
        manifest = compiled.parameters
        want = [p for p in manifest.parameters if p.kind != "state" and p.path in paths
                and (not p.path.startswith("head.") or _head_present(_checkpoint(paths)))]
        assert [p.path for p in manifest.inputs if p.kind != "state"] == \
            [p.path for p in want], name
        states = [p.path for p in manifest.inputs if p.kind == "state"]
        head = ["head.calls"] if _head_present(_checkpoint(paths)) else []
        assert states == [f"layers.{k}.calls" for k in range(L)] + head, name
        assert manifest.assigned == tuple(states), name
        optional = {p.path for p in manifest.parameters if p.optional}
        assert "out_bias" in optional and "head.up" in optional and "embed" not in optional


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("checkpoint", sorted(CHECKPOINTS))
def test_optional_members_match_numpy(target: str, checkpoint: str) -> None:
    if target == "jax":
        pytest.importorskip("jax")
    if target == "onnx":
        pytest.importorskip("onnxruntime")
    paths = CHECKPOINTS[checkpoint]
    w = _checkpoint(paths)
    compiled = compile_file(PROGRAM, target="torch", entry="main", bind=BIND, present=paths)
    calls = {p.path: 3 * k for k, p in enumerate(compiled.parameters.inputs)
             if p.kind == "state"}
    x = np.random.default_rng(1).standard_normal((B, H)).astype(np.float32)
    results = _run(target, "main", paths, x, _inputs(compiled, w, calls))
    want = _reference(x, w, calls)
    assert len(results) == len(want)
    np.testing.assert_allclose(as_numpy(results[0]).astype(np.float64), want[0],
                               rtol=1e-4, atol=1e-4)
    for got, expected in zip(results[1:], want[1:]):
        np.testing.assert_array_equal(as_numpy(got), expected)


@pytest.mark.parametrize("target", TARGETS)
def test_grad_reaches_a_present_optional_param(target: str) -> None:
    """`--grad` of `loss` with `out_bias` and the head (and its bias) present: their
    gradients come after the input's, in manifest order, against torch autograd."""
    if target in ("jax", "onnx"):
        pytest.importorskip({"jax": "jax", "onnx": "onnxruntime"}[target])
    import torch
    paths = CHECKPOINTS["everything"]
    w = _checkpoint(paths)
    compiled = compile_file(PROGRAM, target="torch", entry="loss", bind=BIND, present=paths,
                            grad=True)
    trained = [p.path for p in compiled.parameters.inputs if p.trainable]
    assert "out_bias" in trained and "head.up_bias" in trained
    calls = {p.path: 0 for p in compiled.parameters.inputs if p.kind == "state"}
    x = np.random.default_rng(1).standard_normal((B, H)).astype(np.float32)
    results = _run(target, "loss", paths, x, _inputs(compiled, w, calls), grad=True)
    leaves = {"x": torch.from_numpy(x).double().requires_grad_()}
    leaves.update({n: torch.from_numpy(w[n]).double().requires_grad_() for n in trained})
    h = torch.tanh(leaves["x"] @ leaves["head.up"].T + leaves["head.up_bias"])
    y = (h @ leaves["head.down"].T) @ leaves["embed"].T + leaves["out_bias"]
    loss = (y * y).sum()
    loss.backward()
    want = [loss.detach()] + [torch.zeros_like(leaves[n]) if leaves[n].grad is None
                              else leaves[n].grad for n in ["x", *trained]]
    assert len(results) == len(want) + 1  # and the head's next count
    for got, expected in zip(results, want):
        np.testing.assert_allclose(as_numpy(got).astype(np.float64), expected.numpy(),
                                   rtol=1e-3, atol=1e-4)
    assert as_numpy(results[1 + 1 + trained.index("out_bias")]).any()
    np.testing.assert_array_equal(as_numpy(results[-1]), [1])
