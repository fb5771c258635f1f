"""JAX in the same process as torch: imported on first use, inputs copied exactly, timing.

`XLA_PYTHON_CLIENT_PREALLOCATE=false` must be set before JAX is imported (benchmarks/kernels.py
does it first thing) so that JAX allocates what it uses instead of most of the GPU, leaving
the rest to torch. If JAX cannot be imported, or has no GPU backend, every JAX row is
`missing` with the reason.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from typing import Any, Callable

import torch

from .harness import Missing


class JaxSide:
    """The JAX half of the suite; `jax` and `jnp` are there once `require()` succeeded."""

    def __init__(self, gpu_only: bool = True) -> None:
        self.gpu_only = gpu_only  # False for a dry run on the CPU
        self._reason: str | None = None
        self.jax: Any = None
        self.jnp: Any = None

    def require(self) -> Any:
        """The `jax` module, or `Missing` saying why it is not usable here."""
        if self.jax is None and self._reason is None:
            try:
                import jax
                import jax.numpy as jnp
                if self.gpu_only and jax.default_backend() != "gpu":
                    self._reason = f"JAX has no GPU backend (it has {jax.default_backend()})"
                else:
                    self.jax, self.jnp = jax, jnp
            except Exception as err:  # not installed, or a broken install
                self._reason = f"jax is not importable: {type(err).__name__}: {err}"
        if self._reason is not None:
            raise Missing(self._reason)
        return self.jax

    def versions(self) -> dict[str, str]:
        try:
            jax = self.require()
        except Missing as why:
            return {"jax": str(why)}
        import jaxlib
        return {"jax": jax.__version__, "jaxlib": getattr(jaxlib, "__version__", "?"),
                "jax_device": str(jax.devices()[0].device_kind)}

    def array(self, t: torch.Tensor) -> Any:
        """An exact copy of a torch tensor on JAX's GPU (bf16 through f32, which holds it)."""
        self.require()
        dtype = {torch.float32: self.jnp.float32, torch.bfloat16: self.jnp.bfloat16}[t.dtype]
        host = t.detach().to(torch.float32).cpu().numpy()
        return self.jnp.asarray(host).astype(dtype)

    def jit(self, fn: Callable) -> Callable:
        return self.require().jit(fn)

    def precision(self, dtype: str) -> contextlib.AbstractContextManager:
        """f32 products at full precision (JAX's default on a GPU is TF32), others as they are."""
        jax = self.require()
        if dtype == "f32":
            return jax.default_matmul_precision("highest")
        return contextlib.nullcontext()

    def calls_in_precision(self, dtype: str, fn: Callable, *args: Any) -> Callable[[], Any]:
        """A zero-argument call of `fn(*args)` under `precision(dtype)` (the jit cache is
        keyed by it, so warm-up and timing must both run inside it)."""
        def call():
            with self.precision(dtype):
                return fn(*args)
        return call

    def block(self, out: Any) -> None:
        self.require().block_until_ready(out)

    def time(self, run: Callable[[], Any], rep_ms: float, rounds: int) -> float:
        """Milliseconds per call: `rounds` rounds of back-to-back calls, each synchronized once
        at its end, the median; a round lasts about rep_ms / rounds."""
        jax = self.require()
        jax.block_until_ready(run())
        start = time.perf_counter()
        for _ in range(3):
            jax.block_until_ready(run())
        estimate = (time.perf_counter() - start) / 3
        calls = max(1, int(rep_ms / 1e3 / rounds / max(estimate, 1e-6)))
        per_call = []
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(calls):
                out = run()
            jax.block_until_ready(out)
            per_call.append((time.perf_counter() - start) / calls)
        return 1e3 * statistics.median(per_call)

    def kernel_note(self, fn: Callable, *args: Any) -> str:
        """Whether a jitted Linnet entry runs a Pallas kernel: its lowered program calls Triton."""
        text = fn.lower(*args).as_text()
        if "triton" in text.lower():
            return ""
        return "no Pallas kernel in the lowered program: the op's body ran"
