"""The std kernels on rows that real data makes extreme, with widths that are not powers of
two, so that each tile is padded past the row's end.

A row of -1e30 (a masked logit, a fully masked score row) has -1e30 as its maximum: had the
padding read -1e30 too, it would count in the row's sums (softmax weights 1/64 instead of
1/40). The padding reads the lowest f32 and the sums leave it out, so each kernel gives what
its op's body and PyTorch give: weights 1/N, log-probabilities -log N, entropy log N. A row
of -inf gives NaN, as the body and PyTorch do. Each case runs its kernels in Triton's
interpreter (one in Pallas's) and checks from `ran()` that the kernels, not the bodies, ran.
"""

from __future__ import annotations

import math
from typing import Callable

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from linnet.fuzz import default_device  # noqa: E402

ROWS = "tests/std/nn_kernels.linnet"
HEAD = "tests/std/linear_loss_kernels.linnet"
ATTENTION = "tests/std/nn_attention_kernels.linnet"
DEVICE = default_device()
WIDTH = 40  # a tile of 64, or three of 16 for the wide kernels


def extreme_rows() -> torch.Tensor:
    """[3, 40] f32: a row of -1e30, an ordinary row, a row of -inf."""
    x = torch.randn(3, WIDTH, generator=torch.Generator().manual_seed(3)) * 2
    x[0] = -1e30
    x[2] = -math.inf
    return x


def entropy_of(x: torch.Tensor) -> torch.Tensor:
    return -(F.softmax(x, -1) * F.log_softmax(x, -1)).sum(-1)


def assert_close(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    got = got.detach().double().cpu()
    scale = want.abs().max().item() if want.numel() else 1.0
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5 * max(scale, 1.0)), \
        f"{what}:\n{got}\n{want}"


def kernels_only(fn, ops: tuple[str, ...]) -> None:
    """Each op of `ops` ran its kernel, and no op ran its body."""
    counts: dict[str, list[int]] = {}
    for instance, c in fn.ran().items():
        seen = counts.setdefault(instance.split("__")[0], [0, 0])
        seen[0] += c["kernel"]
        seen[1] += c["body"]
    for op in ops:
        assert counts.get(op, [0, 0])[0] >= 1, f"{op}'s kernel did not run: {counts}"
    assert all(body == 0 for _, body in counts.values()), counts


# (entry of nn_kernels.linnet, PyTorch's op, the ops whose kernels run forward and backward)
ROW_CASES: dict[str, tuple[Callable, tuple[str, ...]]] = {
    "softmax_rows": (lambda x: F.softmax(x, -1), ("softmax_2d", "softmax_backward")),
    "softmax_wide": (lambda x: F.softmax(x, -1), ("softmax_wide_2d", "softmax_wide_backward")),
    "log_softmax_rows": (lambda x: F.log_softmax(x, -1),
                         ("log_softmax_2d", "log_softmax_backward")),
    "log_softmax_wide": (lambda x: F.log_softmax(x, -1),
                         ("log_softmax_wide_2d", "log_softmax_wide_backward")),
    "entropies": (entropy_of, ("entropy", "entropy_backward")),
}


@pytest.mark.parametrize("entry", list(ROW_CASES))
def test_triton_row_kernels_weigh_a_row_of_minus_1e30_alike(entry: str) -> None:
    """Forward: rows 0 and 1 as PyTorch in float64, row 2 NaN as PyTorch. Backward (the
    grad clauses' kernels) on rows 0 and 1."""
    from linnet.torch import load_function
    reference, ops = ROW_CASES[entry]
    x = extreme_rows()
    want = reference(x.double())
    fn = load_function(ROWS, entry)
    leaf = x.clone().to(DEVICE).requires_grad_()
    y = fn(leaf)
    assert_close(y[:2], want[:2], "rows of -1e30 and of ordinary values")
    assert y[2].isnan().all() and want[2].isnan().all(), y[2]
    cotangent = torch.randn(y[:2].shape, generator=torch.Generator().manual_seed(4))
    y[:2].backward(cotangent.to(DEVICE))
    wanted = x[:2].double().requires_grad_()
    reference(wanted).backward(cotangent.double())
    assert_close(leaf.grad[:2], wanted.grad, "gradient")
    kernels_only(fn, ops)


def test_triton_token_log_probs_of_a_row_of_minus_1e30_is_minus_log_width() -> None:
    """token_log_probs walks a row in one tile of 64: row 0 gives -log 40, not -log 64."""
    from linnet.torch import load_function
    x = extreme_rows()
    targets = torch.tensor([3, WIDTH - 1, 5])
    fn = load_function(ROWS, "log_probs")
    y = fn(x.to(DEVICE), targets.to(DEVICE))
    want = F.log_softmax(x.double(), -1).gather(1, targets[:, None])[:, 0]
    assert_close(y[:2], want[:2], "log-probabilities")
    assert abs(y[0].item() + math.log(WIDTH)) < 1e-5
    assert y[2].isnan()
    kernels_only(fn, ("token_log_probs",))


def test_triton_fused_head_leaves_words_past_the_vocabulary_out() -> None:
    """Chunks of 16 words over a vocabulary of 40: the last chunk holds 8 words past it, in
    the chunk statistics' definition and kernel alike. Logits of -1e30 throughout row 0 give
    -log 40, not -log 48."""
    from linnet.torch import load_function
    g = torch.Generator().manual_seed(6)
    hidden = torch.randn(2, 16, generator=g)
    weight = torch.randn(WIDTH, 16, generator=g)
    hidden[0] = 0.0
    hidden[0, 0] = -1e30
    weight[:, 0] = 1.0
    targets = torch.tensor([7, 33])
    fn = load_function(HEAD, "log_probs_chunks")
    y = fn(hidden.to(DEVICE), weight.to(DEVICE), targets.to(DEVICE))
    logits = hidden.double() @ weight.double().T
    want = F.log_softmax(logits, -1).gather(1, targets[:, None])[:, 0]
    assert_close(y, want, "log-probabilities")
    kernels_only(fn, ("linear_token_log_probs_stats",))


def attention_inputs(lead: float) -> list[torch.Tensor]:
    """q, k, v [1, 2, 3, 16] with 5 keys: query 0 scores lead * -1e30 * 0.25 against every
    key (exactly, in f32), the other queries ordinary scores."""
    g = torch.Generator().manual_seed(8)
    q = torch.randn(1, 2, 3, 16, generator=g)
    k = torch.randn(1, 2, 5, 16, generator=g)
    v = torch.randn(1, 2, 5, 16, generator=g)
    q[:, :, 0] = 0.0
    q[:, :, 0, 0] = lead
    q[:, :, 1:, 0] = 0.0
    k[..., 0] = -1e30
    return [q, k, v]


def test_triton_attention_weighs_a_row_of_minus_1e30_over_its_keys() -> None:
    """Query 0 scores -1e30 against each of its 5 keys (a tile of 16): its output is the
    mean of the values, not their sum over 16."""
    from linnet.torch import load_function
    q, k, v = attention_inputs(4.0)
    fn = load_function(ATTENTION, "plain")
    y = fn(q.to(DEVICE), k.to(DEVICE), v.to(DEVICE))
    want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), scale=0.25)
    assert_close(y, want, "attention")
    assert_close(y[:, :, 0], v.double().mean(2), "the mean of the values")
    kernels_only(fn, ("attention_plain_lse",))


def test_triton_masked_attention_keeps_a_maximum_below_minus_1e30() -> None:
    """Under a mask that hides nothing, query 0 scores -2e30 against every key: the running
    maximum starts below it, so the row's weights are 1/5, not 0/0."""
    from linnet.torch import load_function
    q, k, v = attention_inputs(8.0)
    mask = torch.ones(3, 5, dtype=torch.bool)
    fn = load_function(ATTENTION, "given")
    y = fn(q.to(DEVICE), k.to(DEVICE), v.to(DEVICE), mask.to(DEVICE))
    want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), scale=0.25)
    assert_close(y, want, "masked attention")
    kernels_only(fn, ("attention_masked_rows_lse",))


def test_pallas_log_softmax_of_a_row_of_minus_1e30(monkeypatch) -> None:
    """The same in Pallas's interpreter: -log 40 across row 0, NaN across row 2."""
    jax = pytest.importorskip("jax")
    if jax.default_backend() != "gpu":
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    import numpy as np
    from linnet.jax import load_function
    x = extreme_rows()
    fn = load_function(ROWS, "log_softmax_rows")
    y = np.asarray(fn(x.numpy()), dtype=np.float64)
    want = F.log_softmax(x.double(), -1).numpy()
    assert np.allclose(y[:2], want[:2], rtol=1e-5, atol=1e-5)
    assert np.allclose(y[0], -math.log(WIDTH), rtol=1e-6)
    assert np.isnan(y[2]).all()
    kernels_only(fn, ("log_softmax_2d",))
