"""StableHLO text being written: SSA values and their tensor types, scalar literals as
MLIR reads them, the `OpWriter` that prints one operation in MLIR's generic form a call,
and the `Row` every row of the table (`linnet.emit.stablehlo_ops`) is given."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

from ..ir import tensor as ir
from .common import HALF, attr_int, is_float
from .jax_ops import value_of


ELEMENT = {"bool": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64",
           "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64",
           "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}

_FLOAT_FORMATS = {"f16": (10, -14, 15, 16), "bf16": (7, -126, 127, 16),
                  "f32": (23, -126, 127, 32), "f64": (52, -1022, 1023, 64)}


# ---------------------------------------------------------------- values and types

@dataclass(frozen=True, slots=True)
class Value:
    """An SSA value of the text being written: its name (`%v3`, `%v3#1`) and tensor type."""
    name: str
    type: ir.TType


def tensor_type(ty: ir.TType) -> str:
    """`tensor<4x8xf32>`; a scalar is `tensor<f32>`."""
    if ty.dtype not in ELEMENT:
        raise ValueError(f"unknown dtype {ty.dtype!r}")
    dims = "".join(f"{attr_int(n)}x" for n in ty.shape)
    return f"tensor<{dims}{ELEMENT[ty.dtype]}>"


def types_text(values: Sequence[Value | ir.TType]) -> str:
    return ", ".join(tensor_type(v.type if isinstance(v, Value) else v) for v in values)


def work_dtype(dtype: str) -> str:
    """The dtype sums and products of `dtype` values accumulate in."""
    return "f32" if dtype in HALF else dtype


# ---------------------------------------------------------------------- literals

def round_float(value: float, dtype: str) -> float:
    """`value` rounded to the nearest `dtype` number, ties to even, in one step (no double
    rounding through f32); too large a magnitude becomes an infinity."""
    value = float(value)
    if not math.isfinite(value) or value == 0.0:
        return value
    frac, lowest, highest, _ = _FLOAT_FORMATS[dtype]
    exponent = max(math.frexp(abs(value))[1] - 1, lowest)
    quantum = Fraction(2) ** (exponent - frac)
    rounded = round(Fraction(abs(value)) / quantum) * quantum
    if rounded >= Fraction(2) ** (highest + 1):
        return math.copysign(math.inf, value)
    return math.copysign(float(rounded), value)


def _float_bits(value: float, dtype: str) -> str:
    """The hex bit pattern MLIR reads for an infinity or a (quiet) NaN of `dtype`."""
    frac, _, highest, width = _FLOAT_FORMATS[dtype]
    exponent_ones = ((1 << (width - frac - 1)) - 1) << frac
    bits = exponent_ones | (1 << (frac - 1)) if math.isnan(value) else exponent_ones
    if value < 0:
        bits |= 1 << (width - 1)
    return f"0x{bits:0{width // 4}X}"


def literal_text(value: bool | int | float, dtype: str) -> str:
    """A scalar as an MLIR dense element: `true`, `-3`, `4294967295` (unsigned values as
    such), `0.1` (the exact decimal of the rounded value), or `0x7F800000` for inf and NaN."""
    v = value_of(value, dtype)
    if dtype == "bool":
        return "true" if v else "false"
    if not is_float(dtype):
        return str(int(v))
    v = round_float(v, dtype)
    if not math.isfinite(v):
        return _float_bits(v, dtype)
    text = repr(v)  # the shortest decimal that reads back as v exactly
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"  # MLIR's float literals need a point: 1e+30 is 1.0e+30
    return mantissa + (f"e{exponent}" if e else "")


# ------------------------------------------------------------------- the writer

Region = Callable[["OpWriter"], None]


class OpWriter:
    """Lines of MLIR being written: fresh SSA names and one generic-form operation a call."""

    def __init__(self, depth: int = 0) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.depth = depth

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count - 1}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def op(self, name: str, operands: Sequence[Value], results: Sequence[ir.TType],
           props: str = "", regions: Sequence[Region] = ()) -> list[Value]:
        """Write `results = "name"(operands) <{props}> (regions) : (types) -> (types)`."""
        base = self.fresh() if results else ""
        values = ([Value(base, results[0])] if len(results) == 1 else
                  [Value(f"{base}#{k}", t) for k, t in enumerate(results)])
        lhs = "" if not results else f"{base} = " if len(results) == 1 else \
            f"{base}:{len(results)} = "
        head = f'{lhs}"{name}"({", ".join(v.name for v in operands)})'
        head += f" <{{{props}}}>" if props else ""
        out = tensor_type(results[0]) if len(results) == 1 else f"({types_text(results)})"
        signature = f" : ({types_text(operands)}) -> {out}"
        if not regions:
            self.line(head + signature)
            return values
        self.line(head + " ({")
        for k, region in enumerate(regions):
            if k:
                self.line("}, {")
            self.depth += 1
            region(self)
            self.depth -= 1
        self.line("})" + signature)
        return values

    def op1(self, name: str, operands: Sequence[Value], result: ir.TType,
            props: str = "", regions: Sequence[Region] = ()) -> Value:
        return self.op(name, operands, [result], props, regions)[0]

    def block_args(self, types: Sequence[ir.TType]) -> list[Value]:
        """Open a region's block with fresh arguments of `types`."""
        values = [Value(self.fresh(), t) for t in types]
        args = ", ".join(f"{v.name}: {tensor_type(v.type)}" for v in values)
        self.lines.append("  " * (self.depth - 1) + f"^bb0({args}):")
        return values

    def ret(self, values: Sequence[Value], name: str = "stablehlo.return") -> None:
        self.line(f'"{name}"({", ".join(v.name for v in values)}) : ({types_text(values)}) -> ()')


def dense_array(values: Sequence[int]) -> str:
    return f"array<i64{': ' if values else ''}{', '.join(str(attr_int(v)) for v in values)}>"


@dataclass(frozen=True, slots=True)
class Row:
    """What a row gets: the writer, operands, result type, attributes and numerics."""
    w: OpWriter
    args: list[Value]
    result: ir.TType
    attrs: dict[str, Any]
    numerics: str
    op: str = ""
