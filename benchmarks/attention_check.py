"""Fused attention on a CUDA device: the example's generated kernels against the hand-written
Triton kernel of the same algorithm (`benchmarks/hand/attention.py`) and torch's
`scaled_dot_product_attention`.

For q, k, v of [B, H, L, D] with L = S (default B=4, H=16, L=4096), D in 64 and 128, causal
and not, f32 (full precision, and TF32 as `--numerics fast`) and bf16, it runs the generated
entry of `examples/attention.linnet` (`attention_any`, `attention_causal_any`,
`attention_bf16_any`, `attention_causal_bf16_any`, with scale 1 / sqrt(D)), the hand kernel
and SDPA, and compares each with a float64 reference computed one batch entry at a time: the
error is max |out - reference| / max |reference|, held to 2e-4 for f32 at full precision and
2e-2 for TF32 and bf16. It also checks that the generated module holds the Triton kernel (so
the kernel, not the op's body, ran). `--time` adds the median time of each
(`triton.testing.do_bench`) and TFLOP/s (4 B H L S D flops, half of it when causal).

    python benchmarks/attention_check.py                 # exit status 1 on any failure
    python benchmarks/attention_check.py --time
    python benchmarks/attention_check.py --small         # B=1, H=2, L=S=512, quick
    python benchmarks/attention_check.py --device cpu --shape 1 2 200 --heads 64
                                 # Triton's interpreter on the CPU (slow: small shapes only)
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from linnet.torch import load_function  # noqa: E402

EXAMPLE = ROOT / "examples" / "attention.linnet"
# (label, entry suffix, dtype, numerics, hand precision, tolerance)
MODES = [("f32", "", torch.float32, "equivalent", "ieee", 2e-4),
         ("f32 tf32", "", torch.float32, "fast", "tf32", 2e-2),
         ("bf16", "_bf16", torch.bfloat16, "equivalent", None, 2e-2)]


def _hand():
    spec = importlib.util.spec_from_file_location("hand_attention",
                                                  ROOT / "benchmarks" / "hand" / "attention.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference(q, k, v, scale: float, causal: bool) -> torch.Tensor:
    """softmax(q k^T * scale) v in float64, one batch entry at a time."""
    out = torch.empty(q.shape, dtype=torch.float64, device=q.device)
    n = q.shape[2]
    keep = torch.tril(torch.ones(n, n, dtype=torch.bool, device=q.device)) if causal else None
    for b in range(q.shape[0]):
        s = torch.einsum("hld,hsd->hls", q[b].double(), k[b].double()) * scale
        if causal:
            s = s.masked_fill(~keep, float("-inf"))
        out[b] = torch.einsum("hls,hsd->hld", torch.softmax(s, dim=-1), v[b].double())
        del s
    return out


def error(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.double() - ref).abs().max() / ref.abs().max()).item()


def check(shape: tuple[int, int, int, int], timing: bool, device: str = "cuda") -> bool:
    import triton
    hand = _hand()
    b, h, n, d = shape
    scale = 1.0 / math.sqrt(d)
    gen = torch.Generator(device=device).manual_seed(d)
    base = [torch.randn(shape, device=device, generator=gen) for _ in range(3)]
    ok = True
    for causal in (False, True):
        for label, suffix, dtype, numerics, precision, tol in MODES:
            q, k, v = (x.to(dtype).contiguous() for x in base)
            entry = f"attention{'_causal' if causal else ''}{suffix}_any"
            ours = load_function(str(EXAMPLE), entry, numerics=numerics)
            values = {"B": b, "H": h, "L": n, "D": d} | ({} if causal else {"S": n})
            chosen = "@triton.jit" in ours.source(**values)
            torch.backends.cuda.matmul.allow_tf32 = numerics == "fast"
            runs = {"linnet": lambda: ours(q, k, v, scale),
                    "hand": lambda: hand.forward(q, k, v, scale, causal,
                                                 precision or "ieee"),
                    "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, scale=scale,
                                                                   is_causal=causal)}
            ref = reference(q, k, v, scale, causal)
            outs = {name: run() for name, run in runs.items()}
            errors = {name: error(o, ref) for name, o in outs.items()}
            passed = chosen and errors["linnet"] <= tol and errors["hand"] <= tol
            ok &= passed
            line = (f"{'causal' if causal else 'full':6} {label:8} D={d:<3} "
                    f"{'ok  ' if passed else 'FAIL'} kernel chosen: {chosen}; error vs f64: "
                    + ", ".join(f"{k} {e:.1e}" for k, e in errors.items())
                    + f" (tolerance {tol:.0e}); linnet vs hand "
                    f"{error(outs['linnet'], outs['hand'].double()):.1e}")
            if timing:
                flops = 4 * b * h * n * n * d / (2 if causal else 1)
                times = {name: triton.testing.do_bench(run, warmup=25, rep=200)
                         for name, run in runs.items()}
                line += "; ms " + ", ".join(
                    f"{k} {t:.3f} ({flops / t / 1e9:.0f} TFLOP/s)" for k, t in times.items())
            print(line, flush=True)
            del ref, outs
    torch.backends.cuda.matmul.allow_tf32 = False
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", action="store_true", help="also time each implementation")
    parser.add_argument("--small", action="store_true", help="B=1, H=2, L=S=512")
    parser.add_argument("--heads", type=int, nargs="*", default=[64, 128], metavar="D")
    parser.add_argument("--shape", type=int, nargs=3, metavar=("B", "H", "L"),
                        help="batch entries, heads and sequence length (L = S)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="cpu: every kernel in Triton's interpreter (no timing)")
    args = parser.parse_args()
    if args.device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before anything imports Triton
    elif not torch.cuda.is_available():
        print("benchmarks/attention_check.py needs a CUDA device", file=sys.stderr)
        return 1
    import triton
    where = torch.cuda.get_device_name() if args.device == "cuda" else "CPU (interpreter)"
    print(f"# {where}, torch {torch.__version__}, triton {triton.__version__}")
    b, h, n = args.shape or ((1, 2, 512) if args.small else (4, 16, 4096))
    timing = args.time and args.device == "cuda"
    ok = all([check((b, h, n, d), timing, args.device) for d in args.heads])
    print("all agree" if ok else "FAILURES above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
