"""Fused attention written by hand in Triton: the algorithm of `examples/attention.linnet`.

o = softmax(q k^T * scale) v for q[B, H, L, D] and k, v[B, H, S, D], contiguous, f32 or bf16;
causal attention (L == S) lets query i see keys j <= i only. The algorithm is flash
attention's forward pass (online softmax), exactly as the example's kernels write it:

* a grid of (ceil(L / BQ), H, B) programs, one per block of BQ queries of one head of one
  batch entry; each loads its [BQ, D] query tile once (D is the whole head: 16 to 128);
* a loop over key blocks of BK keys keeps, per query row, a running maximum m, a running
  denominator l and an f32 accumulator [BQ, D]: each block computes the scaled scores
  s = q k^T * scale (a dot), m' = max(m, rowmax(s)), p = exp(s - m'), rescales the old
  state by alpha = exp(m - m') and adds l += rowsum(p), acc = acc * alpha + p v (a dot into
  the accumulator, with p rounded to the input dtype first: bf16 for bf16 inputs);
  o = acc / l at the end, rounded to the input dtype;
* causal: program p walks the key blocks 0 .. p * BQ / BK, wholly below the diagonal, with
  no mask at all, then the BQ / BK blocks the diagonal crosses (clamped at ceil(L / BK))
  with the mask j <= i; blocks above the diagonal are never read;
* f32 products at full precision (`input_precision="ieee"`), or TF32 with
  `precision="tf32"` (the example's `--numerics fast`); bf16 products are exact, summed in f32.

Tiles and launch hints are read from the example (each op's `kernel ...<..., BQ, BK>` and
the kernels' `warps(n) stages(m)`), so this kernel always runs at the example's tiles. Where
a hand-written kernel naturally differs: masks for ragged sequences are compiled in only
when L or S is not a multiple of its block (constexpr flags), the scale is a float argument,
and reductions use Triton's own max and sum.

`forward(q, k, v, scale, causal)` launches it. Importing this module needs neither a GPU nor
Triton; `forward` needs CUDA tensors, or CPU tensors under `TRITON_INTERPRET=1` (set before
Triton is imported), where Triton's interpreter runs it (bf16 inputs then as f32 copies, as
generated modules do there: the interpreter computes bf16 wrongly).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "attention.linnet"
HEADS = (16, 32, 64, 128)  # head dims the example's kernels take (D >= 16, 128 % D == 0)

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - no Triton: `forward` says so
    triton = None


@lru_cache(maxsize=None)
def tiles(dtype: str, causal: bool) -> tuple[int, int, int, int]:
    """(BQ, BK, warps, stages) of the example's op for `dtype` ("f32" or "bf16")."""
    text = EXAMPLE.read_text()
    kernel = "causal_attention_blocks" if causal else "attention_blocks"
    found = re.search(rf"kernel {kernel}<[^<>]*, {dtype}, (\d+), (\d+)>", text)
    hints = re.search(rf"kernel {kernel}<[^{{]*warps\((\d+)\) stages\((\d+)\)", text)
    if found is None or hints is None:
        raise RuntimeError(f"{EXAMPLE.name} no longer binds {kernel} for {dtype} as expected")
    return int(found[1]), int(found[2]), int(hints[1]), int(hints[2])


if triton is not None:

    @triton.jit
    def _key_blocks(acc, denom, run_max, q, k_ptr, v_ptr, base, rows, dims, scale, S, lo, hi,
                    D: tl.constexpr, BK: tl.constexpr, MASK_KEYS: tl.constexpr,
                    CAUSAL: tl.constexpr, PRECISION: tl.constexpr):
        """Fold the key blocks lo .. hi into the online-softmax state."""
        for t in range(lo, hi):
            keys = t * BK + tl.arange(0, BK)
            offs = base + keys[:, None] * D + dims[None, :]
            if MASK_KEYS:
                inside = keys[:, None] < S
                k = tl.load(k_ptr + offs, mask=inside, other=0.0)
                v = tl.load(v_ptr + offs, mask=inside, other=0.0)
            else:
                k = tl.load(k_ptr + offs)
                v = tl.load(v_ptr + offs)
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
            if CAUSAL:
                s = tl.where(keys[None, :] <= rows[:, None], s, -1e30)
            elif MASK_KEYS:
                s = tl.where(keys[None, :] < S, s, -1e30)
            new_max = tl.maximum(run_max, tl.max(s, 1))
            alpha = tl.exp(run_max - new_max)
            p = tl.exp(s - new_max[:, None])
            denom = denom * alpha + tl.sum(p, 1)
            acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=PRECISION)
            run_max = new_max
        return acc, denom, run_max

    @triton.jit
    def _attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, scale, L, S, D: tl.constexpr,
                          BQ: tl.constexpr, BK: tl.constexpr, CAUSAL: tl.constexpr,
                          EVEN_L: tl.constexpr, EVEN_S: tl.constexpr,
                          PRECISION: tl.constexpr):
        block = tl.program_id(0)
        head = tl.program_id(1)
        batch = tl.program_id(2)
        pair = batch * tl.num_programs(1) + head
        rows = block * BQ + tl.arange(0, BQ)
        dims = tl.arange(0, D)
        q_offs = pair * L * D + rows[:, None] * D + dims[None, :]
        if EVEN_L:
            q = tl.load(q_ptr + q_offs)
        else:
            q = tl.load(q_ptr + q_offs, mask=rows[:, None] < L, other=0.0)
        run_max = tl.full([BQ], -1e30, tl.float32)
        denom = tl.zeros([BQ], tl.float32)
        acc = tl.zeros([BQ, D], tl.float32)
        base = pair * S * D
        if CAUSAL:
            diagonal = block * (BQ // BK)
            acc, denom, run_max = _key_blocks(acc, denom, run_max, q, k_ptr, v_ptr, base, rows,
                                              dims, scale, S, 0, diagonal, D, BK, False, False,
                                              PRECISION)
            past = tl.minimum(diagonal + BQ // BK, tl.cdiv(S, BK))
            acc, denom, run_max = _key_blocks(acc, denom, run_max, q, k_ptr, v_ptr, base, rows,
                                              dims, scale, S, diagonal, past, D, BK,
                                              not EVEN_S, True, PRECISION)
        else:
            acc, denom, run_max = _key_blocks(acc, denom, run_max, q, k_ptr, v_ptr, base, rows,
                                              dims, scale, S, 0, tl.cdiv(S, BK), D, BK,
                                              not EVEN_S, False, PRECISION)
        o = (acc / denom[:, None]).to(o_ptr.dtype.element_ty)
        if EVEN_L:
            tl.store(o_ptr + q_offs, o)
        else:
            tl.store(o_ptr + q_offs, o, mask=rows[:, None] < L)


def forward(q, k, v, scale: float, causal: bool, precision: str = "ieee"):
    """Attention of contiguous [B, H, L, D] queries and [B, H, S, D] keys and values (S == L
    when `causal`), f32 or bf16, on CUDA (or on the CPU in Triton's interpreter). f32
    products use `precision`: "ieee" (full precision) or "tf32"."""
    import torch
    if triton is None:
        raise RuntimeError("benchmarks/hand/attention.py needs Triton")
    dtype = {torch.float32: "f32", torch.bfloat16: "bf16"}.get(q.dtype)
    if dtype is None or not (q.dtype == k.dtype == v.dtype):
        raise ValueError("q, k and v must all be f32 or all bf16")
    if not all(x.is_contiguous() and x.dim() == 4 for x in (q, k, v)):
        raise ValueError("q, k and v must be contiguous [B, H, length, D] tensors")
    on_cpu = os.environ.get("TRITON_INTERPRET") == "1"
    if not on_cpu and not all(x.is_cuda for x in (q, k, v)):
        raise ValueError("q, k and v must be CUDA tensors (or TRITON_INTERPRET=1)")
    b, h, n, d = q.shape
    s = k.shape[2]
    if k.shape != (b, h, s, d) or v.shape != k.shape or d not in HEADS or (causal and s != n):
        raise ValueError(f"shapes {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}: need "
                         f"[B, H, L, D] and [B, H, S, D] with D in {HEADS} (S == L if causal)")
    bq, bk, warps, stages = tiles(dtype, causal)
    if on_cpu and dtype == "bf16":  # the interpreter computes bf16 wrongly: f32 copies
        q, k, v = (x.float() for x in (q, k, v))
    o = torch.empty_like(q)
    grid = (triton.cdiv(n, bq), h, b)
    _attention_kernel[grid](q, k, v, o, float(scale), n, s, D=d, BQ=bq, BK=bk, CAUSAL=causal,
                            EVEN_L=n % bq == 0, EVEN_S=s % bk == 0,
                            PRECISION=precision if dtype == "f32" else None,
                            num_warps=warps, num_stages=stages)
    return o.to(torch.bfloat16) if dtype == "bf16" else o
