"""Attention forward written by hand in Triton: the online-softmax (flash) algorithm of
`examples/attention.linnet`, as a person tuning for speed would write it.

o = softmax(q k^T * scale) v per batch and head, q [B, H, L, D], k and v [B, H, S, D], all
contiguous. One program per block of BQ queries of one head walks the keys in tiles of BK,
keeping for each query a running maximum, a running denominator and a [BQ, D] accumulator;
each key tile rescales the old state by exp(old max - new max). Against the example's kernel
it adds what the Triton tutorial does: the scale is folded into a base-2 exponent (exp2 of
scores times scale * log2(e)), and with `causal` a query block skips the key tiles wholly
above the diagonal and masks only the tiles on it (key s is seen by query l when s <= l).
bf16 inputs multiply bf16 tiles with f32 accumulation (the weights rounded to bf16 for the
second product); f32 inputs multiply at full precision (`input_precision="ieee"`).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
# (dtype, D) -> (BQ, BK, warps, stages); chosen from the Triton tutorial's Hopper settings,
# smaller for f32, whose tiles take twice the shared memory.
TILES = {(torch.bfloat16, 64): (128, 64, 4, 3), (torch.bfloat16, 128): (128, 64, 8, 3),
         (torch.float32, 64): (64, 64, 4, 2), (torch.float32, 128): (64, 32, 4, 2)}
FALLBACK = (64, 32, 4, 1)


@triton.jit
def _key_tiles(acc, denom, run_max, q, k_ptr, v_ptr, rows, dims, lo, hi, S, qk_scale,
               D: tl.constexpr, BK: tl.constexpr, DIAGONAL: tl.constexpr,
               EVEN_S: tl.constexpr, PRECISION: tl.constexpr):
    for start in range(lo, hi, BK):
        keys = start + tl.arange(0, BK)
        offs = keys[:, None] * D + dims[None, :]
        if EVEN_S:
            k = tl.load(k_ptr + offs)
            v = tl.load(v_ptr + offs)
        else:
            k = tl.load(k_ptr + offs, mask=keys[:, None] < S, other=0.0)
            v = tl.load(v_ptr + offs, mask=keys[:, None] < S, other=0.0)
        if PRECISION == "":
            s = tl.dot(q, tl.trans(k), out_dtype=tl.float32) * qk_scale
        else:
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION, out_dtype=tl.float32) * qk_scale
        if DIAGONAL:
            s = tl.where(rows[:, None] >= keys[None, :], s, -1e30)
        if not EVEN_S:
            s = tl.where(keys[None, :] < S, s, -1e30)
        new_max = tl.maximum(run_max, tl.max(s, 1))
        alpha = tl.exp2(run_max - new_max)
        p = tl.exp2(s - new_max[:, None])
        denom = denom * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if PRECISION == "":
            acc = tl.dot(p.to(v.dtype), v, acc, out_dtype=tl.float32)
        else:
            acc = tl.dot(p, v, acc, input_precision=PRECISION, out_dtype=tl.float32)
        run_max = new_max
    return acc, denom, run_max


@triton.jit
def attention_fwd(q_ptr, k_ptr, v_ptr, o_ptr, L, S, qk_scale,
                  D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr,
                  EVEN_L: tl.constexpr, EVEN_S: tl.constexpr, PRECISION: tl.constexpr):
    start_q = tl.program_id(0) * BQ
    head = tl.program_id(1).to(tl.int64)
    q_ptr += head * L * D
    o_ptr += head * L * D
    k_ptr += head * S * D
    v_ptr += head * S * D
    rows = start_q + tl.arange(0, BQ)
    dims = tl.arange(0, D)
    q_offs = rows[:, None] * D + dims[None, :]
    if EVEN_L:
        q = tl.load(q_ptr + q_offs)
    else:
        q = tl.load(q_ptr + q_offs, mask=rows[:, None] < L, other=0.0)
    run_max = tl.full([BQ], -1e30, dtype=tl.float32)
    denom = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, D], dtype=tl.float32)
    if CAUSAL:  # the tiles below the diagonal unmasked, then the diagonal's
        acc, denom, run_max = _key_tiles(acc, denom, run_max, q, k_ptr, v_ptr, rows, dims,
                                         0, start_q, S, qk_scale, D, BK, False, EVEN_S,
                                         PRECISION)
        acc, denom, run_max = _key_tiles(acc, denom, run_max, q, k_ptr, v_ptr, rows, dims,
                                         start_q, tl.minimum(start_q + BQ, S), S, qk_scale,
                                         D, BK, True, EVEN_S, PRECISION)
    else:
        acc, denom, run_max = _key_tiles(acc, denom, run_max, q, k_ptr, v_ptr, rows, dims,
                                         0, S, S, qk_scale, D, BK, False, EVEN_S, PRECISION)
    o = (acc / denom[:, None]).to(o_ptr.dtype.element_ty)
    if EVEN_L:
        tl.store(o_ptr + q_offs, o)
    else:
        tl.store(o_ptr + q_offs, o, mask=rows[:, None] < L)


def forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, causal: bool,
            tiles: tuple[int, int, int, int] | None = None) -> torch.Tensor:
    """Attention of [B, H, L, D] queries over [B, H, S, D] keys and values (f32 or bf16; D a
    power of two from 16 to 256; causal needs L == S). `tiles` overrides
    (BQ, BK, warps, stages); without it a choice that does not fit in shared memory falls
    back to smaller tiles."""
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    assert k.shape == v.shape == (b, h, n_k, d) and q.dtype == k.dtype == v.dtype
    assert d in (16, 32, 64, 128, 256), "the head dimension is one tile"
    assert not causal or n_q == n_k, "causal attention here needs L == S"
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    choice = tiles or TILES.get((q.dtype, d), FALLBACK)
    try:
        _launch(q, k, v, o, scale, causal, choice)
    except triton.runtime.errors.OutOfResources:
        if tiles is not None:
            raise
        _launch(q, k, v, o, scale, causal, FALLBACK)
    return o


def _launch(q, k, v, o, scale, causal, tiles) -> None:
    bq, bk, warps, stages = tiles
    assert bq % bk == 0, "a query block covers whole key tiles (the causal split)"
    b, h, n_q, d = q.shape
    n_k = k.shape[2]
    grid = (triton.cdiv(n_q, bq), b * h)
    attention_fwd[grid](q, k, v, o, n_q, n_k, scale * LOG2E, D=d, BQ=bq, BK=bk,
                        CAUSAL=causal, EVEN_L=n_q % bq == 0, EVEN_S=n_k % bk == 0,
                        PRECISION="ieee" if q.dtype == torch.float32 else "",
                        num_warps=warps, num_stages=stages)
