"""Inputs for an entry's parameters, drawn inside the facts the program was written for.

Why from the facts: the generator proved the program tame (no overflow, no division by
zero, comparisons only of exact values) for inputs in each parameter's interval and of its
style, so the inputs must be drawn exactly from there: small integers (exact in every
float dtype), dyadic numbers (multiples of 1/4) or random reals.
"""

from __future__ import annotations

import numpy as np

from .scope import Param

_NUMPY = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
          "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
          "f16": np.float16, "f32": np.float32, "f64": np.float64}


def numpy_dtype(name: str):
    if name == "bf16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return _NUMPY[name]


def draw(param: Param, rng: np.random.Generator) -> np.ndarray:
    """One input array (a 0-d array for a scalar) in the parameter's dtype."""
    ty, info = param.var.ty, param.var.info
    shape = tuple(d.value for d in ty.dims)
    dtype = ty.dtype.name
    if dtype == "bool":
        values = rng.random(shape) < 0.5
    elif param.style == "random":
        values = rng.uniform(info.lo, info.hi, shape)
    elif param.style == "dyadic":
        values = rng.integers(int(info.lo * 4), int(info.hi * 4) + 1, shape) / 4
    else:
        values = rng.integers(int(info.lo), int(info.hi) + 1, shape)
    return np.asarray(values).astype(numpy_dtype(dtype))


def draw_all(params: list[Param], seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(draw(p, rng) for p in params)
