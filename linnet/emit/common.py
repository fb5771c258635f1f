"""What several printers share: dtype facts, attribute readers, and code for numbers,
shapes and slices.

The PyTorch, JAX, ONNX, StableHLO and Triton tables (`*_ops.py`) each spell primitives
their own way, but read a primitive's integer attributes, a dtype's width and extremes,
and a leading-axis slice the same way; those readings live here, public, so that no table
borrows another's private helpers.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..prims import Text, Via

BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
FLOATS = ("f16", "bf16", "f32", "f64")
HALF = ("f16", "bf16")
SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("u8", "u16", "u32", "u64")


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def is_int(dtype: str) -> bool:
    return dtype in BITS


def lowest_value(dtype: str) -> bool | int | float:
    """The dtype's lowest value (the identity of max): -inf for floats."""
    if is_float(dtype):
        return -math.inf
    return 0 if dtype in UNSIGNED else -(1 << (BITS[dtype] - 1))


def highest_value(dtype: str) -> bool | int | float:
    """The dtype's highest value (the identity of min): inf for floats, 2**64 - 1 for u64."""
    if is_float(dtype):
        return math.inf
    return (1 << BITS[dtype]) - 1 if dtype in UNSIGNED else (1 << (BITS[dtype] - 1)) - 1


# ------------------------------------------------------------- attributes

def attr_int(v: object) -> int:
    """An integer attribute (an axis, an extent); a ValueError for anything else."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"expected an integer attribute, got {v!r}")
    return int(v)


def attr_ints(v: object) -> tuple[int, ...]:
    """A tuple-of-integers attribute (axes, a permutation)."""
    if not isinstance(v, (tuple, list)):
        raise ValueError(f"expected a tuple of integers, got {v!r}")
    return tuple(attr_int(x) for x in v)


def gathered_first(rank: int, axes: tuple[int, ...]) -> tuple[int, ...]:
    """The axes of a gather's table reordered, its gathered `axes` first, then the others:
    every target reads a gather from (and scatters its adjoint into) the table so laid out."""
    return axes + tuple(k for k in range(rank) if k not in axes)


def freeze(v: object) -> object:
    """Attributes as hashable values (lists become tuples), for caching."""
    if isinstance(v, (list, tuple)):
        return tuple(freeze(x) for x in v)
    return v


# ------------------------------------------------------------------ code

def shape_code(shape: Sequence[int]) -> str:
    return repr(tuple(attr_int(n) for n in shape))


def shaped_call(fn: str, x: str, shape: Sequence[int]) -> str:
    """`fn(x, (2, 3))`: a library function of a value and a shape (`broadcast_to`)."""
    return f"{fn}({x}, {shape_code(shape)})"


def scalar_value(value: object) -> bool | int | float:
    """A literal's value as a plain Python number (NumPy scalars included); nothing else."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"not a scalar literal: {value!r}")


def py_scalar(value: bool | int | float) -> str:
    """Python source for a number: `float("inf")` where repr would not parse back."""
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(float(value))
    raise TypeError(f"not a scalar literal: {value!r}")


def slice_item_code(item: object) -> str:
    """One `index` item as Python subscript text: `3` (`("at", 3)`), `0:8:2` (a slice)."""
    item = freeze(item)
    if not isinstance(item, tuple) or not item or item[0] not in ("at", "slice"):
        raise ValueError(f"bad index item {item!r}")
    if item[0] == "at":
        (k,) = item[1:]
        return str(attr_int(k))
    lo, hi, step = (list(item[1:]) + [None, None, None])[:3]
    lo = 0 if lo is None else attr_int(lo)
    step = 1 if step is None else attr_int(step)
    if step < 1 or lo < 0:
        raise ValueError(f"slice {item!r}: bounds must be non-negative and the step positive")
    return f"{lo}:{'' if hi is None else attr_int(hi)}:{step}"


# ---------------------------------------------------------- a prim's call

@dataclass(frozen=True, slots=True)
class PrimCall:
    """What a printer's function for one primitive (a `Via` of its row) receives: the
    primitive, its operands' code, their types, the result type and the attributes."""
    op: str
    args: tuple
    types: tuple
    result: Any
    attrs: dict

    @property
    def x(self) -> Any:
        """The first operand ("" for none)."""
        return self.args[0] if self.args else ""

    @property
    def tx(self) -> Any:
        """The first operand's type (None for none)."""
        return self.types[0] if self.types else None

    @property
    def axis(self) -> int:
        return attr_int(self.attrs["axis"])

    @property
    def axes(self) -> tuple[int, ...]:
        return attr_ints(self.attrs["axes"])


def print_form(form: object, call: PrimCall, functions: dict[str, Callable[[PrimCall], Any]],
               target: str) -> Any:
    """A primitive written as its row's form says: a `Text` template over the operands, or
    the printer's function a `Via` names (an `Op` is the printer's to apply: `apply_op`)."""
    if form is None:
        raise ValueError(f"no {target} lowering for primitive {call.op!r}")
    if isinstance(form, Text):
        return form.format(*call.args)
    if isinstance(form, Via):
        return functions[form.name](call)
    raise ValueError(f"{target} cannot write the form {form!r} of {call.op!r}")
