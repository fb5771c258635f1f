"""Run StableHLO text on the CPU with the MLIR and XLA that JAX bundles.

`run_stablehlo(text, *inputs)` parses the text, verifies it, compiles it with XLA for the
CPU, runs its public `@main` on `inputs` (each converted to the parameter's dtype and
checked against its shape) and returns the results as NumPy arrays. `load_stablehlo(text)`
does the parsing and compiling once and returns a function to call many times; it keeps
the last compiled texts.

This goes through JAX's private modules (`jax._src`): the only way to hand XLA a module
that JAX did not trace. Where their names moved between JAX releases, the code looks for
each in turn. 64-bit dtypes (i64, u64, f64) need `jax_enable_x64` while the inputs are
placed on the device, else JAX would narrow them to 32 bits; it is turned on for that
moment only.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable

import numpy as np


class StableHLOError(ValueError):
    """The text does not parse or verify; the message holds MLIR's diagnostics."""


def run_stablehlo(text: str, *inputs: Any) -> tuple[np.ndarray, ...]:
    """Parse, verify, compile and run `text`'s `@main` on `inputs` (on the CPU)."""
    return load_stablehlo(text)(*inputs)


@functools.lru_cache(maxsize=64)
def load_stablehlo(text: str) -> "StableHLOFunction":
    """The compiled `@main` of `text`, as a function of NumPy-convertible inputs."""
    import jax
    from jax._src.interpreters import mlir

    module = parse_stablehlo(text)
    params = _main_params(module)
    backend = _cpu_backend()
    device = jax.devices("cpu")[0]
    executable = _compile(backend, mlir.module_to_bytecode(module), device)
    return StableHLOFunction(executable, params, device)


def parse_stablehlo(text: str):
    """The parsed and verified MLIR module; a `StableHLOError` with MLIR's diagnostics
    when the text does not parse or does not verify."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    try:
        module = ir.Module.parse(text, context=mlir.make_ir_context())
        if not module.operation.verify():
            raise StableHLOError("the StableHLO module does not verify")
    except ir.MLIRError as e:
        raise StableHLOError(f"invalid StableHLO:\n{e}") from None
    return module


class StableHLOFunction:
    """A compiled `@main`: call it with one array-like per parameter."""

    def __init__(self, executable: Any, params: list[tuple[tuple[int, ...], Any]],
                 device: Any) -> None:
        self.executable = executable
        self.params = params
        self.device = device

    def __call__(self, *inputs: Any) -> tuple[np.ndarray, ...]:
        import jax

        if len(inputs) != len(self.params):
            raise TypeError(f"@main takes {len(self.params)} inputs, got {len(inputs)}")
        arrays = [_input(x, shape, dtype, k) for k, (x, (shape, dtype))
                  in enumerate(zip(inputs, self.params))]
        with _x64(any(a.dtype.itemsize == 8 for a in arrays)):
            buffers = [jax.device_put(a, self.device) for a in arrays]
            outputs = _execute(self.executable, buffers)
        return tuple(np.asarray(_single(out)) for out in outputs)


def _input(x: Any, shape: tuple[int, ...], dtype: Any, k: int) -> np.ndarray:
    a = np.asarray(x, dtype=dtype)
    if a.shape != shape:
        raise ValueError(f"@main: input {k} has shape {a.shape}, expected {shape}")
    return a


def _execute(executable: Any, buffers: list) -> list:
    """The executable's results on `buffers`: `execute` where the release has it, else
    the sharded call, one result per output (each a list over the one device)."""
    if hasattr(executable, "execute"):
        return executable.execute(buffers)
    results = executable.execute_sharded(buffers)
    return results.disassemble_into_single_device_arrays()


def _single(out: Any) -> Any:
    """One result: an array (or, from an API that returns one per device, the first)."""
    return out[0] if isinstance(out, (list, tuple)) else out


@contextlib.contextmanager
def _x64(on: bool):
    """64-bit dtypes enabled while the block runs (when `on`), whatever the JAX release."""
    import jax

    if not on or jax.config.jax_enable_x64:
        yield
        return
    if hasattr(jax, "enable_x64"):
        with jax.enable_x64(True):
            yield
        return
    from jax.experimental import enable_x64  # older releases
    with enable_x64():
        yield


def _cpu_backend() -> Any:
    try:
        from jax.extend.backend import get_backend
    except ImportError:  # releases without jax.extend.backend
        from jax.lib.xla_bridge import get_backend
    return get_backend("cpu")


def _compile(backend: Any, bytecode: bytes, device: Any) -> Any:
    """XLA's executable for the module, loaded on `device`."""
    from jax._src import compiler
    from jax._src.lib import xla_client as xc

    options = compiler.get_compile_options(num_replicas=1, num_partitions=1)
    devices = xc.DeviceList((device,))
    compile_: Callable[..., Any] = getattr(backend, "compile_and_load", None) or backend.compile
    return compile_(bytecode, devices, options)


# ------------------------------------------------------------------ parameters

_NUMPY = {"i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
          "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
          "f16": "float16", "f32": "float32", "f64": "float64"}


def _main_params(module: Any) -> list[tuple[tuple[int, ...], Any]]:
    """(shape, NumPy dtype) of each parameter of the module's `@main`."""
    from jax._src.lib.mlir import ir

    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            return [_param(ir.RankedTensorType(t)) for t in ftype.inputs]
    raise StableHLOError("the StableHLO module has no @main")


def _param(t: Any) -> tuple[tuple[int, ...], Any]:
    element = str(t.element_type)
    if element == "bf16":
        import ml_dtypes
        return tuple(t.shape), np.dtype(ml_dtypes.bfloat16)
    if element not in _NUMPY:
        raise StableHLOError(f"@main takes a tensor of {element}, which NumPy cannot hold")
    return tuple(t.shape), np.dtype(_NUMPY[element])
