"""Row softmax, f32, at 8192x1000 (rows shorter than the tile) and 32768x1024.

Implementations: Linnet's kernel (`examples/softmax.linnet`, entry `softmax_any`) from the
generated PyTorch module, the hand-written Triton kernel of the same algorithm
(`benchmarks/hand/softmax.py`), `torch.softmax`, `torch.compile` of the body written in
torch, that body eagerly, and on the JAX side `jax.nn.softmax` and the body under `jax.jit`
and Linnet's Pallas kernel (`linnet.jax.load_function`). GB/s counts one read and one write
of the matrix.
"""

from __future__ import annotations

from functools import partial

import torch

from .harness import Suite, Timed, hand, rel_error

CASE = "softmax"
SHAPES = ((8192, 1000), (32768, 1024))
TOLERANCE = 1e-4  # of the largest entry; f32 throughout


def torch_body(x: torch.Tensor) -> torch.Tensor:
    top = x.amax(dim=1, keepdim=True)
    e = torch.exp(x - top)
    return e / e.sum(dim=1, keepdim=True)


def jax_body(x):
    import jax.numpy as jnp
    e = jnp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def run(suite: Suite) -> None:
    compiled = torch.compile(torch_body, dynamic=False)
    for rows, cols in SHAPES:
        config = f"{rows}x{cols}"
        with suite.guard(CASE, config, "f32"), suite.group(
                CASE, config, "f32", unit="GB/s", work=2 * rows * cols * 4,
                tolerance=TOLERANCE) as g:
            x = torch.randn(rows, cols, device=suite.device, generator=suite.seeded(0))
            ref = torch.softmax(x.double(), dim=1)
            check = partial(rel_error, ref=ref)
            g.add("linnet", "Linnet", lambda: partial(suite.linnet("softmax", "softmax_any"), x),
                  check)
            g.add("hand", "hand Triton", lambda: partial(hand("softmax", "forward").forward, x),
                  check)
            g.add("torch", "torch.softmax", lambda: partial(torch.softmax, x, 1), check)
            g.add("compile", "torch.compile(body)", lambda: partial(compiled, x), check)
            g.add("eager", "eager body", lambda: partial(torch_body, x), check)
            jax_rows(suite, g, x, check)
            del x, ref


def jax_rows(suite: Suite, g, x: torch.Tensor, check) -> None:
    side = suite.jax

    def pallas():
        fn = side.jit(suite.linnet("softmax", "softmax_any", target="jax"))
        (xj,) = suite.jax_args(x)
        return Timed(partial(fn, xj), note=side.kernel_note(fn, xj))

    g.add("linnet_pallas", "Linnet Pallas", pallas, check, family="jax")
    g.add("jax_nn", "jax.nn.softmax (jit)",
          lambda: partial(side.jit(partial(side.require().nn.softmax, axis=1)), *suite.jax_args(x)),
          check, family="jax")
    g.add("jax_body", "jax.jit(body)", lambda: partial(side.jit(jax_body), *suite.jax_args(x)),
          check, family="jax")

