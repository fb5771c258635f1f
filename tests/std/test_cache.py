"""`std.nn.cache` and `std.nn.embedding` against NumPy on every target: each write lands
where it should (a span starting at the cache's first position, one running off its end,
rows written at positions outside the cache, distinct slots, single tokens), and an
embedding reads zeros for ids outside the table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz.backends import run_entry

torch = pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

PROGRAM = Path(__file__).resolve().parent / "cache_uses.linnet"
TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")
RNG = np.random.default_rng(5)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module", params=TARGETS)
def target(request) -> str:
    return request.param


def run(target: str, entry: str, inputs: list) -> list[np.ndarray]:
    return run_entry(PROGRAM, entry, target, inputs)


def span(cache, value, at, rows=None):
    """cache with positions at .. at + N - 1 of `rows` (every row by default) from value."""
    y = cache.copy()
    for b, v in zip(range(len(y)) if rows is None else rows, value):
        for s in range(y.shape[2]):
            if at <= s < at + value.shape[2]:
                y[b, :, s] = v[:, s - at]
    return y


@pytest.mark.parametrize("at", [0, 4, 5])
def test_writes(target: str, at: int) -> None:
    c, v1, vn, one, vm, tok = (normal(3, 2, 6, 4), normal(3, 2, 1, 4), normal(3, 2, 2, 4),
                               normal(1, 2, 2, 4), normal(2, 2, 2, 4), normal(1, 2, 3, 4))
    rows = np.array([1, 5, 7], np.int32)  # the last outside the cache: not written
    slots = np.array([2, 0], np.int32)
    token_rows, token_positions = np.array([0, 2, 2], np.int32), np.array([5, 0, 3], np.int32)
    got = run(target, "main", [c, v1, vn, np.int32(at), rows, one, slots, vm, tok,
                               token_rows, token_positions])
    by_row = c.copy()
    for b, s in enumerate(rows):
        if s < c.shape[2]:
            by_row[b, :, s] = v1[b, :, 0]
    tokens = c.copy()
    for p, (b, s) in enumerate(zip(token_rows, token_positions)):
        tokens[b, :, s] = tok[0, :, p]
    expected = [span(c, v1, at), span(c, vn, at), by_row, span(c, one, at, rows=[1]),
                span(c, vm, at, rows=slots), tokens]
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, e, err_msg=f"result {k}")


def test_embedding_reads_zeros_outside_the_table(target: str) -> None:
    ids = np.array([[0, 4, 7], [-1, 2, 2]], np.int32)
    table = normal(5, 4)
    inside = ((ids >= 0) & (ids < 5))[..., None]
    (got,) = run(target, "embed", [ids, table])
    np.testing.assert_array_equal(got, np.where(inside, table[np.clip(ids, 0, 4)], 0))
