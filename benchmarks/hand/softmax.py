"""Row softmax written by hand in Triton: the algorithm of `examples/softmax.linnet`.

One program per row loads the whole row as one tile of `BLOCK` columns (a power of two at
least the row's length, masked past it with -1e30 so the padding never wins the maximum and
adds exp(-huge) = 0 to the sum), then reduces and stores the row. The benchmark compares the
generated kernel with this one to see what the compiler loses against a person writing the
same kernel.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-1e30)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def forward(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis of a contiguous 2-D f32 tensor."""
    assert x.ndim == 2 and x.dtype == torch.float32, "a 2-D f32 tensor"
    x = x.contiguous()
    y = torch.empty_like(x)
    block = max(16, triton.next_power_of_2(x.shape[1]))
    softmax_rows[(x.shape[0],)](x, y, x.shape[1], BLOCK=block)
    return y
