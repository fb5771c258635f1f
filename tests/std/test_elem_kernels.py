"""The kernels of the standard library's rope, embedding, swiglu activation and linear
layer (`rope`, `embedding_2d`, `silu_mul` and `swiglu_2d`, `linear_2d`) against their
PyTorch counterparts (Hugging Face's rotate_half rope, `F.embedding`, `F.silu(g) * u`,
`F.linear`), forward and backward, in f32, bf16 and f16.

As in test_nn_kernels.py: generated PyTorch runs the kernels in Triton's interpreter and
differentiates through autograd (the ops' grad clauses, kernels too); generated JAX runs
them in Pallas's interpreter and differentiates with `jax.vjp`; the loaded function's
`ran()` counts show that the kernels, not the bodies, ran in both directions. The
reference is PyTorch in float64 on the same (rounded) inputs. Sizes are tiny and ragged
against the tiles (40 columns in a tile of 64, 3 rows in a tile of 16); the linear layer
is also run at 136 x 264 by 264 x 264, several tiles of [128, 256] each way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from .kernel_runs import held_to_reference  # noqa: E402
from .test_nn_kernels import (DTYPES, assert_close, assert_kernels_ran,  # noqa: E402
                              reference)

PROGRAM = Path(__file__).resolve().parent / "elem_kernels.linnet"
VOCAB = 7


@dataclass(frozen=True)
class Case:
    """An entry of elem_kernels.linnet, its inputs, what PyTorch computes for them, and the
    ops whose kernels must run (the forward ops and their grad clauses')."""
    entry: str
    inputs: Callable[[torch.Generator, torch.dtype], list]
    reference: Callable[..., torch.Tensor]
    kernels: tuple[str, ...]


def rotate_half(x):
    """Hugging Face's rotate_half: the two halves of the last axis, swapped, the first
    negated."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def hf_rope(x, cos, sin):
    return x * cos + rotate_half(x) * sin


def rope_inputs(g: torch.Generator, dtype: torch.dtype) -> list:
    """x [2, 3, 5, 8] and tables [5, 8] (each frequency on both halves, as callers build
    them, but perturbed so that a kernel mixing up the halves is caught)."""
    angles = torch.arange(5.0)[:, None] * torch.tensor([1.0, 0.3, 0.1, 0.03]).repeat(2)
    angles = angles + 0.1 * torch.randn(5, 8, generator=g)
    return [torch.randn(2, 3, 5, 8, generator=g).to(dtype), angles.cos().to(dtype),
            angles.sin().to(dtype)]


def embedding_inputs(g: torch.Generator, dtype: torch.dtype) -> list:
    """Ids repeating (3 and 6 twice: their gradients add) and outside the table (-1 and
    VOCAB read zeros and add nothing)."""
    ids = torch.tensor([3, 6, -1, 0, 6, VOCAB, 3], dtype=torch.int32)
    return [ids, torch.randn(VOCAB, 40, generator=g).to(dtype)]


def embedding_reference(ids, table):
    """F.embedding, with a row of zeros for an id outside the table (which F.embedding
    rejects)."""
    known = (ids >= 0) & (ids < VOCAB)
    return F.embedding(torch.where(known, ids, 0).long(), table) * known[:, None]


def randn(g: torch.Generator, dtype: torch.dtype, *shape: int, scale: float = 1.0):
    return (torch.randn(*shape, generator=g) * scale).to(dtype)


CASES = {
    "rotary": Case("rotary", rope_inputs, hf_rope, ("rope", "rope_backward")),
    "embed": Case("embed", embedding_inputs, embedding_reference,
                  ("embedding_2d", "embedding_first_positions", "embedding_sums",
                   "embedding_backward")),
    "gated": Case("gated", lambda g, d: [randn(g, d, 3, 40, scale=3.0), randn(g, d, 3, 40)],
                  lambda gate, up: F.silu(gate) * up, ("silu_mul", "silu_mul_backward")),
    "dense": Case("dense", lambda g, d: [randn(g, d, 3, 40), randn(g, d, 24, 40, scale=0.3)],
                  F.linear, ("linear_product_2d", "linear_input_grad", "linear_weight_grad")),
    "dense_biased": Case("dense_biased",
                         lambda g, d: [randn(g, d, 3, 40), randn(g, d, 24, 40, scale=0.3),
                                       randn(g, d, 24)],
                         F.linear, ("linear_bias_2d", "linear_input_grad",
                                    "linear_weight_grad")),
    # [128, 256] tiles: two rows of them (the second of 8 rows, a group short of G = 8) by
    # two columns for y and dx, three by two for dweight, in steps of 32 (the last of 8):
    # the grouped order and every edge mask
    "dense_tiles": Case("dense",
                        lambda g, d: [randn(g, d, 136, 264), randn(g, d, 264, 264, scale=0.1)],
                        F.linear,
                        ("linear_product_2d", "linear_input_grad", "linear_weight_grad")),
    "mlp": Case("mlp", lambda g, d: [randn(g, d, 3, 40), randn(g, d, 24, 40, scale=0.3),
                                     randn(g, d, 24, 40, scale=0.3),
                                     randn(g, d, 40, 24, scale=0.3)],
                lambda x, gw, uw, dw: F.linear(F.silu(F.linear(x, gw)) * F.linear(x, uw), dw),
                ("linear_product_2d", "silu_mul", "silu_mul_backward", "linear_input_grad",
                 "linear_weight_grad")),
}


def case_inputs(case: Case, dtype: str):
    """The case's inputs in `dtype`, a cotangent for its result, and PyTorch's result and
    gradients for them."""
    g = torch.Generator().manual_seed(len(case.entry))
    inputs = case.inputs(g, DTYPES[dtype])
    cotangent, want, grads = reference(case, inputs, g)
    return inputs, cotangent, want, grads


def check_backend(case: Case, dtype: str, target: str) -> None:
    """Run the case's entry through `target` forward and backward, and hold the result, the
    gradients and the kernels that ran to PyTorch's."""
    inputs, cotangent, want, grads = case_inputs(case, dtype)
    ran = held_to_reference(target, str(PROGRAM), case.entry, inputs, cotangent, want, grads,
                            lambda got, ref, what: assert_close(got, ref, dtype, what))
    assert_kernels_ran(case, ran)


# every case in every dtype, but the MLP and the case of several tiles (their ops' kernels
# are each held in every dtype)
TRITON = [(name, dtype) for name in CASES for dtype in DTYPES
          if name not in ("mlp", "dense_tiles") or dtype == "f32"]


@pytest.mark.parametrize("name,dtype", TRITON)
def test_triton_kernels_match_torch(name: str, dtype: str) -> None:
    check_backend(CASES[name], dtype, "torch")


# one dtype a case: Pallas's interpreter is slower than Triton's
PALLAS = [("rotary", "bf16"), ("embed", "f32"), ("gated", "f16"), ("dense_biased", "bf16"),
          ("mlp", "bf16")]


@pytest.mark.parametrize("name,dtype", PALLAS)
def test_pallas_kernels_match_torch(name: str, dtype: str, monkeypatch) -> None:
    jax = pytest.importorskip("jax")
    if jax.default_backend() != "gpu":
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    check_backend(CASES[name], dtype, "jax")
