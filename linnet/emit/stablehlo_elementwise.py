"""The elementwise rows of the StableHLO table: operands broadcast to the result shape,
integer `/` and `%` by zero made 0, comparisons with their compare type, shifts, `abs`,
`select` and `cast` (the rules are listed in `linnet.emit.stablehlo_ops`)."""

from __future__ import annotations

from typing import Callable

from ..ir import tensor as ir
from .common import UNSIGNED, is_float
from .stablehlo_building_blocks import broadcast, compare, constant, convert
from .stablehlo_writer import Row, Value


_DIV_MOD = {"div": "divide", "mod": "remainder"}

_COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}


def elementwise(r: Row, name: str, dtype: str | None = None) -> Value:
    xs = [broadcast(r.w, x, r.result.shape) for x in r.args]
    return r.w.op1(name, xs, ir.TType(r.result.shape, dtype or r.result.dtype))


def int_div_mod(r: Row, op: str) -> Value:
    """Float `/` and `%` as they are; an integer one divides by 1 where the divisor is 0 and
    gives 0 there (XLA alone gives -1 for `/` and the dividend for `%`)."""
    name = f"stablehlo.{_DIV_MOD[op]}"
    d = r.result.dtype
    if is_float(d):
        return elementwise(r, name)
    a, b = (broadcast(r.w, x, r.result.shape) for x in r.args)
    shape = r.result.shape
    zero = compare(r.w, "EQ", b, constant(r.w, 0, d, shape))
    safe = r.w.op1("stablehlo.select", [zero, constant(r.w, 1, d, shape), b], b.type)
    q = r.w.op1(name, [a, safe], r.result)
    if op == "mod":  # x % 1 == 0
        return q
    return r.w.op1("stablehlo.select", [zero, constant(r.w, 0, d, shape), q], r.result)


def compare_row(op: str) -> Callable[[Row], Value]:
    def row(r: Row) -> Value:
        a, b = (broadcast(r.w, x, r.result.shape) for x in r.args)
        return compare(r.w, _COMPARE[op], a, b)
    return row


def shift(op: str) -> Callable[[Row], Value]:
    def row(r: Row) -> Value:
        x, count = r.args
        d = r.result.dtype
        name = ("shift_left" if op == "shl" else
                "shift_right_logical" if d in UNSIGNED else "shift_right_arithmetic")
        return elementwise(Row(r.w, [x, convert(r.w, count, d)], r.result, r.attrs,
                                r.numerics), f"stablehlo.{name}")
    return row


def unary(op: str) -> Callable[[Row], Value]:
    def row(r: Row) -> Value:
        if op == "abs" and r.result.dtype in UNSIGNED:
            return r.args[0]
        return elementwise(r, f"stablehlo.{op}")
    return row


def select(r: Row) -> Value:
    c, a, b = (broadcast(r.w, x, r.result.shape) for x in r.args)
    return r.w.op1("stablehlo.select", [c, a, b], r.result)


def cast(r: Row) -> Value:
    return convert(r.w, r.args[0], r.result.dtype)
