"""The op bodies of `std.nn` and `std.linalg` (their definitions) against the PyTorch
functions they stand for (`F.rms_norm`, `F.layer_norm`, `F.scaled_dot_product_attention`'s
arithmetic, `F.cross_entropy`'s terms, ...), on every target: the PyTorch interpreter,
generated PyTorch, JAX, ONNX and StableHLO. Each program in this folder calls the library
through `use std.nn.<module>::{...}`, as a user's program does."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from linnet.fuzz.backends import run_entry

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

HERE = Path(__file__).resolve().parent
TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")
RNG = np.random.default_rng(7)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def run(program: str, entry: str, target: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return run_entry(HERE / program, entry, target, inputs)


def rotate_half(x):
    d = x.shape[-1] // 2
    return torch.cat([-x[..., d:], x[..., :d]], -1)


def sdpa(q, k, v, mask=None, sinks=None):
    """Attention as the library defines it: masked scores are -1e30, a sink joins the
    softmax and its share is dropped."""
    scores = (q @ k.transpose(-1, -2)) * 0.35
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e30)
    if sinks is None:
        return torch.softmax(scores, -1) @ v
    sink = sinks.view(1, -1, 1, 1).expand(*scores.shape[:-1], 1)
    return torch.softmax(torch.cat([scores, sink], -1), -1)[..., :-1] @ v


def picked(log_probs, targets):
    inside = (targets >= 0) & (targets < log_probs.shape[-1])
    rows = log_probs.gather(1, targets.clamp(0, log_probs.shape[-1] - 1)[:, None])[:, 0]
    return torch.where(inside, rows, torch.zeros_like(rows))


def activations_case():
    x = np.linspace(-4, 4, 12, dtype=np.float32).reshape(4, 3)
    t = torch.from_numpy(x)
    return [x], [F.relu(t), torch.sigmoid(t), F.silu(t), F.gelu(t, approximate="tanh"),
                 F.gelu(t)]


def norms_case():
    x, w, b, g, h = normal(2, 3, 8), normal(5, 8), normal(5), normal(8), normal(8)
    tx, tw, tb, tg, th = map(torch.from_numpy, (x, w, b, g, h))
    return [x, w, b, g, h], [
        F.softmax(tx, -1), F.linear(tx, tw), F.linear(tx, tw, tb),
        F.rms_norm(tx, (8,), tg, eps=1e-6), F.layer_norm(tx, (8,), tg),
        F.layer_norm(tx, (8,), tg, th)]


def channel_norms_case():
    x, m, g, b = normal(2, 4, 3, 3), normal(4), normal(4), normal(4)
    v = np.abs(normal(4))
    tx, tm, tv, tg, tb = map(torch.from_numpy, (x, m, v, g, b))
    return [x, m, v, g, b], [F.batch_norm(tx, tm, tv, tg, tb, eps=1e-5),
                             F.group_norm(tx, 2, tg, tb, eps=1e-6)]


def attention_case():
    q, k, v = normal(2, 4, 3, 8), normal(2, 4, 5, 8), normal(2, 4, 5, 8)
    kg, vg, s = normal(2, 2, 5, 8), normal(2, 2, 5, 8), normal(4)
    m = RNG.random((2, 3, 5)) < 0.7
    m[1, 2, :] = False  # a row that sees no key
    tq, tk, tv, tkg, tvg, ts = map(torch.from_numpy, (q, k, v, kg, vg, s))
    rows = torch.from_numpy(m)[:, None]
    causal = torch.ones(3, 5, dtype=torch.bool).tril(2)
    gk, gv = tkg.repeat_interleave(2, dim=1), tvg.repeat_interleave(2, dim=1)
    return [q, k, v, kg, vg, m, s], [
        sdpa(tq, tk, tv), sdpa(tq, tk, tv, causal), sdpa(tq, tk, tv, rows),
        sdpa(tq, gk, gv, causal), sdpa(tq, gk, gv, rows), sdpa(tq, gk, gv, rows, ts)]


def rope_case():
    x, c, s, cr, sr = normal(2, 3, 4, 8), normal(4, 8), normal(4, 8), normal(2, 4, 8), normal(2, 4, 8)
    tx, tc, ts, tcr, tsr = map(torch.from_numpy, (x, c, s, cr, sr))
    return [x, c, s, cr, sr], [tx * tc + rotate_half(tx) * ts,
                               tx * tcr[:, None] + rotate_half(tx) * tsr[:, None],
                               rotate_half(tx)]


def heads_case():
    h, w, g, u, d = normal(6, 8), normal(10, 8), normal(5, 8), normal(5, 8), normal(8, 5)
    targets = np.array([0, 9, 3, 3, 11, -1], np.int64)  # two outside the vocabulary
    weights = RNG.random(6).astype(np.float32)
    th, tw, tg, tu, td, tt, twt = map(torch.from_numpy, (h, w, g, u, d, targets, weights))
    logits = th @ tw.T
    log_probs = F.log_softmax(logits, -1)
    chosen = picked(log_probs, tt)
    loss = -(twt * chosen).sum()
    return [h, w, g, u, d, targets, weights], [
        F.linear(F.silu(F.linear(th, tg)) * F.linear(th, tu), td), logits.argmax(-1).int(),
        log_probs, chosen, loss, loss, -(log_probs.exp() * log_probs).sum(-1),
        torch.cat([th, th], -1), logits, th.T, (twt * twt).sum()]


def pool_case():
    x = normal(2, 3, 4, 5)
    return [x], [torch.from_numpy(x).mean((2, 3))]


def conv_case():
    x, w, b, x1, w1 = normal(2, 3, 7, 6), normal(4, 3, 3, 3), normal(4), normal(2, 3, 9), normal(4, 3, 3)
    tx, tw, tb, tx1, tw1 = map(torch.from_numpy, (x, w, b, x1, w1))
    return [x, w, b, x1, w1], [
        F.conv2d(tx, tw, tb, stride=2, padding=1), F.conv2d(tx, tw),
        F.conv1d(tx1, tw1, tb, stride=2, padding=1), F.pad(tx, (1, 1, 1, 1)),
        F.max_pool2d(tx, 3, 2, 1), F.interpolate(tx, scale_factor=2, mode="nearest")]


CASES: dict[tuple[str, str], Callable] = {
    ("nn_activations.linnet", "main"): activations_case,
    ("nn_norms.linnet", "main"): norms_case,
    ("nn_norms.linnet", "conv"): channel_norms_case,
    ("nn_attention.linnet", "main"): attention_case,
    ("nn_misc.linnet", "main"): rope_case,
    ("nn_misc.linnet", "heads"): heads_case,
    ("nn_misc.linnet", "pooled"): pool_case,
    ("nn_conv.linnet", "main"): conv_case,
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("program,entry", list(CASES), ids=lambda v: str(v).removesuffix(".linnet"))
def test_bodies_match_their_torch_counterparts(program: str, entry: str, target: str) -> None:
    inputs, expected = CASES[(program, entry)]()
    results = run(program, entry, target, inputs)
    assert len(results) == len(expected)
    for k, (got, want) in enumerate(zip(results, expected)):
        want = want.detach().numpy()
        assert got.shape == want.shape, f"result {k}"
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=5e-6, err_msg=f"result {k}")
