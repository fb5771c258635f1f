"""Operands of lower rank than their tile in kernels, through Triton (its interpreter here)
and Pallas (its interpreter, `LINNET_PALLAS_INTERPRET=1`).

- A scalar value stored or combined atomically into a tile, and a scalar mask on a load, a
  store or an atomic (docs/language.md, "Kernels"): the printers broadcast each to the tile
  explicitly, as Pallas's `store`/`swap` and atomics reject a scalar for a tile ("Invalid
  shape for swap"), and Triton's interpreter a scalar mask ("mask has unsupported dtype").
- Integer `/` and `%`, float `%` and shifts of a tile by a row of another rank: JAX's
  `lax.div`, `lax.rem` and `lax.shift_*` take operands of one shape only.

Each kernel's results are compared with NumPy and with its op's body (numerics "exact").
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.pipeline import compile_source
from linnet.fuzz.harness import default_device

SOURCE = Path(__file__).parent / "scalar_operands.linnet"


def _import(text: str, name: str):
    """A generated module imported from its own file (both targets read their environment
    at import)."""
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generate(target: str, numerics: str, entry: str = "main") -> str:
    return compile_source(SOURCE.read_text(), path=str(SOURCE), target=target, entry=entry,
                          numerics=numerics).text


def _inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    x[2] = -np.abs(x[2])  # a row whose total is negative
    w = rng.standard_normal((5, 8)).astype(np.float32)
    k = rng.integers(-1000, 1000, (5, 8)).astype(np.int32)
    return x, w, k


def _expected(x: np.ndarray, w: np.ndarray, k: np.ndarray) -> list[np.ndarray]:
    totals = x.sum(axis=1, keepdims=True)
    odd = (np.arange(5) % 2 == 1)[:, None]
    return [np.broadcast_to(totals, x.shape),
            np.where(odd, w, np.float32(7.0)),
            np.full(8, k.max(), np.int32),
            np.full(8, k.min(), np.int32),
            np.full(8, k[1::2].sum(), np.int32),
            np.broadcast_to(totals > 0, x.shape)]


def _agree(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g, w)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_triton_broadcasts_scalar_values_and_masks():
    text = _generate("torch", "equivalent")
    inputs = _inputs()
    module = _import(text, "scalar_operands_triton")
    device = torch.device(default_device())  # CUDA: compiled; else Triton's interpreter
    assert module._lt_kernel_ok(device, torch.zeros(1, device=device))  # kernels run
    tensors = [torch.from_numpy(a).to(device) for a in inputs]
    _agree([t.cpu().numpy() for t in module.main(*tensors)], _expected(*inputs))
    assert "tl.atomic_max(o0 + v1, tl.broadcast_to(" in text  # a scalar value, broadcast
    assert "!= 0)" in text  # a scalar mask, broadcast as a true bool tile
    body = _import(_generate("torch", "exact"), "scalar_operands_torch_body")
    _agree([t.cpu().numpy() for t in body.main(*tensors)], _expected(*inputs))


def test_pallas_broadcasts_scalar_values_and_masks(monkeypatch):
    jax = pytest.importorskip("jax")
    monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    text = _generate("jax", "equivalent")
    assert "pl.pallas_call(" in text and "jnp.broadcast_to(" in text
    inputs = _inputs()
    module = _import(text, "scalar_operands_pallas")
    assert module._lp_kernel_ok()  # kernels run
    arrays = [jax.numpy.asarray(a) for a in inputs]
    _agree([np.asarray(t) for t in module.main(*arrays)], _expected(*inputs))
    body = _import(_generate("jax", "exact"), "scalar_operands_jax_body")
    _agree([np.asarray(t) for t in body.main(*arrays)], _expected(*inputs))


def _mixed_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    x = rng.integers(-2**31, 2**31 - 1, (4, 8), dtype=np.int64).astype(np.int32)
    d = rng.integers(-9, 10, 8).astype(np.int32)
    d[d == 0] = 3
    d[0] = -1
    x[0, 0] = -2**31  # MIN / -1 wraps to MIN, MIN % -1 is 0
    f = rng.standard_normal((4, 8)).astype(np.float32) * 4
    g = (rng.uniform(0.5, 2.0, 8) * rng.choice([-1, 1], 8)).astype(np.float32)
    return [x, d, f, g]


def _mixed_expected(x, d, f, g) -> list[np.ndarray]:
    X, D = x.astype(np.int64), np.broadcast_to(d.astype(np.int64), x.shape)
    q = np.where(D == -1, -X, np.sign(X) * np.sign(D) * (np.abs(X) // np.abs(D)))
    m = X - D * q
    shifts = ((X << (D & 7)) + (D >> (X & 15)))
    wrap = lambda v: v.astype(np.uint32).astype(np.int32)  # noqa: E731
    return [wrap(q), wrap(m), f / g + np.fmod(f, g), wrap(shifts)]


@pytest.mark.parametrize("target", ["torch", "jax"])
def test_integer_division_and_shifts_of_tiles_of_different_ranks(target, monkeypatch):
    inputs = _mixed_inputs()
    want = _mixed_expected(*inputs)
    if target == "jax":
        jax = pytest.importorskip("jax")
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
        text = _generate("jax", "equivalent", "mixed")
        assert "pl.pallas_call(" in text
        module = _import(text, "mixed_ranks_pallas")
        got = [np.asarray(t) for t in module.main(*(jax.numpy.asarray(a) for a in inputs))]
    else:
        text = _generate("torch", "equivalent", "mixed")
        assert "tl.store(" in text
        module = _import(text, "mixed_ranks_triton")
        device = torch.device(default_device())  # CUDA: compiled; else the interpreter
        got = [t.cpu().numpy() for t in module.main(*(torch.from_numpy(a).to(device)
                                                      for a in inputs))]
    _agree(got, want)


def _joined_expected(x: np.ndarray) -> np.ndarray:
    return np.where((np.arange(5) % 2 == 1)[:, None], x, np.float32(7.0))


def test_a_scalar_bool_with_a_bool_tile_is_a_mask_triton_takes():
    """`both[j] = odd && inside[j]`: a bool scalar `&` a bool tile. Triton's interpreter
    holds the 0-d comparison as an integer, so the `&` gives integers, which a load or store
    refuses as a mask ("mask has unsupported dtype"): the printer compares it with 0."""
    text = _generate("torch", "equivalent", entry="joined")
    assert ") != 0)  # both: bool[8] = and(odd, inside)" in text
    module = _import(text, "scalar_operands_joined_triton")
    device = torch.device(default_device())
    x = _inputs()[0]
    got = module.main(torch.from_numpy(x).to(device))[0].cpu().numpy()
    np.testing.assert_array_equal(got, _joined_expected(x))
    assert list(module._ln_ran.values()) == [[1, 0]]  # the kernel ran, not the body


def test_a_scalar_bool_with_a_bool_tile_in_pallas(monkeypatch):
    jax = pytest.importorskip("jax")
    monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    module = _import(_generate("jax", "equivalent", entry="joined"), "scalar_operands_joined")
    x = _inputs()[0]
    got = np.asarray(module.main(jax.numpy.asarray(x))[0])
    np.testing.assert_array_equal(got, _joined_expected(x))
