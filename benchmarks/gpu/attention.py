"""Attention forward, B=4, H=16, L=S=4096, D in 64 and 128, causal and not, bf16 and f32.

Implementations: Linnet (`examples/attention.linnet`, entries `attention_any`,
`attention_causal_any`, `attention_bf16_any`, `attention_causal_bf16_any`, each
(q, k, v, scale) on [B, H, L, D] tensors) from the generated PyTorch module; the
hand-written Triton kernel of `benchmarks/hand/attention.py`; `F.scaled_dot_product_attention`
with the flash backend forced for bf16 (and cuDNN's as a second row), the memory-efficient
backend for f32 (flash takes no f32); `torch.compile` of the body written in torch (scores,
the causal mask, a softmax in f32, the product); on the JAX side the body under `jax.jit`,
`jax.nn.dot_product_attention` (XLA's, and cuDNN's for bf16) and Linnet's Pallas kernel
through `linnet.jax.load_function`. f32 runs at full precision everywhere (no TF32). FLOPs:
4*B*H*L*S*D, halved for causal. The reference is computed in f32 (batch by batch) from the
same inputs; causal means key s is seen by query l when s <= l.
"""

from __future__ import annotations

import math
from functools import partial

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from .harness import Suite, Timed, hand, rel_error

CASE = "attention"
B, H, L = 4, 16, 4096
WIDTHS = (64, 128)
DTYPES = {"f32": (torch.float32, 2e-4), "bf16": (torch.bfloat16, 3e-2)}


def entry_name(causal: bool, dtype: str) -> str:
    """attention_any, attention_causal_any, attention_bf16_any, attention_causal_bf16_any."""
    return ("attention" + ("_causal" if causal else "") + ("_bf16" if dtype == "bf16" else "")
            + "_any")


def torch_body(q, k, v, scale: float, causal: bool):
    s = torch.matmul(q, k.transpose(-2, -1)).float() * scale
    if causal:
        keep = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1).to(v.dtype), v)


def jax_body(q, k, v, scale: float, causal: bool):
    import jax.numpy as jnp
    s = jnp.einsum("bhld,bhsd->bhls", q, k, preferred_element_type=jnp.float32) * scale
    if causal:
        keep = jnp.tril(jnp.ones(s.shape[-2:], dtype=bool))
        s = jnp.where(keep, s, -jnp.inf)
    e = jnp.exp(s - s.max(axis=-1, keepdims=True))
    p = (e / e.sum(axis=-1, keepdims=True)).astype(v.dtype)
    return jnp.einsum("bhls,bhsd->bhld", p, v, preferred_element_type=jnp.float32).astype(v.dtype)


def run(suite: Suite) -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    compiled = torch.compile(torch_body, dynamic=False)
    for name, (dtype, tolerance) in DTYPES.items():
        for d in WIDTHS:
            for causal in (False, True):
                config = f"B{B} H{H} L=S={L} D{d}" + (" causal" if causal else "")
                flops = 4 * B * H * L * L * d / (2 if causal else 1)
                with suite.guard(CASE, config, name):
                    q, k, v = (torch.randn(B, H, L, d, device=suite.device,
                                           generator=suite.seeded(i)).to(dtype) for i in range(3))
                    scale = 1 / math.sqrt(d)
                    ref = reference(q, k, v, scale, causal)
                    with suite.group(CASE, config, name, unit="TFLOP/s", work=flops,
                                     tolerance=tolerance) as g:
                        torch_rows(suite, g, compiled, (q, k, v, scale, causal), name, ref)
                        jax_rows(suite, g, (q, k, v, scale, causal), name, ref)
                    del q, k, v, ref


def reference(q, k, v, scale: float, causal: bool) -> torch.Tensor:
    """f32 attention, one batch element at a time (its scores are 1 GB at this size)."""
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    for i in range(q.shape[0]):
        out[i] = torch_body(q[i].float(), k[i].float(), v[i].float(), scale, causal)
    return out


def torch_rows(suite: Suite, g, compiled, args, dtype: str, ref) -> None:
    q, k, v, scale, causal = args
    check = partial(rel_error, ref=ref)
    g.add("linnet", "Linnet",
          lambda: partial(suite.linnet("attention", entry_name(causal, dtype)), q, k, v, scale),
          check)
    g.add("hand", "hand Triton",
          lambda: partial(hand("attention", "forward").forward, q, k, v, scale, causal), check)
    backends = ([("sdpa_flash", "SDPA flash", SDPBackend.FLASH_ATTENTION),
                 ("sdpa_cudnn", "SDPA cuDNN", SDPBackend.CUDNN_ATTENTION)] if dtype == "bf16"
                else [("sdpa_efficient", "SDPA efficient (flash takes no f32)",
                       SDPBackend.EFFICIENT_ATTENTION)])
    for key, label, backend in backends:
        g.add(key, label, lambda b=backend: partial(sdpa, b, q, k, v, scale, causal), check)
    g.add("compile", "torch.compile(body)", lambda: partial(compiled, q, k, v, scale, causal),
          check)


def sdpa(backend, q, k, v, scale: float, causal: bool) -> torch.Tensor:
    with sdpa_kernel(backend):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale,
                                                                is_causal=causal)


def jax_rows(suite: Suite, g, args, dtype: str, ref) -> None:
    q, k, v, scale, causal = args
    side = suite.jax
    check = partial(rel_error, ref=ref)
    in_precision = partial(side.calls_in_precision, dtype)

    def pallas():
        fn = side.jit(suite.linnet("attention", entry_name(causal, dtype), target="jax"))
        xs = suite.jax_args(q, k, v) + (scale,)
        with side.precision(dtype):
            note = side.kernel_note(fn, *xs)
        return Timed(in_precision(fn, *xs), note=note)

    g.add("linnet_pallas", "Linnet Pallas", pallas, check, family="jax")
    g.add("jax_body", "jax.jit(body)",
          lambda: in_precision(side.jit(partial(jax_body, scale=scale, causal=causal)),
                               *suite.jax_args(q, k, v)), check, family="jax")
    # jax.nn.dot_product_attention takes [B, L, H, D]: the inputs are transposed beforehand
    check_blhd = partial(rel_error, ref=ref.transpose(1, 2))
    for key, label, impl in ([("jax_xla", "jax.nn.dot_product_attention (xla)", "xla")]
                             + ([("jax_cudnn", "jax.nn.dot_product_attention (cudnn)", "cudnn")]
                                if dtype == "bf16" else [])):
        g.add(key, label, lambda i=impl: dot_product_attention(side, suite, args, dtype, i),
              check_blhd, family="jax")


def dot_product_attention(side, suite: Suite, args, dtype: str, implementation: str):
    q, k, v, scale, causal = args
    jax = side.require()
    fn = side.jit(partial(jax.nn.dot_product_attention, scale=scale, is_causal=causal,
                          implementation=implementation))
    xs = [x.transpose(0, 2, 1, 3) for x in suite.jax_args(q, k, v)]
    jax.block_until_ready(xs)
    return side.calls_in_precision(dtype, fn, *xs)
