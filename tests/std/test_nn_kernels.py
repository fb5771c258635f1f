"""The kernels of the standard library's row ops (`rms_norm_2d`, `layer_norm_2d`,
`softmax_2d`, `log_softmax_2d`; `token_log_probs`, `cross_entropy` through it, and
`entropy`; the `*S` forms `rms_norm`, `layer_norm`, `softmax`, `log_softmax` on `[2, 3, H]`,
flattened to them; the kernels holding a row in one tile, of `softmax_row_2d` and
`log_softmax_row_2d`, and the wide-row kernels of `softmax_wide_2d` and
`log_softmax_wide_2d`) against their PyTorch counterparts (`F.rms_norm`, `F.layer_norm`,
`F.softmax`, `F.log_softmax`, `F.cross_entropy(reduction='none')` weighted, the
log-softmax's gathers and entropy), forward and backward, in f32, bf16 and f16.

Generated PyTorch runs the kernels in Triton's interpreter (`tests/conftest.py` sets
`TRITON_INTERPRET=1` without a GPU) and differentiates through autograd, whose backward
is the ops' grad clauses, kernels too; generated JAX runs them in Pallas's interpreter
(`LINNET_PALLAS_INTERPRET=1`) and differentiates with `jax.vjp`. Each test also asserts
from the loaded function's `ran()` counts of its own call that the kernels, not the bodies,
ran, forward and backward (the tests of an entry share its loaded function: the program is
checked once a process). The reference is PyTorch in float64 on the same (rounded) inputs. Sizes are
small (the interpreters are slow) and ragged against the tiles: 40 columns in a tile of 64,
or in three tiles of 16 for the wide-row kernels (the test program binds their tile width).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from .kernel_runs import held_to_reference, loaded, ran_during, run_torch  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "nn_kernels.linnet"
R, H = 3, 40
BATCHED = (2, 3)  # the leading shape of the `*S` cases
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
# |got - want| <= ATOL * max|want| + RTOL * |want|: a few roundings of the dtype
RTOL = {"f32": 1e-5, "bf16": 3e-2, "f16": 4e-3}
ATOL = {"f32": 1e-5, "bf16": 2e-2, "f16": 3e-3}


@dataclass(frozen=True)
class Case:
    """An entry of nn_kernels.linnet, its inputs, what PyTorch computes for them, and the
    ops whose kernels must run (the forward op and its grad clause's)."""
    entry: str
    inputs: Callable[[torch.Generator, torch.dtype], list]
    reference: Callable[..., torch.Tensor]
    kernels: tuple[str, ...]


def rows_and_weights(g: torch.Generator, dtype: torch.dtype, rows: tuple = (R,)) -> list:
    return [torch.randn(*rows, H, generator=g).to(dtype) * 2 + 0.5,
            torch.randn(H, generator=g).to(dtype), torch.randn(H, generator=g).to(dtype)]


def batched(g: torch.Generator, dtype: torch.dtype) -> list:
    """A [B, T, H] activation, its weight and bias."""
    return rows_and_weights(g, dtype, BATCHED)


def logits_targets_weights(g: torch.Generator, dtype: torch.dtype, width: int = H) -> list:
    """Logits [R, width], targets (the first and last word, and one outside the
    vocabulary) and weights."""
    targets = torch.tensor([0, width - 1, width + 3], dtype=torch.int64)
    return [(torch.randn(R, width, generator=g) * 3).to(dtype), targets,
            torch.rand(R, generator=g)]


def log_probs_of(logits, targets):
    """log p(target) per row by F.cross_entropy, 0 for a target outside the vocabulary."""
    inside = (targets >= 0) & (targets < logits.shape[-1])
    return -F.cross_entropy(logits, torch.where(inside, targets, -100), reduction="none",
                            ignore_index=-100)


def cross_entropy_sum(logits, targets, weights):
    """The library's cross_entropy: a weighted sum of -log p(target)."""
    return -(weights * log_probs_of(logits, targets)).sum()


def entropy_of(logits):
    """-sum p log p per row."""
    lp = F.log_softmax(logits, -1)
    return -(lp.exp() * lp).sum(-1)


CASES = {
    "rms": Case("rms", lambda g, d: rows_and_weights(g, d)[:2],
                lambda x, w: F.rms_norm(x, (H,), w, eps=1e-6),
                ("rms_norm_2d", "rms_norm_backward")),
    "layer": Case("layer", rows_and_weights,
                  lambda x, w, b: F.layer_norm(x, (H,), w, b, eps=1e-5),
                  ("layer_norm_affine_2d", "layer_norm_backward")),
    "layer_unbiased": Case("layer_unbiased", lambda g, d: rows_and_weights(g, d)[:2],
                           lambda x, w: F.layer_norm(x, (H,), w, eps=1e-5),
                           ("layer_norm_affine_2d", "layer_norm_backward")),
    "softmax_rows": Case("softmax_rows", lambda g, d: rows_and_weights(g, d)[:1],
                         lambda x: F.softmax(x, -1), ("softmax_2d", "softmax_backward")),
    "log_softmax_rows": Case("log_softmax_rows", lambda g, d: rows_and_weights(g, d)[:1],
                             lambda x: F.log_softmax(x, -1),
                             ("log_softmax_2d", "log_softmax_backward")),
    "loss": Case("loss", logits_targets_weights, cross_entropy_sum,
                 ("token_log_probs", "token_log_probs_backward")),
    "log_probs": Case("log_probs", lambda g, d: logits_targets_weights(g, d)[:2],
                      log_probs_of, ("token_log_probs", "token_log_probs_backward")),
    "entropies": Case("entropies", lambda g, d: logits_targets_weights(g, d)[:1], entropy_of,
                      ("entropy", "entropy_backward")),
    "rms_rows_of": Case("rms_rows_of", lambda g, d: batched(g, d)[:2],
                        lambda x, w: F.rms_norm(x, (H,), w, eps=1e-6),
                        ("rms_norm_2d", "rms_norm_backward")),
    "layer_rows_of": Case("layer_rows_of", batched,
                          lambda x, w, b: F.layer_norm(x, (H,), w, b, eps=1e-5),
                          ("layer_norm_affine_2d", "layer_norm_backward")),
    "softmax_rows_of": Case("softmax_rows_of", lambda g, d: batched(g, d)[:1],
                            lambda x: F.softmax(x, -1), ("softmax_2d", "softmax_backward")),
    "log_softmax_rows_of": Case("log_softmax_rows_of", lambda g, d: batched(g, d)[:1],
                                lambda x: F.log_softmax(x, -1),
                                ("log_softmax_2d", "log_softmax_backward")),
    "softmax_wide": Case("softmax_wide", lambda g, d: rows_and_weights(g, d)[:1],
                         lambda x: F.softmax(x, -1),
                         ("softmax_wide_2d", "softmax_wide_backward")),
    "log_softmax_wide": Case("log_softmax_wide", lambda g, d: rows_and_weights(g, d)[:1],
                             lambda x: F.log_softmax(x, -1),
                             ("log_softmax_wide_2d", "log_softmax_wide_backward")),
    "softmax_row": Case("softmax_row", lambda g, d: rows_and_weights(g, d)[:1],
                        lambda x: F.softmax(x, -1), ("softmax_row_2d", "softmax_row_backward")),
    "log_softmax_row": Case("log_softmax_row", lambda g, d: rows_and_weights(g, d)[:1],
                            lambda x: F.log_softmax(x, -1),
                            ("log_softmax_row_2d", "log_softmax_row_backward")),
}


def reference(case: Case, inputs: list, g: torch.Generator):
    """A cotangent for the result (1 for a loss), and PyTorch's result and gradients in
    float64 for every floating input."""
    leaves = [x.double().requires_grad_() if x.is_floating_point() else x for x in inputs]
    y = case.reference(*leaves)
    cotangent = torch.randn(*y.shape, generator=g) if y.dim() else torch.ones(())
    y.backward(cotangent.double())
    return cotangent, y.detach(), [x.grad for x in leaves if x.is_floating_point()]


def assert_close(got, want: torch.Tensor, dtype: str, what: str) -> None:
    got = torch.as_tensor(np.asarray(got, dtype=np.float64)) if not torch.is_tensor(got) \
        else got.detach().double().cpu()
    want = want.double().cpu()
    assert got.shape == want.shape, what
    bound = ATOL[dtype] * want.abs().max() + RTOL[dtype] * want.abs()
    worst = ((got - want).abs() - bound).max()
    assert worst <= 0, f"{what}: off by {worst:.3g} past the tolerance\n{got}\n{want}"


def by_op(ran: dict) -> dict[str, dict[str, int]]:
    """`ran()`'s counts per op, instances of one op added up."""
    out: dict[str, dict[str, int]] = {}
    for instance, counts in ran.items():
        seen = out.setdefault(instance.split("__")[0], {"kernel": 0, "body": 0})
        seen["kernel"] += counts["kernel"]
        seen["body"] += counts["body"]
    return out


def assert_kernels_ran(case: Case, ran: dict) -> None:
    counts = by_op(ran)
    for op in case.kernels:
        assert counts.get(op, {}).get("kernel", 0) >= 1, f"{op}'s kernel did not run: {counts}"
    assert all(c["body"] == 0 for c in counts.values()), counts


def case_inputs(case: Case, dtype: str):
    """The case's inputs in `dtype`, a cotangent for its result, and PyTorch's result and
    gradients for them."""
    g = torch.Generator().manual_seed(len(case.entry))
    inputs = case.inputs(g, DTYPES[dtype])
    return inputs, *reference(case, inputs, g)


# the `*S` forms run the `_2d` ops' kernels, which every dtype tests already, and the
# kernels of a row in one tile the arithmetic of the `_2d` ops' kernels: one dtype each; so do
# `layer_unbiased` (layer's kernels without a bias) and `log_probs` (the kernels of `loss`,
# which tests f32 and bf16 and leaves f16 to it)
SOME_DTYPES = {"rms_rows_of": ("bf16",), "layer_rows_of": ("f16",), "softmax_rows_of": ("f32",),
             "log_softmax_rows_of": ("bf16",), "softmax_row": ("bf16",),
             "log_softmax_row": ("f16",), "layer_unbiased": ("f32",), "log_probs": ("f16",),
             "loss": ("f32", "bf16")}
TRITON = [(name, dtype) for name in CASES for dtype in DTYPES
          if dtype in SOME_DTYPES.get(name, DTYPES)]


@pytest.mark.parametrize("name,dtype", TRITON)
def test_triton_kernels_match_torch(name: str, dtype: str) -> None:
    case = CASES[name]
    inputs, cotangent, want, grads = case_inputs(case, dtype)
    ran = held_to_reference("torch", str(PROGRAM), case.entry, inputs, cotangent, want, grads,
                            lambda got, ref, what: assert_close(got, ref, dtype, what))
    assert_kernels_ran(case, ran)


# one dtype a case: Pallas's interpreter is slower than Triton's
PALLAS = [("rms", "f32"), ("layer", "bf16"), ("layer_unbiased", "f32"),
          ("softmax_rows", "bf16"), ("log_softmax_rows", "f16"), ("loss", "f32"),
          ("layer_rows_of", "f32"), ("log_softmax_rows_of", "bf16"), ("softmax_wide", "f16"),
          ("log_softmax_wide", "f32"), ("log_probs", "bf16"), ("entropies", "f16"),
          ("softmax_row", "f32")]


@pytest.mark.parametrize("name,dtype", PALLAS)
def test_pallas_kernels_match_torch(name: str, dtype: str, monkeypatch) -> None:
    jax = pytest.importorskip("jax")
    if jax.default_backend() != "gpu":
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    case = CASES[name]
    inputs, cotangent, want, grads = case_inputs(case, dtype)
    ran = held_to_reference("jax", str(PROGRAM), case.entry, inputs, cotangent, want, grads,
                            lambda got, ref, what: assert_close(got, ref, dtype, what))
    assert_kernels_ran(case, ran)


# (entry, width, the ops whose kernels run forward and backward): rows too wide for the
# kernels of a few rows a program take those of a row a tile, rows too wide for those the
# wide kernels
WIDTHS = [("log_softmax_rows", 4097, ("log_softmax_row_2d", "log_softmax_row_backward")),
          ("softmax_rows", 65537, ("softmax_wide_2d", "softmax_wide_backward"))]


@pytest.mark.parametrize("entry,width,ops", WIDTHS)
def test_wider_rows_run_the_kernels_of_their_width(entry: str, width: int, ops: tuple) -> None:
    """At 4097 columns the kernels' `where BN <= 4096` fails: the `_2d` op's body runs, which
    is the `_row_2d` op, whose kernels hold a row in one tile of 8192; at 65537 theirs
    fails too (`BN <= 65536`), and the wide kernels walk each row in 17 tiles of 4096,
    forward and backward. Both agree with PyTorch."""
    fn = loaded("torch", str(PROGRAM), entry)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, width, generator=g)
    cotangent, want, (grad,) = reference(CASES[entry], [x], g)
    (y, (got,)), ran = ran_during(fn, lambda: run_torch(fn, [x], cotangent))
    assert_close(y, want, "f32", "result")
    assert_close(got, grad, "f32", "gradient")
    counts = by_op(ran)
    assert counts.get(entry.removesuffix("_rows") + "_2d", {}).get("kernel", 0) == 0, counts
    for op in ops:
        assert counts[op] == {"kernel": 1, "body": 0}, counts


@pytest.mark.parametrize("entry", ["loss", "entropies"])
def test_losses_walk_rows_in_tiles(entry: str) -> None:
    """A vocabulary of 4136 takes two tiles of 4096 columns in the kernels of
    token_log_probs (through cross_entropy) and entropy: the running maximum and sums cross
    a tile, forward and backward (the backward kernel of token_log_probs a program a tile),
    and agree with PyTorch."""
    case = CASES[entry]
    g = torch.Generator().manual_seed(7)
    inputs = logits_targets_weights(g, torch.float32, width=4096 + 40)
    inputs = inputs if entry == "loss" else inputs[:1]
    cotangent, want, grads = reference(case, inputs, g)
    fn = loaded("torch", str(PROGRAM), entry)
    (y, got), ran = ran_during(fn, lambda: run_torch(fn, inputs, cotangent))
    assert_close(y, want, "f32", "result")
    assert_close(got[0], grads[0], "f32", "gradient of the logits")
    assert_kernels_ran(case, ran)


def test_norm_backward_sums_spans_of_rows() -> None:
    """67 rows of 40 take two programs in the norms' backward kernels (P = ceil(67 / 64)),
    spans of 34 and 33 rows: each program's column sums go to its own row of the [P, H]
    buffer, the grad clause sums the two, and weight's and bias's gradients agree with
    PyTorch's."""
    case = CASES["layer"]
    g = torch.Generator().manual_seed(11)
    inputs = rows_and_weights(g, torch.float32, (67,))
    cotangent, want, grads = reference(case, inputs, g)
    ran = held_to_reference("torch", str(PROGRAM), case.entry, inputs, cotangent, want, grads,
                            lambda got, ref, what: assert_close(got, ref, "f32", what))
    assert_kernels_ran(case, ran)
    assert any(op.startswith("layer_norm_backward__") and op.endswith("_P2") for op in ran), ran
