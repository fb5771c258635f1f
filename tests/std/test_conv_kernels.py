"""The implicit-GEMM kernels of `std.nn.conv` (`conv2d_gemm`, behind `conv2d`, `conv1d` and
`conv2d_rect`) against `F.conv2d` and `F.conv1d`, forward and backward (x, weight, bias):
strides 1 and 2, paddings 0 and 1, with and without a bias, in f32 and bf16.

As in test_nn_kernels.py: generated PyTorch runs the kernels in Triton's interpreter and
differentiates through autograd (conv2d_gemm's grad clause, whose dx and dweight are
kernels too); generated JAX runs them in Pallas's interpreter and differentiates with
`jax.vjp`; the loaded function's `ran()` counts show that the kernels, not the bodies, ran
in both directions. The reference is PyTorch in float64 on the same (rounded) inputs. Sizes
are tiny (two images of 3 channels, 5 x 5, into 4 channels) and ragged against the tiles
(25 positions in a tile of 32, 27 reduction indices in a step of 32, 4 channels in 16).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from .kernel_runs import held_to_reference  # noqa: E402
from .test_nn_kernels import DTYPES, assert_close, assert_kernels_ran, reference  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "conv_kernels.linnet"
KERNELS = ("conv2d_gemm", "conv2d_input_grad", "conv2d_weight_grad")


@dataclass(frozen=True)
class Case:
    """An entry of conv_kernels.linnet, its inputs, what PyTorch computes for them, and the
    ops whose kernels must run."""
    entry: str
    inputs: Callable[[torch.Generator, torch.dtype], list]
    reference: Callable[..., torch.Tensor]
    kernels: tuple[str, ...] = KERNELS


def images(g: torch.Generator, dtype: torch.dtype, window: tuple = (3, 3),
           size: tuple = (5, 5), bias: bool = True) -> list:
    """Two images [2, 3, *size], filters [4, 3, *window] and a bias [4] (when `bias`)."""
    inputs = [torch.randn(2, 3, *size, generator=g).to(dtype),
              (torch.randn(4, 3, *window, generator=g) * 0.3).to(dtype),
              torch.randn(4, generator=g).to(dtype)]
    return inputs if bias else inputs[:2]


CASES = {
    "padded": Case("padded", images, lambda x, w, b: F.conv2d(x, w, b, stride=1, padding=1)),
    "strided": Case("strided", lambda g, d: images(g, d, bias=False),
                    lambda x, w: F.conv2d(x, w, stride=2, padding=0)),
    "strided_padded": Case("strided_padded", images,
                           lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1)),
    "along": Case("along", lambda g, d: [x.reshape(x.shape[0], x.shape[1], -1) if x.dim() > 1
                                         else x for x in images(g, d, (1, 3), (1, 9))],
                  lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1)),
    "rect": Case("rect", lambda g, d: images(g, d, (3, 2), (7, 6)),
                 lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0))),
}


def check_backend(case: Case, dtype: str, target: str) -> None:
    """Run the case's entry through `target` forward and backward, and hold the result, the
    gradients and the kernels that ran to PyTorch's."""
    g = torch.Generator().manual_seed(len(case.entry))
    inputs = case.inputs(g, DTYPES[dtype])
    cotangent, want, grads = reference(case, inputs, g)
    ran = held_to_reference(target, str(PROGRAM), case.entry, inputs, cotangent, want, grads,
                            lambda got, ref, what: assert_close(got, ref, dtype, what))
    assert_kernels_ran(case, ran)


# stride 1 with padding, stride 2 without (and without a bias), stride 2 with padding in
# bf16, and the routes of conv1d and conv2d_rect: each a few seconds in the interpreter
TRITON = [("padded", "f32"), ("strided", "f32"), ("strided_padded", "bf16"),
          ("along", "f32"), ("rect", "f32")]


@pytest.mark.parametrize("name,dtype", TRITON)
def test_triton_kernels_match_torch(name: str, dtype: str) -> None:
    check_backend(CASES[name], dtype, "torch")


# Pallas's interpreter is slower than Triton's: one stride each
PALLAS = [("padded", "f32"), ("strided_padded", "bf16")]


@pytest.mark.parametrize("name,dtype", PALLAS)
def test_pallas_kernels_match_torch(name: str, dtype: str, monkeypatch) -> None:
    jax = pytest.importorskip("jax")
    if jax.default_backend() != "gpu":
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    check_backend(CASES[name], dtype, "jax")


def generated(bind: dict) -> str:
    """The generated PyTorch of the entry `padded` at `bind` (compiles only)."""
    from linnet.pipeline import compile_source
    return compile_source(path=str(PROGRAM), entry="padded", tuning=False,
                          bind=dict(bind, K=3, T="bf16")).text


def test_tiles_follow_the_sizes_and_int32_offsets_bound_the_kernels() -> None:
    """At a ResNet layer's sizes the forward takes 128 positions by 64 channels, dx 128
    positions by 64 channels over steps of 32, dweight 64 x 64. A batch past 2**31
    elements runs the kernels (the offset into the batch is built in i64); an image whose
    own window offsets would pass i32 fails the kernels' `where` and the bodies run,
    forward and backward."""
    layer = {"B": 2, "Cin": 64, "Cout": 64, "H": 56, "W": 56}
    text = generated(layer)
    for kernel, tiles in (("conv2d_tiles", "BM128_BN64_BK32"),
                          ("conv2d_input_grad_tiles", "BM128_BC64_BO32"),
                          ("conv2d_weight_grad_tiles", "BO64_BK64_BM32")):
        assert re.search(rf"kernel {kernel}__\w*_{tiles}\b", text), (kernel, tiles)
    batch = generated(dict(layer, B=300, H=400, W=400))
    for kernel in ("conv2d_tiles", "conv2d_input_grad_tiles", "conv2d_weight_grad_tiles"):
        assert f"kernel {kernel}__" in batch, kernel
    assert "tl.int64" in batch
    huge = generated(dict(layer, B=1, H=6000, W=6000))
    assert "_tiles" not in huge and "@triton.jit" not in huge
