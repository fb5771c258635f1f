"""The FP8 E4M3FN items of `std.quant` on every target: `decode_fp8` of all 256 bytes
against torch's `float8_e4m3fn` (its NaN bytes reading +-480, negative zero keeping its
sign) in f32, f16 and bf16; `linear_fp8` against `torch._scaled_mm` with row-wise scales;
and the block `Fp8Linear` loaded from a checkpoint of FP8 weights viewed as bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz.backends import run_entry
from tests.std.inputs import TARGETS, normals, target_runtimes

torch = target_runtimes()
F = torch.nn.functional

import linnet.torch as lt  # noqa: E402

HERE = Path(__file__).resolve().parent
normal = normals(19)
BYTES = torch.arange(256, dtype=torch.uint8)


def fp8_values(bytes_: torch.Tensor) -> torch.Tensor:
    """torch's float8_e4m3fn value of each byte in f32, its NaN bytes as +-480."""
    values = bytes_.view(torch.float8_e4m3fn).float()
    return torch.where(values.isnan(), torch.where(bytes_ >= 128, -480.0, 480.0), values)


def fp8_weight(rows: int, cols: int) -> torch.Tensor:
    """FP8 bytes [rows, cols] of moderate values, no NaN (as a checkpoint holds)."""
    values = torch.from_numpy(normal(rows, cols)) * 8
    return values.to(torch.float8_e4m3fn).view(torch.uint8)


def test_the_reference_reads_the_nan_bytes_as_480() -> None:
    values = fp8_values(BYTES)
    assert values[0x7E] == 448 and values[0x7F] == 480 and values[0xFF] == -480
    assert values[0x01] == 2.0 ** -9 and torch.signbit(values[0x80])


@pytest.mark.parametrize("target", TARGETS)
def test_decode_every_byte(target: str) -> None:
    got = run_entry(HERE / "fp8_uses.linnet", "decode", target, [BYTES.reshape(16, 16).numpy()])
    want = fp8_values(BYTES).reshape(16, 16).numpy()
    for k, g in enumerate(got):
        values = np.asarray(g, np.float32)
        np.testing.assert_array_equal(values, want, err_msg=f"result {k}")
        np.testing.assert_array_equal(np.signbit(values), np.signbit(want), err_msg=f"result {k}")


@pytest.mark.parametrize("target", TARGETS)
def test_linear_fp8_is_scaled_mm(target: str) -> None:
    x = torch.from_numpy(normal(6, 16)).to(torch.float8_e4m3fn)  # exactly FP8 values
    w, s, b = fp8_weight(8, 16), torch.rand(8, 1) / 16, torch.from_numpy(normal(8))
    y = torch._scaled_mm(x, w.view(torch.float8_e4m3fn).T, scale_a=torch.ones(6, 1),
                         scale_b=s.T.contiguous(), out_dtype=torch.float32).reshape(2, 3, 8)
    got = run_entry(HERE / "fp8_uses.linnet", "linear", target,
                    [x.float().reshape(2, 3, 16).numpy(), w.numpy(), s.numpy(), b.numpy()])
    for k, (g, e) in enumerate(zip(got, [y, y + b], strict=True)):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=1e-5, err_msg=f"result {k}")


def test_the_block_loads_fp8_bytes() -> None:
    w, s, b = fp8_weight(8, 16), torch.rand(8, 1) / 16, torch.from_numpy(normal(8))
    model = lt.load(str(HERE / "fp8_block.linnet"), generics={"In": 16, "Out": 8},
                    weights={"proj.weight": w, "proj.scale": s, "proj.bias": b}, compile=False)
    x = torch.from_numpy(normal(3, 16))
    want = F.linear(x, fp8_values(w) * s, b)
    np.testing.assert_allclose(model.forward(x).detach().numpy(), want.numpy(),
                               rtol=1e-5, atol=1e-5)
