"""The standard library's blocks (`Linear`, `RmsNorm`, `SwiGlu`, `Int8Linear`,
`Int4Linear`) as children of a model: their parameter paths are PyTorch's (`gate.weight`,
optional `bias`), a checkpoint loads by those names, and the model computes what the
same layers compute in PyTorch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import linnet.torch as lt  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "blocks_uses.linnet"
H, I, B = 4, 8, 3


def weights() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    w = {name: torch.randn(*shape, generator=g) for name, shape in [
        ("norm.weight", (H,)), ("mlp.gate.weight", (I, H)), ("mlp.up.weight", (I, H)),
        ("mlp.down.weight", (H, I)), ("mlp.down.bias", (H,)), ("proj.weight", (H, H)),
        ("q8.scale", (H,)), ("q4.scale", (H,)), ("q4.bias", (H,))]}
    w["q8.weight"] = torch.randint(-128, 128, (H, H), generator=g, dtype=torch.int8)
    w["q4.weight"] = torch.randint(-128, 128, (H, H // 2), generator=g, dtype=torch.int8)
    return w


def int4_rows(packed: torch.Tensor) -> torch.Tensor:
    u = packed.to(torch.int16) & 255
    low, high = u & 15, u >> 4
    low, high = torch.where(low > 7, low - 16, low), torch.where(high > 7, high - 16, high)
    return torch.stack([low, high], -1).reshape(packed.shape[0], -1).float()


def reference(w: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    h = F.rms_norm(x, (H,), w["norm.weight"], eps=1e-5)
    mlp = F.linear(F.silu(F.linear(h, w["mlp.gate.weight"])) * F.linear(h, w["mlp.up.weight"]),
                   w["mlp.down.weight"], w["mlp.down.bias"])
    q8 = F.linear(h, w["q8.weight"].float() * w["q8.scale"][:, None])
    q4 = F.linear(h, int4_rows(w["q4.weight"]) * w["q4.scale"][:, None], w["q4.bias"])
    return F.linear(mlp, w["proj.weight"]) + q8 + q4


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
def test_a_model_of_std_blocks_matches_pytorch(compile: bool) -> None:
    w = weights()
    model = lt.load(str(PROGRAM), generics={"H": H, "I": I}, weights=w, compile=compile)
    assert {n for n, _ in model.named_parameters()} | {n for n, _ in model.named_buffers()} \
        >= set(w)
    x = torch.randn(B, H, generator=torch.Generator().manual_seed(1))
    np.testing.assert_allclose(model.forward(x).detach().numpy(),
                               reference(w, x).numpy(), rtol=1e-5, atol=1e-5)
