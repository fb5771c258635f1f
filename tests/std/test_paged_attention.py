"""`paged_attention` and `paged_prefill_attention` of `std.nn.attention` on every target,
against a reference that builds each row's keys and values from the pool explicitly: pages
shared between rows, an unused page whose entry lies outside the pool, rows that see one
position, some or all of theirs, and grouped query heads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz.backends import run_entry
from tests.std.inputs import TARGETS, normals, target_runtimes

torch = target_runtimes()

PROGRAM = Path(__file__).resolve().parent / "paged_uses.linnet"
normal = normals(11)
SIZE, SCALE = 2, 0.35
TABLE = np.array([[4, 1, -1], [0, 3, 2], [2, 0, 4]], np.int32)  # -1: an unused page


def gathered(pool: np.ndarray, pages: np.ndarray) -> np.ndarray:
    """A row's keys (or values) [Hk, Pages * Size, D]: position s from slot
    pages[s // Size] * Size + s % Size of the pool [1, Hk, N, D], zeros outside it."""
    spots = np.arange(len(pages) * SIZE)
    slots = pages[spots // SIZE].astype(np.int64) * SIZE + spots % SIZE
    inside = (slots >= 0) & (slots < pool.shape[2])
    return np.where(inside[None, :, None], pool[0][:, np.clip(slots, 0, pool.shape[2] - 1)], 0)


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, pages: np.ndarray,
              position: int) -> np.ndarray:
    """One query [Hq, D] over a row's gathered keys: masked scores are -1e30, key head j
    serves query heads j * Hq / Hk .. (j + 1) * Hq / Hk - 1."""
    groups = q.shape[0] // k.shape[1]
    keys = torch.from_numpy(gathered(k, pages)).repeat_interleave(groups, 0)
    values = torch.from_numpy(gathered(v, pages)).repeat_interleave(groups, 0)
    scores = (torch.from_numpy(q)[:, None] @ keys.transpose(-1, -2))[:, 0] * SCALE
    seen = torch.arange(keys.shape[1]) <= position
    weights = torch.softmax(scores.masked_fill(~seen, -1e30), -1)
    return (weights[:, None] @ values)[:, 0].numpy()


@pytest.mark.parametrize("target", TARGETS)
def test_decode_rows_read_their_pages(target: str) -> None:
    q, k, v = normal(3, 4, 1, 8), normal(1, 2, 10, 8), normal(1, 2, 10, 8)
    positions = np.array([2, 5, 0], np.int32)
    (got,) = run_entry(PROGRAM, "decode", target, [q, k, v, TABLE, positions])
    want = np.stack([reference(q[b, :, 0], k, v, TABLE[b], positions[b]) for b in range(3)])
    np.testing.assert_allclose(got, want[:, :, None], rtol=1e-5, atol=5e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_prefill_tokens_read_their_rows_pages(target: str) -> None:
    q, k, v = normal(1, 4, 5, 8), normal(1, 2, 10, 8), normal(1, 2, 10, 8)
    rows, positions = np.array([0, 0, 2, 1, 1], np.int32), np.array([1, 2, 0, 4, 5], np.int32)
    (got,) = run_entry(PROGRAM, "prefill", target, [q, k, v, TABLE, rows, positions])
    want = np.stack([reference(q[0, :, p], k, v, TABLE[rows[p]], positions[p]) for p in range(5)])
    np.testing.assert_allclose(got[0], want.transpose(1, 0, 2), rtol=1e-5, atol=5e-6)



def masked_kernels_ran(fn) -> dict:
    """{attention op: its `ran()` counts} of a loaded entry, instances summed by op, for
    the ops that ran at all."""
    ran: dict = {}
    for instance, counts in fn.ran().items():
        total = ran.setdefault(instance.split("__")[0], {"kernel": 0, "body": 0})
        for key in total:
            total[key] += counts[key]
    return {op: c for op, c in ran.items() if op.startswith("attention") and any(c.values())}


def test_paged_forms_run_the_masked_kernels() -> None:
    """Both paged forms reach grouped_attention_rows, whose masked kernels run (in Triton's
    interpreter here): forward for a prefill, forward and backward for a decode step. The
    backward's values are held to SDPA in tests/std/test_attention_kernels.py."""
    from linnet.torch import load_function
    q, k, v = normal(1, 4, 5, 8), normal(1, 2, 10, 8), normal(1, 2, 10, 8)
    rows, positions = np.array([0, 0, 2, 1, 1], np.int32), np.array([1, 2, 0, 4, 5], np.int32)
    prefill = load_function(str(PROGRAM), "prefill")
    prefill(*(torch.from_numpy(x) for x in (q, k, v, TABLE, rows, positions)))
    assert masked_kernels_ran(prefill) == {
        "attention_masked_rows_lse": {"kernel": 1, "body": 0}}
    decode = load_function(str(PROGRAM), "decode")
    query = torch.from_numpy(normal(3, 4, 1, 8)).requires_grad_()
    got = decode(query, *(torch.from_numpy(x) for x in (k, v, TABLE, positions[:3])))
    got.sum().backward()
    assert masked_kernels_ran(decode) == {op: {"kernel": 1, "body": 0} for op in (
        "attention_masked_rows_lse", "attention_delta", "attention_masked_dq",
        "attention_masked_dkv")}
