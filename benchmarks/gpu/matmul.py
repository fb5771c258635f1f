"""Matrix product at 4096^3 and at M=16, N=K=8192: f32 at full precision, TF32, and bf16.

Implementations: Linnet (`examples/matmul.linnet`: `matmul_any` under numerics
"equivalent" for full precision and "fast" for TF32, `matmul_tf32_any` as a second TF32 row
where the example has it, `matmul_bf16_any`; and at 4096^3 in TF32, `matmul_bt_any` on b
stored transposed as [N, K] beside cuBLAS on the same layout) from the generated PyTorch module; the
hand-written Triton kernel of the same algorithm (`benchmarks/hand/matmul.py`); cuBLAS
(`torch.matmul`, `torch.backends.cuda.matmul.allow_tf32` set for the precision, bf16
reductions in f32 as Linnet's); `torch.compile` of the product; `jnp.dot` under `jax.jit`
at the matching precision (HIGHEST, the TF32 algorithm, bf16 as it is). The reference is the
float64 product of the same inputs.
"""

from __future__ import annotations

from functools import partial

import torch

from .harness import Suite, hand, rel_error

CASE = "matmul"
SHAPES = ((4096, 4096, 4096), (16, 8192, 8192))  # M, N, K
# precision -> torch dtype, Linnet entry and numerics, hand kernel precision, tolerance
MODES = {"f32": (torch.float32, "matmul_any", "equivalent", "ieee", 1e-4),
         "tf32": (torch.float32, "matmul_any", "fast", "tf32", 5e-3),
         "bf16": (torch.bfloat16, "matmul_bf16_any", "equivalent", "", 1e-2)}


def product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


def run(suite: Suite) -> None:
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    compiled = torch.compile(product, dynamic=False)
    try:
        for m, n, k in SHAPES:
            config = f"{m}x{n}x{k}"
            with suite.guard(CASE, config, ""):
                inputs = {t: _inputs(suite, m, n, k, t) for t in (torch.float32, torch.bfloat16)}
                refs = {t: a.double() @ b.double() for t, (a, b) in inputs.items()}
                for mode, (dtype, *_, tolerance) in MODES.items():
                    torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
                    with suite.group(CASE, config, mode, unit="TFLOP/s", work=2 * m * n * k,
                                     tolerance=tolerance) as g:
                        add_rows(suite, g, mode, compiled, *inputs[dtype], refs[dtype])
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False


def add_rows(suite: Suite, g, mode: str, compiled, a, b, ref) -> None:
    _, entry, numerics, precision, _ = MODES[mode]
    check = partial(rel_error, ref=ref)
    g.add("linnet", "Linnet", lambda: partial(suite.linnet("matmul", entry, numerics), a, b),
          check)
    if mode == "tf32":
        g.add("linnet_tf32", "Linnet (matmul_tf32_any)",
              lambda: partial(suite.linnet("matmul", "matmul_tf32_any", numerics), a, b), check)
        if a.shape[0] >= 64:  # b given as [N, K], as a linear layer's weight: no copy
            bt = b.t().contiguous()
            g.add("linnet_bt", "Linnet (matmul_bt_any, b stored [N, K])",
                  lambda: partial(suite.linnet("matmul", "matmul_bt_any", numerics), a, bt),
                  check)
            g.add("cublas_bt", "cuBLAS (a @ bt.T, b stored [N, K])",
                  lambda: partial(product, a, bt.t()), check)
    g.add("hand", "hand Triton",
          lambda: partial(hand("matmul", "forward").forward, a, b, precision), check)
    g.add("cublas", "cuBLAS (torch.matmul)", lambda: partial(product, a, b), check)
    g.add("compile", "torch.compile(a @ b)", lambda: partial(compiled, a, b), check)
    g.add("jnp_dot", "jnp.dot (jit)", lambda: jax_dot(suite, mode, a, b), check, family="jax")


def _inputs(suite: Suite, m: int, n: int, k: int,
            dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    gen = suite.seeded(m + n + k)
    return (torch.randn(m, k, device=suite.device, generator=gen).to(dtype),
            torch.randn(k, n, device=suite.device, generator=gen).to(dtype))


def jax_dot(suite: Suite, mode: str, a: torch.Tensor, b: torch.Tensor):
    side = suite.jax
    lax = side.require().lax
    precision = {"f32": lax.Precision.HIGHEST, "tf32": lax.DotAlgorithmPreset.TF32_TF32_F32,
                 "bf16": lax.Precision.DEFAULT}[mode]
    fn = side.jit(partial(side.jnp.dot, precision=precision))
    return partial(fn, *suite.jax_args(a, b))
