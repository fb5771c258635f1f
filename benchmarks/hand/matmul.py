"""Tiled matrix product written by hand in Triton: the algorithm of `examples/matmul.linnet`.

A 2-D grid over (M tiles of BM rows, N tiles of BN columns); each program keeps a [BM, BN]
f32 accumulator and walks K in steps of BK, loading a [BM, BK] tile of `a` and a [BK, BN]
tile of `b` (0 outside the matrices) and adding their `tl.dot` into the accumulator; the
edges of `c` are masked on the store. The tiles and launch hints are the example's: f32
128x128x32, bf16 128x256x64, 8 warps and 3 stages for both. As a person would write it, the
mask of a side is dropped (a constexpr) when its size is a multiple of its tile, which the
generated kernel gets by proving the mask always true.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

# dtype -> (BM, BN, BK, warps, stages), as in examples/matmul.linnet
TILES = {torch.float32: (128, 128, 32, 8, 3), torch.bfloat16: (128, 256, 64, 8, 3)}


@triton.jit
def matmul_tiles(a_ptr, b_ptr, c_ptr, M, N, K,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 EVEN_M: tl.constexpr, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr,
                 PRECISION: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    steps = tl.arange(0, BK)
    row_ok = (rows < M) | EVEN_M
    col_ok = (cols < N) | EVEN_N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for t in range(0, tl.cdiv(K, BK)):
        ks = t * BK + steps
        k_ok = (ks < K) | EVEN_K
        a_offs = rows[:, None] * K + ks[None, :]
        b_offs = ks[:, None] * N + cols[None, :]
        if EVEN_M and EVEN_K:
            a_tile = tl.load(a_ptr + a_offs)
        else:
            a_tile = tl.load(a_ptr + a_offs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        if EVEN_K and EVEN_N:
            b_tile = tl.load(b_ptr + b_offs)
        else:
            b_tile = tl.load(b_ptr + b_offs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        if PRECISION == "":  # bf16 tiles: the matrix units take them as they are
            acc = tl.dot(a_tile, b_tile, acc, out_dtype=tl.float32)
        else:
            acc = tl.dot(a_tile, b_tile, acc, input_precision=PRECISION, out_dtype=tl.float32)
    c_offs = rows[:, None] * N + cols[None, :]
    c = acc.to(c_ptr.dtype.element_ty)
    if EVEN_M and EVEN_N:
        tl.store(c_ptr + c_offs, c)
    else:
        tl.store(c_ptr + c_offs, c, mask=row_ok[:, None] & col_ok[None, :])


def forward(a: torch.Tensor, b: torch.Tensor, precision: str = "ieee",
            tiles: tuple[int, int, int, int, int] | None = None) -> torch.Tensor:
    """`a @ b` for f32 (`precision` "ieee" for full precision, "tf32") or bf16 matrices,
    accumulated in f32 and rounded once to the inputs' dtype. `tiles` overrides
    (BM, BN, BK, warps, stages)."""
    assert a.ndim == b.ndim == 2 and a.shape[1] == b.shape[0] and a.dtype == b.dtype
    bm, bn, bk, warps, stages = tiles or TILES[a.dtype]
    a, b = a.contiguous(), b.contiguous()
    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
    matmul_tiles[grid](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk,
                       EVEN_M=m % bm == 0, EVEN_N=n % bn == 0, EVEN_K=k % bk == 0,
                       PRECISION=precision if a.dtype == torch.float32 else "",
                       num_warps=warps, num_stages=stages)
    return c
