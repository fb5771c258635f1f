"""`--sweep`: the matmul example's kernel at 4096^3 at other tiles, how its tiles were chosen.

Each variant rewrites the tile sizes of both matmul ops of `examples/matmul.linnet`
(`kernel matmul_tiles<M, N, K, f32, 128, 128, 32, 8>` and its bf16 twin) and the kernel's
launch hints (`warps(8) stages(3)`) into a temporary copy, and times the kernel in f32 at
full precision, TF32 and bf16 (TFLOP/s). A variant that does not compile or fit reports
the error's type. One kernel serves both ops, so warps and stages are shared.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import torch
import triton.testing

from .harness import EXAMPLES, Settings, describe

SIZE = 4096
MODES = (("f32 full precision", "matmul_any", "equivalent", torch.float32),
         ("f32 TF32", "matmul_any", "fast", torch.float32),
         ("bf16", "matmul_bf16_any", "equivalent", torch.bfloat16))
TILES = [(64, 64, 32, 4, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 128, 32, 4, 4),
         (128, 128, 64, 4, 3), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (256, 128, 64, 8, 3),
         (128, 256, 32, 8, 4), (256, 128, 32, 8, 4), (128, 128, 32, 8, 4), (64, 256, 32, 4, 4)]


def variant(bm: int, bn: int, bk: int, warps: int, stages: int) -> Path:
    """A copy of the matmul example with other tiles (for both ops) and launch hints."""
    text = (EXAMPLES / "matmul.linnet").read_text()
    text, ops = re.subn(r"matmul_tiles<M, N, K, (f32|bf16), \d+, \d+, \d+, (\d+)>",
                        rf"matmul_tiles<M, N, K, \1, {bm}, {bn}, {bk}, \2>", text)
    text, hints = re.subn(r"(pub kernel matmul_tiles<[^\n]*)warps\(\d+\) stages\(\d+\)",
                          rf"\g<1>warps({warps}) stages({stages})", text)
    if (ops, hints) != (2, 1):
        raise ValueError("examples/matmul.linnet no longer has the two ops and one kernel "
                         "the sweep rewrites")
    path = Path(tempfile.mkdtemp()) / f"matmul_{bm}_{bn}_{bk}_{warps}_{stages}.linnet"
    path.write_text(text)
    return path


def sweep(settings: Settings) -> list[dict]:
    """One record per tile choice: the tiles and TFLOP/s (or the error) per precision."""
    from linnet.torch import load_function
    gen = torch.Generator(device="cuda").manual_seed(0)
    inputs = {dtype: tuple(torch.randn(SIZE, SIZE, device="cuda", generator=gen).to(dtype)
                           for _ in range(2)) for dtype in (torch.float32, torch.bfloat16)}
    records = []
    for tiles in TILES:
        record: dict = {"tiles": list(tiles)}
        try:
            path = variant(*tiles)
        except Exception as err:
            record["error"] = describe(err)
            records.append(record)
            break
        for label, entry, numerics, dtype in MODES:
            a, b = inputs[dtype]
            try:
                fn = load_function(str(path), entry, numerics=numerics)
                fn(a, b)
                ms = triton.testing.do_bench(lambda: fn(a, b), warmup=settings.warmup_ms,
                                             rep=settings.rep_ms, return_mode="median")
                record[label] = 2 * SIZE ** 3 / ms / 1e9
            except Exception as err:  # a variant may not fit in shared memory
                record[label] = f"failed: {type(err).__name__}"
        records.append(record)
    return records

