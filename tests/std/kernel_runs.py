"""Run a loaded std entry on PyTorch (autograd) or JAX (`jax.vjp`) and give back its result
and the gradients of its floating inputs, so the kernel tests of each module compare the
same things the same way. Integer inputs (ids, targets) get no gradient: on JAX they stay
NumPy arrays, closed over, since JAX without x64 would narrow i64 to i32.

`loaded` shares one loaded entry among the tests of a process (its program is checked once;
each binding compiles once), and `ran_during` gives what one call ran on such a shared
entry, so a test's claims about the kernels that ran are of its own call alone."""

from __future__ import annotations

from functools import cache
from typing import Callable

import numpy as np
import torch

from linnet.fuzz import default_device

DEVICE = default_device()


def run_torch(fn, inputs: list, cotangent: torch.Tensor):
    """Generated PyTorch's result for `inputs` and, through autograd, the gradients of the
    floating inputs for `cotangent`."""
    leaves = [x.to(DEVICE).requires_grad_(x.is_floating_point()) for x in inputs]
    y = fn(*leaves)
    y.backward(cotangent.to(y.dtype).to(DEVICE))
    return y, [x.grad for x in leaves if x.is_floating_point()]


def run_jax(fn, inputs: list, cotangent: torch.Tensor):
    """Generated JAX's result and, through `jax.vjp`, the gradients of the floating inputs,
    both as float64 NumPy arrays."""
    import jax
    import jax.numpy as jnp
    arrays = [jnp.asarray(x.float().numpy(), dtype=str(x.dtype).removeprefix("torch."))
              if x.is_floating_point() else x.numpy() for x in inputs]
    floats = [k for k, x in enumerate(inputs) if x.is_floating_point()]

    def with_floats(*leaves):
        args = list(arrays)
        for k, leaf in zip(floats, leaves):
            args[k] = leaf
        return fn(*args)

    y, vjp = jax.vjp(with_floats, *(arrays[k] for k in floats))
    grads = vjp(jnp.asarray(cotangent.numpy(), dtype=y.dtype))
    return np.asarray(y, dtype=np.float64), [np.asarray(g, dtype=np.float64) for g in grads]


@cache
def loaded(target: str, path: str, entry: str):
    """The entry `entry` of the program at `path` loaded for `target` ("torch" or "jax"),
    once a process: loading checks the whole program, which costs as much as compiling a
    binding, and the tests of an entry in several dtypes need it only once."""
    if target == "torch":
        from linnet.torch import load_function
    else:
        from linnet.jax import load_function
    return load_function(path, entry)


def ran_during(fn, call: Callable[[], object]) -> tuple[object, dict[str, dict[str, int]]]:
    """`call()`'s value and what it ran: `fn.ran()`'s counts of the call alone, the counts
    of earlier calls of the shared `fn` taken away (ops that did not run left out)."""
    before = fn.ran()
    value = call()
    counts = {}
    for op, seen in fn.ran().items():
        was = before.get(op, {"kernel": 0, "body": 0})
        delta = {k: seen[k] - was[k] for k in ("kernel", "body")}
        if delta["kernel"] or delta["body"]:
            counts[op] = delta
    return value, counts


def held_to_reference(target: str, path: str, entry: str, inputs: list,
                      cotangent: torch.Tensor, want: torch.Tensor, grads: list,
                      close: Callable[[object, torch.Tensor, str], None]
                      ) -> dict[str, dict[str, int]]:
    """Run the entry (`loaded` once a process) forward and backward on `inputs` and
    `cotangent` through `target`'s autograd, hold its result and its gradients to `want`
    and `grads` with `close(got, want, what)`, and give what the call ran (`ran_during`)."""
    fn = loaded(target, path, entry)
    run = run_torch if target == "torch" else run_jax
    (y, got), ran = ran_during(fn, lambda: run(fn, inputs, cotangent))
    close(y, want, "result")
    assert len(got) == len(grads)
    for k, (x, g) in enumerate(zip(got, grads)):
        close(x, g, f"gradient {k}")
    return ran
