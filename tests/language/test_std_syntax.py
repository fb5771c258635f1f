"""The language features the standard library needs, run on every target: spec program
180 (`use` lists, a `crate.` path, lists and `where` clauses over lines, a reduction head
alone on its line, `random` as a name, `...` slices after a shape pack) through the
interpreter, PyTorch, JAX, ONNX and StableHLO, against the same computation in NumPy;
and a program using the packaged standard library, or another one given as LINNET_STD."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz import crosscheck as cc
from linnet.fuzz.backends import as_numpy, compile_entry, loader
from linnet.syntax.module_search import std_override

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

PROGRAM = Path(__file__).resolve().parents[1] / "spec" / "valid" / "180_use_lists.linnet"
TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")


def _run(target: str, entry: str, *inputs: np.ndarray, path: Path = PROGRAM,
         text: str | None = None) -> list[np.ndarray]:
    import torch
    source = path.read_text() if text is None else text
    compiled = compile_entry(source, str(path), entry, {}, target)
    results = loader(target)(compiled, entry)(*(torch.from_numpy(x) for x in inputs))
    return [as_numpy(r) for r in results]


def _swap(x: np.ndarray) -> np.ndarray:
    d = x.shape[-1]
    return np.concatenate([x[..., d // 2:], x[..., :d // 2]], axis=-1)


@pytest.mark.parametrize("target", TARGETS)
def test_halves_of_the_last_axis_after_a_pack(target: str) -> None:
    x = np.arange(36, dtype=np.float32).reshape(2, 3, 6) - 7.5
    first, second, swapped = _run(target, "halves", x)
    np.testing.assert_array_equal(first, x[..., 0:3])
    np.testing.assert_array_equal(second, x[..., 3:])
    np.testing.assert_array_equal(swapped, 2 * _swap(x))


@pytest.mark.parametrize("target", TARGETS)
def test_an_odd_axis_splits_at_its_floor_half(target: str) -> None:
    x = np.arange(20, dtype=np.float32).reshape(4, 5) * 0.25
    first, second, sums = _run(target, "odd", x)
    np.testing.assert_array_equal(first, x[:, :2])
    np.testing.assert_array_equal(second, x[:, 2:])
    np.testing.assert_allclose(sums, 2 * x[:, 2:].sum(axis=1), rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_the_unlisted_library_item_leaves_the_local_one_in_force(target: str) -> None:
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6)
    (value,) = _run(target, "loss", x)
    np.testing.assert_allclose(value, 0.5 * (_swap(x) * x).sum(), rtol=1e-5)


def test_every_target_agrees_and_differentiates() -> None:
    report = cc.crosscheck(PROGRAM.read_text(), str(PROGRAM))
    assert report.checked and report.findings == []
    for target in ("torch", "jax", "onnx", "stablehlo"):
        assert f"run {target} --grad loss" in report.ran


USES_STD = """module uses_std
use std.selftest::{halve}

entry main(x: Tensor[2, 4; f32]) -> Tensor[2, 2; f32] {
    return halve(x)
}
"""


def test_the_packaged_library_is_found(tmp_path: Path) -> None:
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    (y,) = _run("torch", "main", x, path=tmp_path / "uses_std.linnet", text=USES_STD)
    np.testing.assert_array_equal(y, x[:, :2])


def test_another_library_replaces_it_while_in_force(tmp_path: Path) -> None:
    library = tmp_path / "mine"
    library.mkdir()
    (library / "selftest.linnet").write_text(
        "module std.selftest\n\npub fn halve<R: Dim, C: Dim>(x: Tensor[R, C; f32]) "
        "-> Tensor[R, C / 2; f32] where C % 2 == 0 {\n    return x[:, C / 2:] * 10.0\n}\n")
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    with std_override(library):
        (y,) = _run("torch", "main", x, path=tmp_path / "uses_std.linnet", text=USES_STD)
    np.testing.assert_array_equal(y, x[:, 2:] * 10)
    (y,) = _run("torch", "main", x, path=tmp_path / "uses_std.linnet", text=USES_STD)
    np.testing.assert_array_equal(y, x[:, :2])
