"""The fused linear losses of `std.nn.loss` (`linear_cross_entropy`,
`linear_token_log_probs`, `linear_token_log_probs_chunks`) against PyTorch:
`F.cross_entropy(reduction='none')` on `hidden @ weight.T` in float64, weighted and summed,
forward and backward (dhidden and dweight), in f32, bf16 and f16.

Generated PyTorch runs the kernels in Triton's interpreter (`tests/conftest.py` sets
`TRITON_INTERPRET=1` without a GPU), generated JAX in Pallas's (`LINNET_PALLAS_INTERPRET=1`).
The `ran()` counts show that the two row kernels ran (a chunk's statistics, a chunk's
gradient) and no op body did: no `log_softmax_2d`, whose [N, V] logits the chunks never
build (the products are `linear`'s, which has no kernel).

The vocabulary is walked in chunks of VC words: 70 or 100 words are two chunks of 64 at
the header's choice, the last partial, and `log_probs_chunks` takes five chunks of 16.
Most cases run the row kernels with tiles of 16 (chosen as `linnet tune` records a choice),
so that a row of a chunk is several tiles. Targets include words outside the vocabulary
(log-probability 0, no gradient) and weights a 0 (a dropped row).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from linnet.fuzz import default_device  # noqa: E402
from linnet.passes.kernels.kernel_tuning import KernelTuning, TunedChoice  # noqa: E402

from .test_nn_kernels import DTYPES, assert_close, by_op  # noqa: E402

PROGRAM = "tests/std/linear_loss_kernels.linnet"
DEVICE = default_device()
STATS, DLOGITS = "linear_token_log_probs_stats", "linear_token_log_probs_dlogits"
KERNELS = {STATS: "linear_chunk_stats_tiles", DLOGITS: "linear_chunk_dlogits_tiles"}
TILE = 16


def chunk_words(h: int, v: int) -> int:
    """The chunk `linear_token_log_probs` takes: about H words, in as many chunks as
    ceil(V / H), rounded up to a multiple of 64 (at most V)."""
    chunks = max(1, -(-v // max(1, h)))
    return max(1, min(v, (-(-v // chunks) + 63) // 64 * 64))


def small_tiles(n: int, vc: int, v: int, dtype: str, device: str = "cpu") -> KernelTuning:
    """Tiles of 16 words for both row kernels at these sizes: a chunk's row in
    ceil(VC / 16) tiles."""
    binding = f"N={n} VC={vc} V={v} T={dtype}"
    steps = -(-vc // TILE)
    choices = ((STATS, (("BC", TILE), ("STEPS", steps))), (DLOGITS, (("BC", TILE),)))
    return KernelTuning(tuple(TunedChoice(f"std.nn.loss.{op}", binding, "equivalent",
                                          KERNELS[op], tiles, None, None)
                              for op, tiles in choices), "test tiles", device)


def make_inputs(n: int, h: int, v: int, dtype: str) -> list:
    """hidden, weight, targets (two outside the vocabulary), weights (one of them 0)."""
    g = torch.Generator().manual_seed(n * h + v)
    hidden = torch.randn(n, h, generator=g).to(DTYPES[dtype])
    weight = (torch.randn(v, h, generator=g) * 0.5).to(DTYPES[dtype])
    targets = torch.randint(0, v, (n,), generator=g)
    targets[:4] = torch.tensor([0, v - 1, v, -1])
    weights = torch.rand(n, generator=g)
    weights[4] = 0.0
    return [hidden, weight, targets, weights]


def torch_token_losses(hidden, weight, targets) -> torch.Tensor:
    """-log p(target) per row by F.cross_entropy, 0 for a target outside the vocabulary."""
    inside = (targets >= 0) & (targets < weight.shape[0])
    return F.cross_entropy(hidden @ weight.T, torch.where(inside, targets, -100),
                           reduction="none", ignore_index=-100)


def torch_loss(hidden, weight, targets, weights) -> torch.Tensor:
    return (weights * torch_token_losses(hidden, weight, targets)).sum()


def torch_log_probs(hidden, weight, targets) -> torch.Tensor:
    return -torch_token_losses(hidden, weight, targets)


def reference(fn, inputs: list, cotangent: torch.Tensor):
    """PyTorch's result in float64 and its gradients with respect to hidden and weight."""
    leaves = [x.double().requires_grad_() if k < 2 else x for k, x in enumerate(inputs)]
    y = fn(*leaves)
    y.backward(cotangent.double())
    return y.detach(), [leaves[0].grad, leaves[1].grad]


def assert_only_fused_kernels_ran(ran: dict) -> None:
    counts = by_op(ran)
    for op in KERNELS:
        assert counts.get(op, {}).get("kernel", 0) >= 1, f"{op}'s kernel did not run: {counts}"
    assert all(c["body"] == 0 for c in counts.values()), counts
    assert "log_softmax_2d" not in counts, counts


CASES = [  # entry, N, H, V, dtype, words a chunk (None: the header's), tiles of 16
    # (log_probs_chunks takes chunks of 16 words)
    ("loss", 7, 24, 70, "f32", None, True), ("loss", 20, 32, 100, "bf16", None, True),
    ("loss", 13, 16, 40, "f16", None, True), ("loss", 20, 32, 100, "f32", None, False),
    ("log_probs", 9, 24, 70, "f32", None, True), ("log_probs_chunks", 9, 24, 70, "bf16", 16, False),
]


def case_inputs(entry: str, n: int, h: int, v: int, dtype: str):
    """The entry's inputs, a cotangent for its result, PyTorch's result and gradients."""
    inputs = make_inputs(n, h, v, dtype)
    if entry == "loss":
        return inputs, torch.ones(()), *reference(torch_loss, inputs, torch.ones(()))
    cotangent = torch.randn(n, generator=torch.Generator().manual_seed(3))
    return inputs[:3], cotangent, *reference(torch_log_probs, inputs[:3], cotangent)


@pytest.mark.parametrize("entry,n,h,v,dtype,vc,small", CASES)
def test_triton_kernels_match_torch(entry: str, n: int, h: int, v: int, dtype: str,
                                    vc: int | None, small: bool) -> None:
    from linnet.torch import load_function
    inputs, cotangent, want, grads = case_inputs(entry, n, h, v, dtype)
    words = vc or chunk_words(h, v)
    fn = load_function(PROGRAM, entry, tuning=small_tiles(n, words, v, dtype) if small else False)
    leaves = [x.to(DEVICE).requires_grad_(k < 2) for k, x in enumerate(inputs)]
    y = fn(*leaves)
    assert_close(y, want, dtype, "result")
    y.backward(cotangent.to(DEVICE))
    assert_close(leaves[0].grad, grads[0], dtype, "dhidden")
    assert_close(leaves[1].grad, grads[1], dtype, "dweight")
    assert_only_fused_kernels_ran(fn.ran())
    tile = TILE if small else min(1024, 1 << (words - 1).bit_length())
    assert f"linear_chunk_dlogits_tiles__N{n}_VC{words}_V{v}_T{dtype}_BC{tile}" in \
        fn.source(N=n, H=h, V=v, T=dtype)


def test_rows_of_zero_weight_or_unknown_target_get_no_gradient() -> None:
    """A row whose weight is 0 or whose target is outside the vocabulary adds nothing to
    the loss and gets a zero gradient, exactly."""
    from linnet.torch import load_function
    hidden, weight, targets, weights = make_inputs(7, 24, 70, "f32")
    fn = load_function(PROGRAM, "loss", tuning=small_tiles(7, chunk_words(24, 70), 70, "f32"))
    leaf = hidden.to(DEVICE).requires_grad_()
    fn(leaf, weight.to(DEVICE), targets.to(DEVICE), weights.to(DEVICE)).backward()
    dropped = [2, 3, 4]  # targets 70 and -1, weight 0
    assert torch.equal(leaf.grad[dropped].cpu(), torch.zeros(3, 24))
    assert leaf.grad[[0, 1, 5, 6]].abs().amax(1).min() > 0


PALLAS = [("loss", 7, 24, 70, "f32"), ("log_probs", 5, 16, 45, "bf16")]


@pytest.mark.parametrize("entry,n,h,v,dtype", PALLAS)
def test_pallas_kernels_match_torch(entry: str, n: int, h: int, v: int, dtype: str,
                                    monkeypatch) -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    if jax.default_backend() != "gpu":
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    from linnet.jax import load_function
    inputs, cotangent, want, grads = case_inputs(entry, n, h, v, dtype)
    fn = load_function(PROGRAM, entry, tuning=small_tiles(n, chunk_words(h, v), v, dtype))
    # integers as NumPy arrays: JAX without x64 would narrow i64 targets to i32
    arrays = [jnp.asarray(x.float().numpy(), dtype=str(x.dtype).removeprefix("torch."))
              if x.is_floating_point() else x.numpy() for x in inputs]

    def run(hidden, weight):
        return fn(hidden, weight, *arrays[2:])

    y, vjp = jax.vjp(run, arrays[0], arrays[1])
    assert_close(np.asarray(y, dtype=np.float64), want, dtype, "result")
    dhidden, dweight = vjp(jnp.asarray(cotangent.numpy(), dtype=y.dtype))
    assert_close(np.asarray(dhidden, dtype=np.float64), grads[0], dtype, "dhidden")
    assert_close(np.asarray(dweight, dtype=np.float64), grads[1], dtype, "dweight")
    assert_only_fused_kernels_ran(fn.ran())
