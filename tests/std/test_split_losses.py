"""`split_cross_entropy` and `split_token_log_probs` of `std.nn.loss` on every target, on
one shard: with `Shards = 1` they are the head's plain loss, and with `Shards = 2` the
vocabulary is this shard's logits gathered twice side by side, so targets in the second
copy and outside both read as `F.log_softmax` of those gathered logits says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz.backends import run_entry
from tests.std.inputs import TARGETS, normals, target_runtimes

torch = target_runtimes()
F = torch.nn.functional

PROGRAM = Path(__file__).resolve().parent / "split_loss_uses.linnet"
normal = normals(17)


def picked(log_probs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log_probs[n, targets[n]], 0 for a target outside the vocabulary."""
    inside = (targets >= 0) & (targets < log_probs.shape[-1])
    rows = log_probs.gather(1, targets.clamp(0, log_probs.shape[-1] - 1)[:, None])[:, 0]
    return torch.where(inside, rows, torch.zeros_like(rows))


@pytest.mark.parametrize("target", TARGETS)
def test_split_losses_on_one_shard(target: str) -> None:
    h, w = normal(4, 8), normal(5, 8)
    targets = np.array([0, 7, 4, 10], np.int64)  # 7 in the second shard, 10 outside both
    weights = np.array([0.5, 1.0, 0.25, 2.0], np.float32)
    logits = torch.from_numpy(h) @ torch.from_numpy(w).T
    expected = []
    for shards in (1, 2):
        lp = picked(F.log_softmax(logits.repeat(1, shards), -1), torch.from_numpy(targets))
        expected += [-(torch.from_numpy(weights) * lp).sum(), lp]
    got = run_entry(PROGRAM, "main", target, [h, w, targets, weights])
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=5e-6, err_msg=f"result {k}")
