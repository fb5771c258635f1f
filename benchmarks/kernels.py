"""Generated kernels on the GPU, against hand-written Triton, torch, torch.compile and eager.

Softmax: the kernel of `examples/softmax.linnet` (one row per program, a 1024-wide
tile) launched from the generated PyTorch module, against a hand-written Triton
kernel of the same structure, `torch.softmax`, `torch.compile` of the body written
in torch, and that body run eagerly; at 32768x1024 and 8192x1000 f32. Reports the
median time (triton.testing.do_bench), the effective bandwidth (one read and one
write of the matrix) and each ratio to the generated kernel, all in one run.

    python benchmarks/kernels.py            # needs a CUDA device
    python benchmarks/kernels.py --sweep    # also times the matmul kernel at other tiles

The sweep rewrites the tile sizes and launch hints of `examples/matmul.linnet`
(`kernel matmul_tiles<M, N, K, 64, 64, 32>`, `warps(4) stages(3)`) into a
temporary copy and times each variant, which is how the example's tiles were chosen.
"""

from __future__ import annotations

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


def matmul_table() -> list[str]:
    """The matmul example's kernel (64x64x32 tiles) at 4096^3 f32, against cuBLAS."""
    path = str(ROOT / "examples" / "matmul.linnet")
    exact = load_function(path, "matmul_any")
    fast = load_function(path, "matmul_any", numerics="fast")
    a, b = (torch.randn(4096, 4096, device="cuda") for _ in range(2))
    flops = 2 * 4096 ** 3
    rows = ["| precision | implementation | ms | TFLOP/s | time / Linnet time |",
            "| --- | --- | --- | --- | --- |"]
    for label, ours, tf32 in (("f32 full precision", exact, False), ("f32 TF32", fast, True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        ref = a @ b
        err = (ours(a, b) - ref).abs().max().item()
        t_ours, t_blas = bench(lambda x: ours(x, b), a), bench(lambda x: x @ b, a)
        for name, ms in ((f"Linnet kernel (max diff {err:.1e})", t_ours), ("cuBLAS", t_blas)):
            rows.append(f"| {label} | {name} | {ms:.3f} | {flops / ms / 1e9:.1f} | "
                        f"{ms / t_ours:.2f} |")
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


TILES = [(64, 64, 32, 4, 3), (128, 128, 32, 4, 3), (128, 128, 32, 8, 3), (128, 128, 64, 8, 3),
         (128, 256, 32, 8, 3), (128, 256, 64, 8, 3), (256, 128, 32, 8, 3), (128, 64, 32, 4, 4),
         (64, 128, 32, 4, 4), (128, 128, 64, 4, 4), (128, 128, 32, 8, 4), (128, 128, 16, 8, 5)]


def matmul_variant(bm: int, bn: int, bk: int, warps: int, stages: int) -> Path:
    """A copy of the matmul example with other tiles and launch hints."""
    text = (ROOT / "examples" / "matmul.linnet").read_text()
    for old, new in (("matmul_tiles<M, N, K, 64, 64, 32>", f"matmul_tiles<M, N, K, {bm}, {bn}, {bk}>"),
                     ("warps(4) stages(3)", f"warps({warps}) stages({stages})")):
        assert old in text, old
        text = text.replace(old, new)
    path = Path(tempfile.mkdtemp()) / f"matmul_{bm}_{bn}_{bk}_{warps}_{stages}.linnet"
    path.write_text(text)
    return path


def sweep_table() -> list[str]:
    """The matmul kernel at 4096^3 for each tile choice, f32 full precision and TF32."""
    a, b = (torch.randn(4096, 4096, device="cuda") for _ in range(2))
    flops = 2 * 4096 ** 3
    rows = ["| BM, BN, BK, warps, stages | f32 ieee TFLOP/s | f32 TF32 TFLOP/s |", "| --- | --- | --- |"]
    for tiles in TILES:
        cells = []
        for numerics in ("equivalent", "fast"):
            try:
                fn = load_function(str(matmul_variant(*tiles)), "matmul_any", numerics=numerics)
                cells.append(f"{flops / bench(lambda x: fn(x, b), a) / 1e9:.1f}")
            except Exception as err:  # a variant may not fit in shared memory
                cells.append(f"failed: {type(err).__name__}")
        rows.append(f"| {', '.join(map(str, tiles))} | {cells[0]} | {cells[1]} |")
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
