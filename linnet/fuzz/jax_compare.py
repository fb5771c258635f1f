"""Kernel against body through generated JAX: what `linnet verify --target jax` runs.

The same comparison as `harness.compare_kernel_and_body` (whose `Comparison` it returns and
whose per-dtype tolerances it uses), with the op compiled by `linnet jax`: the body under
`numerics="exact"`, the Pallas kernel under the numerics asked for. Inputs arrive as torch
tensors (the harness draws them) and cross to JAX through NumPy (bf16 through f32, exactly);
results come back the same way to be compared. Gradients are `jax.vjp` of each module's
`main` with the same seeded random cotangents for the floating outputs.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..diagnostics import CompileError, SourceFile
from ..pipeline import compile_source
from ..torch.runtime import import_generated
from .comparison import Comparison, Tolerance, compare_outputs, result_names
from .inputs import dtype_name
from .spec import TargetSpec, program_error


def pallas_runtime() -> tuple[bool, str]:
    """Would a generated JAX module launch its Pallas kernels here, and how?"""
    try:
        import jax
        from jax.experimental import pallas  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means: no Pallas
        return False, "the body (Pallas does not import)"
    if os.environ.get("LINNET_PALLAS_INTERPRET") == "1":
        return True, "the Pallas interpreter (CPU)"
    if jax.default_backend() == "gpu":
        return True, "Pallas on the GPU"
    return False, "the body (no GPU, and LINNET_PALLAS_INTERPRET is not 1)"


def jax_main(spec: TargetSpec, values: Mapping[str, Any], numerics: str, tuning: Any = False
             ) -> tuple[Callable[..., tuple], str]:
    """`main` of the generated JAX module of `spec`'s entry at `values`, and its text.
    `tuning` is compile_source's (False: the op headers' tiles, as `harness.compiled`)."""
    try:
        compiled = compile_source(spec.source, path=spec.path, target="jax",
                                  numerics=numerics, tuning=tuning,
                                  **spec.compile_options(values))
    except CompileError as err:
        raise program_error(err.diagnostics,
                             {spec.path: SourceFile.of(spec.path, spec.source)}) from None
    module = import_generated(compiled.text, f"{spec.name}_{numerics}", "jax")
    return module.main, compiled.text


def to_jax(x):
    """A torch tensor as a JAX array of its dtype (made with 64-bit types on, so that an
    i64, u64 or f64 tensor stays 64-bit whatever the process's setting)."""
    import jax
    import jax.numpy as jnp
    import torch
    if not isinstance(x, torch.Tensor):
        return x
    with jax.enable_x64(True):
        if x.dtype == torch.bfloat16:
            return jnp.asarray(x.float().cpu().numpy()).astype(jnp.bfloat16)
        return jnp.asarray(x.cpu().numpy())


def _to_torch(x):
    import torch
    a = np.asarray(x)
    if str(a.dtype) == "bfloat16":
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(a.copy())


def compare_jax(spec: TargetSpec, bound: Mapping[str, Any], inputs: Sequence[Any], *,
                numerics: str, grad: bool, seed: int,
                tol: Callable[[str], Tolerance], tuning: Any = False) -> Comparison:
    """Body and kernel of `spec` at `bound` on `inputs`, through generated JAX, with 64-bit
    types on for the comparison only (the inputs' i64, u64 and f64 stay 64-bit arrays)."""
    import jax
    with jax.enable_x64(True):
        return _compare_jax(spec, bound, inputs, numerics=numerics, grad=grad, seed=seed,
                            tol=tol, tuning=tuning)


def _compare_jax(spec: TargetSpec, bound: Mapping[str, Any], inputs: Sequence[Any], *,
                 numerics: str, grad: bool, seed: int,
                 tol: Callable[[str], Tolerance], tuning: Any = False) -> Comparison:
    import jax
    import torch
    ran, runtime = pallas_runtime()
    body_main, _ = jax_main(spec, bound, "exact")
    kernel_main, text = jax_main(spec, bound, numerics, tuning)
    chosen = "pl.pallas_call(" in text
    result = Comparison(spec.label, dict(bound), numerics, jax.default_backend(), [], [],
                        chosen, chosen and ran,
                        runtime if chosen else "the body (no kernel chosen)")
    xs = [to_jax(x) for x in inputs]
    body_out = body_main(*xs)
    try:
        kernel_out = kernel_main(*xs)
    except Exception as err:  # noqa: BLE001 - a crashing kernel is a finding
        result.problem = f"the kernel raised {type(err).__name__}: {str(err).splitlines()[0]}"
        return result
    names = result_names(spec, len(body_out))
    for name, b, k in zip(names, body_out, kernel_out):
        b, k = _to_torch(b), _to_torch(k)
        result.outputs.append(compare_outputs(name, b, k, tol(dtype_name(b))))
    wrt = [k for k, x in enumerate(xs) if getattr(x, "ndim", 0) > 0
           and "float" in str(x.dtype)]
    floats = [k for k, y in enumerate(body_out) if "float" in str(y.dtype)]
    if not grad or not wrt or not floats:
        return result
    g = torch.Generator().manual_seed(seed + 1)
    cotangents = [to_jax(torch.randn(tuple(body_out[k].shape), generator=g,
                                      dtype=torch.float64).to(_to_torch(body_out[k]).dtype))
                  for k in floats]
    try:
        grads = [_vjp(main, xs, wrt, floats, cotangents) for main in (body_main, kernel_main)]
    except Exception as err:  # noqa: BLE001
        result.problem = f"the kernel's backward raised {type(err).__name__}: " \
                         f"{str(err).splitlines()[0]}"
        return result
    inputs_named = spec.inputs(bound)
    for k, gb, gk in zip(wrt, *grads):
        name = f"d{inputs_named[k][0]}"
        gb, gk = _to_torch(gb), _to_torch(gk)
        result.grads.append(compare_outputs(name, gb, gk, tol(dtype_name(gb))))
    return result


def _vjp(main, xs: list, wrt: list[int], floats: list[int], cotangents: list) -> tuple:
    """The gradients of `main`'s floating outputs, against `cotangents`, for inputs `wrt`."""
    import jax

    def f(*chosen):
        args = list(xs)
        for k, v in zip(wrt, chosen):
            args[k] = v
        out = main(*args)
        return tuple(out[k] for k in floats)

    _, vjp = jax.vjp(f, *(xs[k] for k in wrt))
    return vjp(tuple(cotangents))
