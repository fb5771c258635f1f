"""Layer norm written by hand in Triton: the algorithm of `examples/layer_norm.linnet`.

The same tiles and the same two kernels, so that the benchmark sees what the compiler
loses against a person writing them:

- forward: a program normalizes RB rows as one [RB, BC] tile, BC = next_power_of_2(C) (the
  whole row) and RB = max(1, 4096 // BC); statistics in f32, the centred values zeroed past
  the row so the padding does not enter the variance, the result cast to the input's dtype
  on the store; 4 warps (8 for the backward).
- backward: one kernel reading x and dy once. About 256 programs, each taking
  STEPS = max(1, R // (256 * RB)) consecutive tiles of RB rows: for each tile mean and rstd
  are recomputed from x, dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w
  is stored, and dy * xhat and dy are accumulated in two [RB, BC] f32 tiles; at the end the
  program reduces them over the rows and adds its partial column sums into f32 dw and db
  with atomic_add (cast to the input's dtype afterwards).

`forward(x, w, b, eps)` and `backward(x, w, b, eps, dy) -> (dx, dw, db)` take contiguous
tensors of one dtype, f32 or bf16, on a CUDA device (or on the CPU under
`TRITON_INTERPRET=1`); rows up to 16384 columns, as the example's kernels.
`layer_norm(x, w, b, eps)` is the two under autograd (a `torch.autograd.Function`), as a
person who writes them would give them to users, and as Linnet's generated module calls its
kernels: the benchmark times a backward through it on the same path as Linnet's. Importing
this module needs Triton, not a GPU.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

TILE_ELEMENTS = 4096  # RB * BC for rows up to 4096 columns
BACKWARD_PROGRAMS = 256
MAX_COLUMNS = 16384


@triton.jit
def _row_stats(v, inside, n_cols, eps):
    """The centred values of a [RB, BC] f32 tile (0 outside `inside`) and each row's
    1 / sqrt(var + eps)."""
    mean = tl.sum(v, axis=1) / n_cols
    centred = tl.where(inside, v - mean[:, None], 0.0)
    var = tl.sum(centred * centred, axis=1) / n_cols
    return centred, 1.0 / tl.sqrt(var + eps)


@triton.jit
def _row_tile(first, n_rows, n_cols, RB: tl.constexpr, BC: tl.constexpr):
    """The [RB, BC] tile of rows first, first + 1, ...: its offsets, the mask of what lies
    inside the tensor, the columns and their mask."""
    rows = first + tl.arange(0, RB)
    cols = tl.arange(0, BC)
    col_ok = cols < n_cols
    inside = (rows[:, None] < n_rows) & col_ok[None, :]
    return rows[:, None] * n_cols + cols[None, :], inside, cols, col_ok


@triton.jit
def _forward_rows(x_ptr, w_ptr, b_ptr, y_ptr, n_rows, n_cols, eps,
                  RB: tl.constexpr, BC: tl.constexpr):
    offs, inside, cols, col_ok = _row_tile(tl.program_id(0) * RB, n_rows, n_cols, RB, BC)
    v = tl.load(x_ptr + offs, mask=inside, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    centred, rstd = _row_stats(v, inside, n_cols, eps)
    y = centred * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=inside)


@triton.jit
def _backward_rows(x_ptr, w_ptr, dy_ptr, dx_ptr, dw_ptr, db_ptr, n_rows, n_cols, eps,
                   RB: tl.constexpr, BC: tl.constexpr, STEPS: tl.constexpr):
    first = tl.program_id(0) * (RB * STEPS)
    cols = tl.arange(0, BC)
    col_ok = cols < n_cols
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    dw_acc = tl.zeros((RB, BC), dtype=tl.float32)
    db_acc = tl.zeros((RB, BC), dtype=tl.float32)
    for s in range(STEPS):
        offs, inside, _, _ = _row_tile(first + s * RB, n_rows, n_cols, RB, BC)
        v = tl.load(x_ptr + offs, mask=inside, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=inside, other=0.0).to(tl.float32)
        centred, rstd = _row_stats(v, inside, n_cols, eps)
        xhat = centred * rstd[:, None]
        g = dy * w[None, :]
        g_mean = tl.sum(g, axis=1) / n_cols
        gx_mean = tl.sum(g * xhat, axis=1) / n_cols
        dx = rstd[:, None] * (g - g_mean[:, None] - xhat * gx_mean[:, None])
        tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=inside)
        dw_acc += tl.where(inside, dy * xhat, 0.0)
        db_acc += dy
    tl.atomic_add(dw_ptr + cols, tl.sum(dw_acc, axis=0), mask=col_ok)
    tl.atomic_add(db_ptr + cols, tl.sum(db_acc, axis=0), mask=col_ok)


def tiles(n_cols: int) -> tuple[int, int]:
    """(RB, BC): rows per program and the padded row width, as the example's op headers."""
    bc = triton.next_power_of_2(n_cols)
    if bc > MAX_COLUMNS:
        raise ValueError(f"rows of {n_cols} columns: at most {MAX_COLUMNS}")
    return max(1, TILE_ELEMENTS // bc), bc


def steps(n_rows: int, rb: int) -> int:
    """Tiles of RB rows each backward program takes: about BACKWARD_PROGRAMS programs."""
    return max(1, n_rows // (BACKWARD_PROGRAMS * rb))


def _check(*tensors: torch.Tensor) -> None:
    x = tensors[0]
    if x.ndim != 2 or x.dtype not in (torch.float32, torch.bfloat16):
        raise TypeError("x must be a 2-D f32 or bf16 tensor")
    if any(t.dtype != x.dtype or not t.is_contiguous() for t in tensors):
        raise TypeError("the tensors must be contiguous, of one dtype")


def forward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    """y = (x - mean) / sqrt(var + eps) * w + b over the last axis of x [R, C]."""
    _check(x, w, b)
    n_rows, n_cols = x.shape
    rb, bc = tiles(n_cols)
    y = torch.empty_like(x)
    _forward_rows[(triton.cdiv(n_rows, rb),)](x, w, b, y, n_rows, n_cols, eps, RB=rb, BC=bc,
                                              num_warps=4)
    return y


def backward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float,
             dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dw, db) for the gradient dy arriving at y = forward(x, w, b, eps)."""
    _check(x, w, b, dy)
    n_rows, n_cols = x.shape
    rb, bc = tiles(n_cols)
    k = steps(n_rows, rb)
    dx = torch.empty_like(x)
    dw = torch.zeros(n_cols, dtype=torch.float32, device=x.device)
    db = torch.zeros(n_cols, dtype=torch.float32, device=x.device)
    _backward_rows[(triton.cdiv(n_rows, rb * k),)](x, w, dy, dx, dw, db, n_rows, n_cols, eps,
                                                   RB=rb, BC=bc, STEPS=k, num_warps=8)
    return dx, dw.to(x.dtype), db.to(x.dtype)


class LayerNorm(torch.autograd.Function):
    """forward and backward above under autograd: x, w, b saved, no grad for eps."""

    @staticmethod
    def forward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
        return forward(x, w, b, eps)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        x, w, b, eps = inputs
        ctx.save_for_backward(x, w, b)
        ctx.eps = eps

    @staticmethod
    def backward(ctx, dy: torch.Tensor):
        x, w, b = ctx.saved_tensors
        dx, dw, db = backward(x, w, b, ctx.eps, dy.contiguous())
        return dx, dw, db, None


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    """forward(x, w, b, eps) whose backward (through autograd) is backward()."""
    return LayerNorm.apply(x, w, b, eps)
