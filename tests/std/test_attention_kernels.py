"""The kernels of `std.nn.attention` (`attention` and `grouped_attention` without a mask,
with the causal mask and with any other mask; `attention_rows` and `grouped_attention_rows`
with a mask per batch row) against `F.scaled_dot_product_attention`, forward and backward,
in f32, bf16 and f16; `sink_attention`'s against the softmax with each head's sink as one
more column (its sinks' gradient too, also held to its derivation); and the call rewrite that takes `causal_mask<Q, K>()` to the causal
kernel (`linnet/passes/front/call_rewrites.py`): where it fires and where it does not.

Generated PyTorch runs the kernels in Triton's interpreter (`tests/conftest.py` sets
`TRITON_INTERPRET=1` without a GPU) and differentiates through autograd, whose backward
is the inner ops' grad clauses (row deltas, dq, dk/dv kernels, reading the log-sum-exp the
forward kernel wrote); generated JAX runs
them in Pallas's interpreter and differentiates with `jax.vjp`. Each test asserts from
the loaded function's `ran()` counts of its own call that the kernels, not the bodies, ran
(the tests of an entry share its loaded function: the program is checked once a process). The reference
is PyTorch in float64 on the same (rounded) inputs; grouped keys and values are
`repeat_interleave`d. Sizes are tiny and ragged against the tiles (32 queries by 64 keys
forward, sized from the sequences): 24 queries against 40 keys, a head of 16. The masks
are random, differ between batch rows, and hide every key from one query row.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from linnet.fuzz import default_device  # noqa: E402

from .kernel_runs import held_to_reference, loaded, ran_during, run_torch  # noqa: E402

PROGRAM = Path(__file__).resolve().parent / "nn_attention_kernels.linnet"
DEVICE = default_device()
B, H, Q, K, D = 1, 2, 24, 40, 16
SCALE = 0.25
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
# |got - want| <= ATOL * max|want| + RTOL * |want|: a few roundings of the dtype
RTOL = {"f32": 1e-5, "bf16": 3e-2, "f16": 4e-3}
ATOL = {"f32": 1e-5, "bf16": 3e-2, "f16": 4e-3}
# the backward: the row deltas, then dq and dk/dv from the forward kernel's log-sum-exp (no
# kernel walks the keys again for it)
BACKWARD = ("attention_delta", "attention_dq", "attention_dkv")
MASKED_BACKWARD = ("attention_delta", "attention_masked_dq", "attention_masked_dkv")


@dataclass(frozen=True)
class Case:
    """An entry of nn_attention_kernels.linnet: its key/value heads, its mask ("none",
    "causal", "shared" [Q, K] or "rows" [B, Q, K], the last two passed in), its batch, and
    the forward op whose kernel must run."""
    entry: str
    kv_heads: int
    mask: str
    forward: str
    batch: int = B


MASKED = "attention_masked_rows_lse"
CASES = {
    "plain": Case("plain", H, "none", "attention_plain_lse"),
    "causal": Case("causal", H, "causal", "attention_causal_lse"),
    "grouped": Case("grouped", 1, "none", "attention_plain_lse"),
    "grouped_causal": Case("grouped_causal", 1, "causal", "attention_causal_lse"),
    "given": Case("given", H, "shared", MASKED),
    "rows": Case("rows", H, "rows", MASKED, batch=2),
    "grouped_rows": Case("grouped_rows", 1, "rows", MASKED, batch=2),
}


def case_mask(case: Case, g: torch.Generator, queries: int = Q, keys: int = K):
    """The keys each query row sees, shaped for SDPA's attn_mask ([Q, K] or [B, 1, Q, K]),
    and the mask the entry takes (None where it takes none)."""
    if case.mask == "none":
        return torch.ones(queries, keys, dtype=torch.bool), None
    if case.mask == "causal":
        # the queries are the last Q of K positions: query i sees keys j <= i + K - Q
        return torch.ones(queries, keys, dtype=torch.bool).tril(keys - queries), None
    seen = torch.rand(case.batch, queries, keys, generator=g) < 0.6
    seen[-1, 3] = False  # a row that sees no key
    if case.mask == "shared":
        return seen[0], seen[0]
    return seen[:, None], seen


def reference(leaves: list, seen: torch.Tensor, group: int, cotangent: torch.Tensor):
    """SDPA's result and gradients. A row that sees no key is, as the body defines it, the
    mean of the values, with no gradient to its query or the keys (the mask's select
    passes none to a hidden score): SDPA of a zero query that sees every key."""
    key, value = (x.repeat_interleave(group, dim=1) for x in leaves[1:])
    empty = ~seen.any(-1, keepdim=True)
    query = torch.where(empty, 0.0, leaves[0])
    want = F.scaled_dot_product_attention(query, key, value, attn_mask=seen | empty,
                                          scale=SCALE)
    want.backward(cotangent.double())
    return want.detach(), [x.grad for x in leaves]


def case_inputs(case: Case, dtype: str, queries: int = Q, keys: int = K):
    """The entry's inputs (query, key, value in `dtype`, the mask where it takes one), a
    cotangent, and PyTorch's result and gradients."""
    g = torch.Generator().manual_seed(len(case.entry))
    inputs = [torch.randn(case.batch, heads, n, D, generator=g).to(DTYPES[dtype])
              for heads, n in ((H, queries), (case.kv_heads, keys), (case.kv_heads, keys))]
    cotangent = torch.randn(case.batch, H, queries, D, generator=g)
    seen, given = case_mask(case, g, queries, keys)
    leaves = [x.double().requires_grad_() for x in inputs]
    want, grads = reference(leaves, seen, H // case.kv_heads, cotangent)
    return inputs + ([given] if given is not None else []), cotangent, want, grads


def assert_close(got, want: torch.Tensor, dtype: str, what: str) -> None:
    got = torch.as_tensor(np.asarray(got, dtype=np.float64)) if not torch.is_tensor(got) \
        else got.detach().double().cpu()
    assert got.shape == want.shape, what
    bound = ATOL[dtype] * want.abs().max() + RTOL[dtype] * want.abs()
    worst = ((got - want).abs() - bound).max()
    assert worst <= 0, f"{what}: off by {worst:.3g} past the tolerance"


def assert_kernels_ran(ops: tuple[str, ...], ran: dict) -> None:
    """Each of `ops` ran its kernel, and no op ran its body."""
    counts: dict[str, dict[str, int]] = {}
    for instance, seen in ran.items():
        total = counts.setdefault(instance.split("__")[0], {"kernel": 0, "body": 0})
        total["kernel"] += seen["kernel"]
        total["body"] += seen["body"]
    for op in ops:
        assert counts.get(op, {}).get("kernel", 0) >= 1, f"{op}'s kernel did not run: {counts}"
    assert all(c["body"] == 0 for c in counts.values()), counts


def kernel_ops(case: Case) -> tuple[str, ...]:
    """The ops whose kernels run forward and backward in `case`."""
    return (case.forward, *(MASKED_BACKWARD if case.forward == MASKED else BACKWARD))


# each case in two dtypes, each dtype in two cases: the interpreter is slow
TRITON = [("plain", "f32"), ("plain", "bf16"), ("causal", "f16"), ("causal", "f32"),
          ("grouped", "f16"), ("grouped", "bf16"), ("grouped_causal", "bf16"),
          ("grouped_causal", "f32"), ("given", "f16"), ("rows", "bf16"), ("grouped_rows", "f32")]


@pytest.mark.parametrize("name,dtype", TRITON)
def test_triton_kernels_match_torch(name: str, dtype: str) -> None:
    case = CASES[name]
    inputs, cotangent, want, grads = case_inputs(case, dtype)
    ran = held_to_reference("torch", str(PROGRAM), case.entry, inputs, cotangent, want, grads,
                            lambda got, ref, what: assert_close(got, ref, dtype, what))
    assert_kernels_ran(kernel_ops(case), ran)
    # these and no other: no kernel walks the keys again for the row statistics
    assert {op.split("__")[0] for op in ran} == set(kernel_ops(case)), ran


# one dtype a case: Pallas's interpreter is slower than Triton's
PALLAS = [("plain", "bf16"), ("grouped_causal", "f32"), ("grouped_rows", "bf16")]


@pytest.mark.parametrize("name,dtype", PALLAS)
def test_pallas_kernels_match_torch(name: str, dtype: str, monkeypatch) -> None:
    jax = pytest.importorskip("jax")
    if jax.default_backend() != "gpu":
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    case = CASES[name]
    inputs, cotangent, want, grads = case_inputs(case, dtype)
    ran = held_to_reference("jax", str(PROGRAM), case.entry, inputs, cotangent, want, grads,
                            lambda got, ref, what: assert_close(got, ref, dtype, what))
    assert_kernels_ran(kernel_ops(case), ran)


def test_heads_wider_than_a_tile_run_the_body() -> None:
    """A head of 300 dims fails the kernels' `where BD <= 256`: the bodies run, forward
    and backward, and agree with PyTorch (the body's softmax runs its own row kernel)."""
    fn = loaded("torch", str(PROGRAM), "plain")
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 1, n, 300, generator=g) for n in (3, 5, 5))
    ref = [x.detach().double().requires_grad_() for x in (q, k, v)]
    want = F.scaled_dot_product_attention(*ref, scale=SCALE)
    want.sum().backward()
    (y, got), ran = ran_during(fn, lambda: run_torch(fn, [q, k, v], torch.ones(want.shape)))
    assert_close(y, want.detach(), "f32", "result")
    for x, r in zip(got, ref):
        assert_close(x, r.grad, "f32", "gradient")
    # ops whose `where` fails in a binding are not listed; a listed attention op ran its kernel
    assert not any(op.startswith("attention") and c["kernel"] for op, c in ran.items()), ran


def test_tiles_follow_the_head() -> None:
    """The op headers size the tiles from the head and the sequences: at a head of 128,
    128 queries by 64 keys forward, 128 by 32 for dq, 128 keys by 32 queries for dk/dv;
    at 256 each halves. (Compiles only; the tiles' speed is measured on the GPU.)"""
    from linnet.pipeline import compile_source
    want = {128: ("BQ128_BK64", "BQ128_BK32", "BQ32_BK128"),
            256: ("BQ64_BK32", "BQ64_BK16", "BQ16_BK64")}
    for d, (forward, dq, dkv) in want.items():
        text = compile_source(path=str(PROGRAM), entry="plain", tuning=False, bind={
            "B": 1, "H": 2, "Q": 4096, "K": 4096, "D": d, "T": "bf16"}).text
        for kernel, tiles in (("attention_tiles", forward), ("attention_dq_tiles", dq),
                              ("attention_dkv_tiles", dkv)):
            assert re.search(rf"kernel {kernel}__\w*_{tiles}_BD{d}\b", text), (kernel, tiles)


# ------------------------------------------------ the call rewrite causal-attention

SIZES = {"B": 1, "H": 2, "Q": 24, "K": 40, "D": 16}


def compiled(entry: str, bind: dict = SIZES, **options):
    """The entry compiled at the test's sizes (`compile_file`'s options)."""
    from linnet.pipeline import compile_file
    sizes = dict(bind, **({"Hk": 1} if entry.startswith("grouped") else {}))
    return compile_file(PROGRAM, entry=entry, bind=sizes, **options)


def kernels_kept(entry: str, **options) -> dict[str, str | None]:
    """{op Func name: the kernel it runs, or None} after choose-kernels."""
    stage = compiled(entry, **options).stage("choose-kernels")
    return {f.name: f.kernel.kernel if f.kernel else None for f in stage.funcs
            if f.kind == "op"}


def named(ops: dict, prefix: str) -> list:
    return [kernel for name, kernel in ops.items() if name.startswith(prefix + "__")]


@pytest.mark.parametrize("entry", ["causal", "grouped_causal"])
def test_a_causal_mask_argument_calls_the_causal_kernel(entry: str) -> None:
    """`attention(..., some(causal_mask<Q, K>()))`, and `grouped_attention` given the mask
    by `let`, call attention_causal (its kernel, and the backward kernels of its grad
    clause), never attention_masked."""
    ops = kernels_kept(entry)
    assert named(ops, "attention_causal") == [None]
    assert named(ops, "attention_causal_lse") == ["attention_tiles"]
    assert named(ops, "attention_dkv") == ["attention_dkv_tiles"]
    assert named(ops, "attention_masked") == []
    assert not named(ops, MASKED)


@pytest.mark.parametrize("entry", ["shifted", "given"])
def test_other_masks_run_the_masked_kernels(entry: str) -> None:
    """A mask that is not causal_mask<Q, K>()'s value (another op's, or an input) is
    attention_masked's, which hands it to attention_masked_rows as its one mask row: the
    masked kernels run, forward and backward, and no causal one."""
    ops = kernels_kept(entry)
    assert named(ops, "attention_masked") == [None]
    assert named(ops, MASKED) == ["attention_masked_tiles"]
    assert named(ops, "attention_masked_dkv") == ["attention_masked_dkv_tiles"]
    assert not [n for n in ops if n.startswith(("attention_causal", "attention_dkv"))]


def test_no_rewrite_where_the_causal_kernel_would_not_run() -> None:
    """With more queries than keys the causal kernel's `where` fails (a row sees no key):
    the rewrite does not fire, and attention_masked runs the masked kernels."""
    ops = kernels_kept("causal", bind=dict(SIZES, Q=40, K=24))
    assert named(ops, "attention_masked") == [None]
    assert named(ops, MASKED) == ["attention_masked_tiles"]
    assert not named(ops, "attention_causal")


def test_causal_with_more_queries_than_keys() -> None:
    """attention_causal called itself with Q > K: its kernel's `where` fails and its body
    runs forward; the first Q - K rows see no key, so its grad clause runs the masked
    backward kernels, the only backward that gives such a row the weights 1/K and no
    score gradient. Both agree with SDPA under the mask tril(K - Q). 16 keys fill the
    body's softmax tile: std.nn.softmax's kernels pad a row with -1e30, which a row of
    hidden scores (all -1e30) would weigh as keys."""
    case = Case("causal_direct", H, "causal", "attention_causal")
    inputs, cotangent, want, grads = case_inputs(case, "f32", queries=Q, keys=16)
    fn = loaded("torch", str(PROGRAM), case.entry)
    (y, got), ran = ran_during(fn, lambda: run_torch(fn, inputs, cotangent))
    assert_close(y, want, "f32", "result")
    for k, (x, g) in enumerate(zip(got, grads)):
        assert_close(x, g, "f32", f"gradient {k}")
    assert not any(op.startswith("attention_causal") for op in ran), ran
    assert_kernels_ran(MASKED_BACKWARD, {op: c for op, c in ran.items()
                                         if op.startswith("attention")})


def test_exact_and_other_targets_compute_the_body_as_written() -> None:
    """The rewrite chooses an implementation, as choose-kernels does: under --numerics
    exact and for ONNX and StableHLO, attention_masked's body runs."""
    for options in ({"numerics": "exact"}, {"target": "onnx"}, {"target": "stablehlo"},
                    {"target": "jax", "numerics": "exact"}):
        ops = kernels_kept("causal", **options)
        assert named(ops, "attention_masked") == [None], options
        assert named(ops, MASKED) == [None], options
        assert not named(ops, "attention_causal"), options
    assert "triton" not in compiled("causal", numerics="exact").text
    assert named(kernels_kept("causal", target="jax"), "attention_causal_lse") == ["attention_tiles"]


def test_exact_numerics_agree_with_torch_on_the_masked_body() -> None:
    """The body attention_masked computes under the causal mask is SDPA's causal result:
    the two sides of the rewrite agree (`linnet verify --entry causal` checks the same on
    random sizes)."""
    from linnet.torch import load_function
    case = CASES["causal"]
    inputs, cotangent, want, grads = case_inputs(case, "f32")
    fn = load_function(str(PROGRAM), "causal", numerics="exact")
    leaves = [x.to(DEVICE).requires_grad_() for x in inputs]
    y = fn(*leaves)
    assert_close(y, want, "f32", "result")
    y.backward(cotangent.to(DEVICE))
    for k, (x, g) in enumerate(zip(leaves, grads)):
        assert_close(x.grad, g, "f32", f"gradient {k}")
    assert not any(c["kernel"] for c in fn.ran().values()), fn.ran()


def test_the_dump_names_the_specialized_instance_and_the_rewrite() -> None:
    """--dump-after=elaborate shows attention's instance for the causal mask and the rewrite
    that fired in it."""
    dump = str(compiled("causal").stage("elaborate"))
    assert ("with mask = causal_mask<...>(); call rewrite causal-attention: "
            "attention_masked -> attention_causal") in dump


# ------------------------------------------------------------------ attention with sinks

def sink_inputs(dtype: str, kv_heads: int):
    """sink_attention's inputs (query, key, value, sinks in `dtype`, a mask per batch row
    that hides every key from one query row), a cotangent, and the float64 reference's
    result and gradients (query, key, value, sinks)."""
    g = torch.Generator().manual_seed(kv_heads)
    inputs = [torch.randn(2, heads, n, D, generator=g).to(DTYPES[dtype])
              for heads, n in ((H, Q), (kv_heads, K), (kv_heads, K))]
    inputs.append(torch.randn(H, generator=g).to(DTYPES[dtype]))
    seen = torch.rand(2, Q, K, generator=g) < 0.6
    seen[-1, 3] = False  # a row that sees no key: all its weight on the sink
    cotangent = torch.randn(2, H, Q, D, generator=g)
    leaves = [x.double().requires_grad_() for x in inputs]
    want = sink_reference(*leaves, seen)
    want.backward(cotangent.double())
    return inputs + [seen], cotangent, want.detach(), [x.grad for x in leaves]


def sink_reference(query, key, value, sinks, seen):
    """The sink softmax as the body defines it: hidden scores -1e30, each head's sink one
    more column whose share is dropped; grouped keys and values repeat_interleaved."""
    group = query.shape[1] // key.shape[1]
    key, value = (x.repeat_interleave(group, dim=1) for x in (key, value))
    scores = (query @ key.transpose(-1, -2) * SCALE).masked_fill(~seen[:, None], -1e30)
    sink = sinks.view(1, -1, 1, 1).expand(*scores.shape[:-1], 1)
    return torch.softmax(torch.cat([scores, sink], -1), -1)[..., :-1] @ value


SINK_KERNELS = ("attention_sink_rows", "attention_sink_stats", "attention_masked_dq",
                "attention_masked_dkv")


@pytest.mark.parametrize("dtype,kv_heads", [("f32", 1), ("bf16", H)])
def test_triton_sink_kernels_match_torch(dtype: str, kv_heads: int) -> None:
    """sink_attention, grouped (two query heads a key head) and not, runs its kernels
    forward and backward (the sinks' gradient too), and agrees with the reference, in
    which the row that sees no key is 0."""
    inputs, cotangent, want, grads = sink_inputs(dtype, kv_heads)
    ran = held_to_reference("torch", str(PROGRAM), "sinks", inputs, cotangent, want, grads,
                            lambda got, ref, what: assert_close(got, ref, dtype, what))
    assert_kernels_ran(SINK_KERNELS, ran)


def test_sink_body_gradient_is_minus_the_sink_weight_times_delta() -> None:
    """The body (--numerics exact) agrees with the reference and with the kernels, and
    its sinks' gradient is -sum over batch rows and queries of P_sink * delta, where
    P_sink = exp(sink - lse) and delta = sum(out * d_out): the gradient the stats kernel
    adds up. A row that sees no key gives exactly 0 in body and kernel alike."""
    from linnet.torch import load_function
    inputs, cotangent, want, grads = sink_inputs("f32", 1)
    body = load_function(str(PROGRAM), "sinks", numerics="exact")
    (y, got), ran = ran_during(body, lambda: run_torch(body, inputs, cotangent))
    assert not any(c["kernel"] for c in ran.values()), ran
    assert_close(y, want, "f32", "result")
    for k, (x, g) in enumerate(zip(got, grads)):
        assert_close(x, g, "f32", f"gradient {k}")
    query, key, _, sinks, seen = inputs
    scores = (query.double() @ key.double().transpose(-1, -2) * SCALE)
    scores = scores.masked_fill(~seen[:, None], -1e30)
    sink = sinks.double().view(1, -1, 1, 1)
    lse = torch.logsumexp(torch.cat([scores, sink.expand(*scores.shape[:-1], 1)], -1), -1)
    delta = (want * cotangent.double()).sum(-1)
    derived = -(torch.exp(sink[..., 0] - lse) * delta).sum((0, 2))
    assert_close(got[3], derived, "f32", "sinks' gradient against -sum(P_sink * delta)")
    kernels = loaded("torch", str(PROGRAM), "sinks")
    y_kernel, got_kernel = run_torch(kernels, inputs, cotangent)
    assert_close(y_kernel, y.detach().double(), "f32", "kernel against body")
    for k, (x, g) in enumerate(zip(got_kernel, got)):
        assert_close(x, g.double(), "f32", f"kernel against body, gradient {k}")
    assert y[-1, :, 3].abs().max() == 0 and y_kernel[-1, :, 3].abs().max() == 0
