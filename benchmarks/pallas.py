"""Generated Pallas kernels on the GPU, against `jax.jit` of the op body and JAX's own.

Softmax (`examples/softmax.linnet`) at 32768x1024 and 8192x1000 f32 against the body under
`jax.jit` (the same entry compiled with `numerics="exact"`) and `jax.nn.softmax`; the
matmul example at 4096^3 (f32 at full precision, and bf16) against `jnp.matmul`. Times per
call come from calls dispatched back to back and synchronized once (see `bench`), all in
one process.

    python benchmarks/pallas.py            # needs a GPU backend for JAX
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp

from linnet.jax import load_function

ROOT = Path(__file__).resolve().parents[1]


def bench(fn, *args, reps: int = 50) -> float:
    """Milliseconds per call of `fn(*args)`, compiled before timing: the median of five
    rounds, each `reps` calls dispatched back to back and synchronized once at the end (so
    JAX's per-call dispatch overlaps the GPU's work instead of adding to it)."""
    jax.block_until_ready(fn(*args))
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(reps):
            out = fn(*args)
        jax.block_until_ready(out)
        rounds.append((time.perf_counter() - start) / reps)
    return 1e3 * statistics.median(rounds)


def softmax_table() -> list[str]:
    path = str(ROOT / "examples" / "softmax.linnet")
    kernel = jax.jit(load_function(path, "softmax_any"))
    body = jax.jit(load_function(path, "softmax_any", numerics="exact"))
    reference = jax.jit(lambda x: jax.nn.softmax(x, axis=1))
    rows = ["| shape | implementation | ms | GB/s | time / Linnet time |",
            "| --- | --- | --- | --- | --- |"]
    for shape in ((32768, 1024), (8192, 1000)):
        x = jax.random.normal(jax.random.PRNGKey(0), shape, dtype=jnp.float32)
        assert jnp.allclose(kernel(x), reference(x), atol=1e-6, rtol=1e-5)
        times = {"Linnet Pallas kernel": bench(kernel, x), "jax.jit(body)": bench(body, x),
                 "jax.nn.softmax (jit)": bench(reference, x)}
        moved = 2 * x.size * 4
        ours = times["Linnet Pallas kernel"]
        rows += [f"| {shape[0]}x{shape[1]} | {name} | {ms:.4f} | {moved / ms / 1e6:,.0f} | "
                 f"{ms / ours:.2f} |" for name, ms in times.items()]
    return rows


def matmul_table() -> list[str]:
    path = str(ROOT / "examples" / "matmul.linnet")
    flops = 2 * 4096 ** 3
    rows = ["| precision | implementation | ms | TFLOP/s | time / Linnet time |",
            "| --- | --- | --- | --- | --- |"]
    for label, entry, dtype, precision in (
            ("f32 full precision", "matmul_any", jnp.float32, jax.lax.Precision.HIGHEST),
            ("bf16", "matmul_bf16_any", jnp.bfloat16, jax.lax.Precision.DEFAULT)):
        a, b = (jax.random.normal(jax.random.PRNGKey(k), (4096, 4096)).astype(dtype)
                for k in (1, 2))
        ours = jax.jit(load_function(path, entry))
        xla = jax.jit(lambda a, b: jnp.matmul(a, b, precision=precision))
        err = float(jnp.max(jnp.abs(ours(a, b).astype(jnp.float32)
                                    - xla(a, b).astype(jnp.float32))))
        t_ours, t_xla = bench(ours, a, b, reps=20), bench(xla, a, b, reps=20)
        rows += [f"| {label} | Linnet Pallas kernel (max diff {err:.1e}) | {t_ours:.3f} | "
                 f"{flops / t_ours / 1e9:.1f} | 1.00 |",
                 f"| {label} | jnp.matmul (XLA, cuBLAS) | {t_xla:.3f} | "
                 f"{flops / t_xla / 1e9:.1f} | {t_xla / t_ours:.2f} |"]
    return rows


def main() -> int:
    if jax.default_backend() != "gpu":
        print("benchmarks/pallas.py needs a GPU backend for JAX", file=sys.stderr)
        return 1
    print(f"# {jax.devices()[0].device_kind}, jax {jax.__version__}\n")
    print("\n".join(softmax_table()))
    print()
    print("\n".join(matmul_table()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
