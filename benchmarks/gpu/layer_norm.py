"""Layer norm over the last axis, 32768 rows of C in 768, 4096, 8192; f32 and bf16 (the
statistics in f32), eps 1e-5, forward and backward.

Implementations: Linnet (`examples/layer_norm.linnet`, entries `layer_norm_any` and
`layer_norm_bf16_any`, inputs x, w, b) from the generated PyTorch module, the hand-written
Triton kernels of `benchmarks/hand/layer_norm.py` (`forward(x, w, b, eps)`,
`backward(x, w, b, eps, dy) -> (dx, dw, db)`), `F.layer_norm`, `torch.compile(F.layer_norm)`,
and the body under `jax.jit`.

The backward is timed alone: y = f(x, w, b) is computed once with inputs that require grad,
then `y.backward(dy, retain_graph=True)` is the timed call (the gradients reset to None
between calls, outside the timing). The hand kernel's `backward` is timed twice: called
directly (the kernel and its allocations alone), and as `y.backward(dy)` through its
`torch.autograd.Function` (the path Linnet's module takes, autograd's own cost included); on the
JAX side the timed call is the pullback of `jax.vjp` under `jax.jit`, its residuals computed
by the forward beforehand. GB/s counts reading x and writing y forward, and reading x and dy
and writing dx backward (w, b and their gradients are small beside them).
"""

from __future__ import annotations

from functools import partial

import torch
import torch.nn.functional as F

from .harness import Suite, Timed, hand, rel_error

CASE = "layer_norm"
ROWS = 32768
WIDTHS = (768, 4096, 8192)
EPS = 1e-5
DTYPES = {"f32": (torch.float32, "layer_norm_any", 1e-4, 2e-4),
          "bf16": (torch.bfloat16, "layer_norm_bf16_any", 2e-2, 3e-2)}  # forward, backward


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, x.shape[-1:], w, b, EPS)


def jax_body(x, w, b):
    import jax
    import jax.numpy as jnp
    xf = x.astype(jnp.float32)
    mean = xf.mean(axis=-1, keepdims=True)
    d = xf - mean
    inv = jax.lax.rsqrt((d * d).mean(axis=-1, keepdims=True) + EPS)
    return (d * inv * w.astype(jnp.float32) + b.astype(jnp.float32)).astype(x.dtype)


def run(suite: Suite) -> None:
    compiled = torch.compile(layer_norm, dynamic=False)
    for name, (dtype, entry, tol_fwd, tol_bwd) in DTYPES.items():
        for cols in WIDTHS:
            config = f"{ROWS}x{cols}"
            with suite.guard(CASE, config, name):
                inputs = _inputs(suite, cols, dtype)
                refs = _references(*inputs)
                size = ROWS * cols * inputs[0].element_size()
                with suite.group(CASE, config, name, step="forward", unit="GB/s",
                                 work=2 * size, tolerance=tol_fwd) as g:
                    forward_rows(suite, g, entry, compiled, inputs, refs[0])
                with suite.group(CASE, config, name, step="backward", unit="GB/s",
                                 work=3 * size, tolerance=tol_bwd) as g:
                    backward_rows(suite, g, entry, compiled, inputs, refs[1:])
                del inputs, refs


def _inputs(suite: Suite, cols: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    gen, on = suite.seeded(cols), suite.device
    x = torch.randn(ROWS, cols, device=on, generator=gen)
    w = 1 + 0.1 * torch.randn(cols, device=on, generator=gen)
    b = 0.1 * torch.randn(cols, device=on, generator=gen)
    dy = torch.randn(ROWS, cols, device=on, generator=gen)
    return tuple(t.to(dtype) for t in (x, w, b, dy))


def _references(x, w, b, dy) -> tuple[torch.Tensor, ...]:
    """y, dx, dw, db in float64 from the same (rounded) inputs."""
    leaves = [t.double().requires_grad_() for t in (x, w, b)]
    y = layer_norm(*leaves)
    y.backward(dy.double())
    return (y.detach(),) + tuple(t.grad for t in leaves)


def forward_rows(suite: Suite, g, entry: str, compiled, inputs, ref) -> None:
    x, w, b, _ = inputs
    check = partial(rel_error, ref=ref)
    g.add("linnet", "Linnet", lambda: partial(suite.linnet("layer_norm", entry), x, w, b), check)
    g.add("hand", "hand Triton",
          lambda: partial(hand("layer_norm", "forward").forward, x, w, b, EPS), check)
    g.add("torch", "F.layer_norm", lambda: partial(layer_norm, x, w, b), check)
    g.add("compile", "torch.compile(F.layer_norm)", lambda: partial(compiled, x, w, b), check)
    side = suite.jax
    g.add("jax_body", "jax.jit(body)",
          lambda: partial(side.jit(jax_body), *suite.jax_args(x, w, b)), check, family="jax")


def backward_rows(suite: Suite, g, entry: str, compiled, inputs, refs) -> None:
    x, w, b, dy = inputs
    check = partial(rel_error, ref=refs)
    g.add("linnet", "Linnet",
          lambda: autograd_backward(suite.linnet("layer_norm", entry), x, w, b, dy), check)
    g.add("hand", "hand Triton",
          lambda: partial(hand("layer_norm", "backward").backward, x, w, b, EPS, dy), check)
    g.add("hand_autograd", "hand Triton (autograd)",
          lambda: autograd_backward(partial(hand("layer_norm", "layer_norm").layer_norm, eps=EPS),
                                    x, w, b, dy), check)
    g.add("torch", "F.layer_norm", lambda: autograd_backward(layer_norm, x, w, b, dy), check)
    g.add("compile", "torch.compile(F.layer_norm)",
          lambda: autograd_backward(compiled, x, w, b, dy), check)
    g.add("jax_body", "jax.jit(body)", lambda: jax_backward(suite, x, w, b, dy), check,
          family="jax", note="the jitted pullback of jax.vjp")


def autograd_backward(fn, x, w, b, dy) -> Timed:
    """y = fn(x, w, b) once; the timed call is y.backward(dy), returning (dx, dw, db)."""
    leaves = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    y = fn(*leaves)

    def backward():
        y.backward(dy, retain_graph=True)
        return tuple(t.grad for t in leaves)
    return Timed(backward, grad_to_none=leaves)


def jax_backward(suite: Suite, x, w, b, dy):
    """The pullback of the jitted body, jitted, with its residuals bound."""
    side = suite.jax
    jax = side.require()
    xj, wj, bj, dyj = suite.jax_args(x, w, b, dy)
    _, pullback = jax.vjp(side.jit(jax_body), xj, wj, bj)
    return partial(side.jit(lambda pb, d: pb(d)), pullback, dyj)
