"""Generated kernels on the GPU, against hand-written Triton, torch, torch.compile and eager.

Softmax: the kernel of `examples/softmax.linnet` (one row per program, a 1024-wide
tile) launched from the generated PyTorch module, against a hand-written Triton
kernel of the same structure, `torch.softmax`, `torch.compile` of the body written
in torch, and that body run eagerly; at 32768x1024 and 8192x1000 f32. Reports the
median time (triton.testing.do_bench), the effective bandwidth (one read and one
write of the matrix) and each ratio to the generated kernel, all in one run.

    python benchmarks/kernels.py            # needs a CUDA device
    python benchmarks/kernels.py --sweep    # also times the matmul kernel at other tiles

The sweep rewrites the tile sizes of both matmul ops of `examples/matmul.linnet`
(`kernel matmul_tiles<M, N, K, f32, 128, 128, 32>` and its bf16 twin) and the kernel's
launch hints (`warps(8) stages(3)`) into a temporary copy and times each variant, which
is how the example's tiles were chosen.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import torch
import triton
import triton.language as tl

from linnet.torch import load_function

ROOT = Path(__file__).resolve().parents[1]


@triton.jit
def hand_softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-1e30)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def hand_softmax(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    hand_softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=1024)
    return y


def eager_body(x: torch.Tensor) -> torch.Tensor:
    top = x.amax(dim=1, keepdim=True)
    e = torch.exp(x - top)
    return e / e.sum(dim=1, keepdim=True)


def bench(fn, x) -> float:
    return triton.testing.do_bench(lambda: fn(x), warmup=50, rep=300)


def softmax_table() -> list[str]:
    generated = load_function(str(ROOT / "examples" / "softmax.linnet"), "softmax_any")
    compiled_body = torch.compile(eager_body)
    rows = ["| shape | implementation | ms | GB/s | time / Linnet time |", "| --- | --- | --- | --- | --- |"]
    for shape in ((32768, 1024), (8192, 1000)):
        x = torch.randn(*shape, device="cuda")
        ref = torch.softmax(x, dim=1)
        assert torch.allclose(generated(x), ref, atol=1e-6, rtol=1e-5)
        assert torch.allclose(hand_softmax(x), ref, atol=1e-6, rtol=1e-5)
        times = {
            "Linnet kernel (generated)": bench(generated, x),
            "hand-written Triton": bench(hand_softmax, x),
            "torch.softmax": bench(lambda t: torch.softmax(t, dim=1), x),
            "torch.compile(body)": bench(compiled_body, x),
            "eager body": bench(eager_body, x),
        }
        moved = 2 * x.numel() * x.element_size()
        ours = times["Linnet kernel (generated)"]
        for name, ms in times.items():
            rows.append(f"| {shape[0]}x{shape[1]} | {name} | {ms:.4f} | "
                        f"{moved / ms / 1e6:,.0f} | {ms / ours:.2f} |")
    return rows


MATMUL_MODES = (  # label, entry, numerics, torch dtype, cuBLAS allowed TF32
    ("f32 full precision", "matmul_any", "equivalent", torch.float32, False),
    ("f32 TF32", "matmul_any", "fast", torch.float32, True),
    ("bf16", "matmul_bf16_any", "equivalent", torch.bfloat16, False),
)
FLOPS = 2 * 4096 ** 3


def matmul_inputs(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(0)
    return tuple(torch.randn(4096, 4096, device="cuda", generator=gen).to(dtype)
                 for _ in range(2))


def matmul_table(path: Path = ROOT / "examples" / "matmul.linnet") -> list[str]:
    """The matmul example's kernel at 4096^3, f32 (full precision and TF32) and bf16,
    against cuBLAS (torch.matmul) at the same precision."""
    rows = ["| precision | implementation | ms | TFLOP/s | time / Linnet time |",
            "| --- | --- | --- | --- | --- |"]
    for label, entry, numerics, dtype, tf32 in MATMUL_MODES:
        ours = load_function(str(path), entry, numerics=numerics)
        a, b = matmul_inputs(dtype)
        torch.backends.cuda.matmul.allow_tf32 = tf32
        ref = (a.double() @ b.double())
        err = ((ours(a, b).double() - ref).abs().max() / ref.abs().max()).item()
        t_ours, t_blas = bench(lambda x: ours(x, b), a), bench(lambda x: x @ b, a)
        for name, ms in ((f"Linnet kernel (max error {err:.1e} of max)", t_ours),
                         ("cuBLAS", t_blas)):
            rows.append(f"| {label} | {name} | {ms:.3f} | {FLOPS / ms / 1e9:.1f} | "
                        f"{ms / t_ours:.2f} |")
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


TILES = [(64, 64, 32, 4, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 128, 32, 4, 4),
         (128, 128, 64, 4, 3), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (256, 128, 64, 8, 3),
         (128, 256, 32, 8, 4), (256, 128, 32, 8, 4), (128, 128, 32, 8, 4), (64, 256, 32, 4, 4)]


def matmul_variant(bm: int, bn: int, bk: int, warps: int, stages: int) -> Path:
    """A copy of the matmul example with other tiles (for both ops) and launch hints."""
    text = (ROOT / "examples" / "matmul.linnet").read_text()
    text, ops = re.subn(r"matmul_tiles<M, N, K, (f32|bf16), \d+, \d+, \d+>",
                        rf"matmul_tiles<M, N, K, \1, {bm}, {bn}, {bk}>", text)
    text, hints = re.subn(r"warps\(\d+\) stages\(\d+\)", f"warps({warps}) stages({stages})", text)
    assert (ops, hints) == (2, 1), "the matmul example no longer has the expected shape"
    path = Path(tempfile.mkdtemp()) / f"matmul_{bm}_{bn}_{bk}_{warps}_{stages}.linnet"
    path.write_text(text)
    return path


def sweep_table() -> list[str]:
    """The matmul kernel at 4096^3 for each tile choice and precision (TFLOP/s)."""
    rows = ["| BM, BN, BK, warps, stages | " + " | ".join(m[0] for m in MATMUL_MODES) + " |",
            "| --- | --- | --- | --- |"]
    inputs = {dtype: matmul_inputs(dtype) for dtype in (torch.float32, torch.bfloat16)}
    for tiles in TILES:
        cells = []
        path = matmul_variant(*tiles)
        for _, entry, numerics, dtype, _ in MATMUL_MODES:
            a, b = inputs[dtype]
            try:
                fn = load_function(str(path), entry, numerics=numerics)
                cells.append(f"{FLOPS / bench(lambda x: fn(x, b), a) / 1e9:.1f}")
            except Exception as err:  # a variant may not fit in shared memory
                cells.append(f"failed: {type(err).__name__}")
        rows.append(f"| {', '.join(map(str, tiles))} | " + " | ".join(cells) + " |")
    return rows


def main() -> int:
    if not torch.cuda.is_available():
        print("benchmarks/kernels.py needs a CUDA device", file=sys.stderr)
        return 1
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"triton {triton.__version__}\n")
    print("\n".join(softmax_table()))
    print()
    print("\n".join(matmul_table()))
    if "--sweep" in sys.argv[1:]:
        print()
        print("\n".join(sweep_table()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
