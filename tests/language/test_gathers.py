"""Gathers in index notation (docs/language.md, "Gathers"), run on every target: spec
program 181 through the PyTorch interpreter, generated PyTorch, JAX, ONNX and StableHLO
against NumPy, ids outside the table reading 0 everywhere; the same in the oracle and in a
kernel checked against its body; the gradient of an embedding against autograd of
`F.embedding`; and the mistakes a gather position can hold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz import crosscheck as cc
from linnet.fuzz.backends import run_entry
from linnet.fuzz.oracle import evaluate_source
from linnet.pipeline import compile_source
from programs import diagnostics_of

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

PROGRAM = Path(__file__).resolve().parents[1] / "spec" / "valid" / "181_gathers.linnet"
TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")


def _run(target: str, entry: str, bind: dict, *inputs: np.ndarray) -> list[np.ndarray]:
    return run_entry(PROGRAM, entry, target, inputs, bind)


def _gather_rows(table: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """NumPy's reading of `e[.., h] = table[ids[..], h]`: rows outside the table are 0."""
    inside = (ids >= 0) & (ids < table.shape[0])
    rows = table[np.clip(ids, 0, table.shape[0] - 1).astype(np.int64)]
    return np.where(inside[..., None], rows, np.float32(0))


TABLE = np.arange(20, dtype=np.float32).reshape(5, 4) - 6.5
IDS = np.array([[0, 4, 5], [-1, 2, 2]], dtype=np.int32)  # 5 and -1 lie outside


@pytest.mark.parametrize("target", TARGETS)
def test_an_embedding_lookup_reads_zero_outside_the_table(target: str) -> None:
    (e,) = _run(target, "lookup", {"B": 2, "S": 3, "V": 5, "H": 4}, TABLE, IDS)
    np.testing.assert_array_equal(e, _gather_rows(TABLE, IDS))
    assert e[0, 2].tolist() == [0.0] * 4 and e[1, 0].tolist() == [0.0] * 4


@pytest.mark.parametrize("target", TARGETS)
def test_two_gathered_axes_read_one_element_per_pair(target: str) -> None:
    rows, cols = np.array([0, 4, 5, 1, 3]), np.array([3, 3, 0, -2, 0])
    (y,) = _run(target, "pick", {"N": 5, "R": 5, "C": 4}, TABLE, rows, cols)
    assert y.tolist() == [TABLE[0, 3], TABLE[4, 3], 0.0, 0.0, TABLE[3, 0]]


@pytest.mark.parametrize("target", TARGETS)
def test_a_gather_in_a_reduction(target: str) -> None:
    w = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    idx = np.array([2, 0, 7, 3], dtype=np.int32)
    x = np.array([1.0, 10.0, 100.0, 1000.0], dtype=np.float32)
    total, shifted = _run(target, "weighted", {"K": 4, "V": 4}, w, idx, x)
    assert total.item() == 3.0 + 10.0 + 0.0 + 4000.0  # w[7] is 0
    assert shifted.item() == 4.0 + 20.0 + 0.0 + 0.0  # w[idx + 1]: w[3], w[1], w[8], w[4]


@pytest.mark.parametrize("target", TARGETS)
def test_a_gather_over_a_pack_and_a_nested_gather(target: str) -> None:
    ids = np.array([[0, 4, 200], [3, 1, 2]], dtype=np.uint8)
    order = np.array([4, -3, 0, 9, 1], dtype=np.int16)
    e, f = _run(target, "packed", {"B": 2, "S": 3, "V": 5, "H": 4}, TABLE, ids, order)
    np.testing.assert_array_equal(e, _gather_rows(TABLE, ids))
    nested = np.where(ids < 5, order[np.minimum(ids, 4)], 0)  # order[200] reads 0: row 0
    np.testing.assert_array_equal(f, _gather_rows(TABLE, nested))


def test_the_oracle_reads_the_same() -> None:
    (e,) = evaluate_source(PROGRAM.read_text(), "lookup", {"B": 2, "S": 3, "V": 5, "H": 4},
                           [TABLE, IDS], path=str(PROGRAM))
    np.testing.assert_array_equal(e, _gather_rows(TABLE, IDS))


@pytest.mark.parametrize("target", ["interpreter", "torch"])
def test_a_kernel_and_the_gathering_body_agree_outside_the_table(target: str) -> None:
    """Generated PyTorch runs the op's kernel (in Triton's interpreter here), the PyTorch
    interpreter its body: both read 0 for the ids outside the table."""
    table = np.linspace(-1, 1, 7 * 48, dtype=np.float32).reshape(7, 48)
    ids = np.array([6, -1, 0, 7, 3, 100], dtype=np.int32)
    (e,) = _run(target, "embed_rows_of", {"N": 6, "V": 7}, table, ids)
    np.testing.assert_array_equal(e, _gather_rows(table, ids))


def test_every_target_agrees_and_differentiates() -> None:
    report = cc.crosscheck(PROGRAM.read_text(), str(PROGRAM))
    assert report.checked and report.findings == []
    for target in ("torch", "jax", "onnx", "stablehlo"):
        assert f"run {target} --grad embedding_loss" in report.ran


def test_the_gradient_is_that_of_f_embedding() -> None:
    """The table's gradient is a scatter-add of the rows' gradients (repeated ids add up,
    an id outside the table adds nothing); the ids take none."""
    import torch
    from linnet.torch.runtime import import_generated
    text = compile_source(PROGRAM.read_text(), path=str(PROGRAM), target="torch",
                          entry="embedding_loss", bind={"B": 6, "V": 5, "H": 3},
                          grad=True).text
    main = import_generated(text, "grad_embedding_loss", "torch").main
    table = torch.linspace(-2, 2, 15, dtype=torch.float32).reshape(5, 3)
    ids = torch.tensor([1, 3, 1, 0, 4, 1])
    target = torch.linspace(0, 1, 18, dtype=torch.float32).reshape(6, 3)
    loss, *grads = main(table, ids, target)
    mine = table.clone().requires_grad_(True)
    want = ((torch.nn.functional.embedding(ids, mine) - target) ** 2).sum()
    want.backward()
    torch.testing.assert_close(loss, want.detach())
    torch.testing.assert_close(grads[0], mine.grad)
    assert grads[0][2].tolist() == [0.0, 0.0, 0.0]  # row 2 is never read

    outside = torch.tensor([1, 7, -2, 0, 4, 1])
    loss, *grads = main(table, outside, target)
    kept = torch.tensor([True, False, False, True, True, True])
    mine = table.clone().requires_grad_(True)
    rows = torch.nn.functional.embedding(outside.clamp(0, 4), mine) * kept[:, None]
    want = ((rows - target) ** 2).sum()
    want.backward()
    torch.testing.assert_close(loss, want.detach())
    torch.testing.assert_close(grads[0], mine.grad)


def _entry(body: str, params: str = "") -> str:
    return ("module m\n\nentry main<B: Dim, V: Dim>(t: Tensor[V; f32], ids: Tensor[B; i32], "
            f"f: Tensor[B; f32]{params}) -> Tensor[B; f32] {{\n    {body}\n    return y\n}}\n")


@pytest.mark.parametrize("body, want", [
    ("let y[b] = t[ids[b]]", []),
    ("let y[b] = t[ids[b] * 2 - 1] + f[b]", []),
    ("let y[b] = t[f[b]]", [("E2101", "f[b]")]),                 # a float position
    ("let y[b] = t[ids[b] > 0]", [("E2101", "ids[b] > 0")]),     # a bool one
    ("let y[b] = t[ids[b] + b]", [("E3104", "b")]),              # an index is no value
    ("let y[b] = t[b + 1]", [("E3104", "b + 1")]),               # a shift: no gather
])
def test_gather_positions(tmp_path, body: str, want: list) -> None:
    assert diagnostics_of(tmp_path, _entry(body)) == want


def test_a_tile_is_not_gathered_from(tmp_path) -> None:
    text = """module m

kernel k(x: Tensor[16; f32], ids: Tensor[16; i32]) -> y: Tensor[16; f32] grid(1) {
    let cols = iota<i32>(16)
    let t = load(x[cols])
    let i = load(ids[cols])
    let g[c] = t[i[c]]
    store(y[cols], g)
}
"""
    assert diagnostics_of(tmp_path, text) == [("E2127", "i[c]")]


def test_linnet_verify_finds_the_kernel_equal_to_the_gathering_body(capsys) -> None:
    from linnet.cli.verify import main
    assert main(["verify", str(PROGRAM), "--op", "embedding", "--examples", "3",
                 "--in-process", "--no-grad"]) == 0
    out = capsys.readouterr().out
    assert "op embedding (kernel embed_rows)" in out and "3 sizes tried" in out
    assert "disagree" not in out
