"""The elementwise primitives as ONNX nodes: arithmetic, comparisons, bit operations
and logic, shifts, `neg not abs rsqrt` and `select`, with the language's integer semantics
(the rules are listed in `linnet.emit.onnx_ops`)."""

from __future__ import annotations

from ..ir import tensor as ir
from .common import BITS, SIGNED, UNSIGNED, is_float
from .onnx_nodes import Nodes, work


_UNSIGNED_TWIN = {"i8": "u8", "i16": "u16", "i32": "u32", "i64": "u64",
                  "u8": "u8", "u16": "u16", "u32": "u32", "u64": "u64"}

_PLAIN_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "min": "Min", "max": "Max"}

_COMPARE = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater",
            "ge": "GreaterOrEqual"}

_BOOL_LOGIC = {"and": "And", "or": "Or", "xor": "Xor"}

_BITWISE = {"and": "BitwiseAnd", "or": "BitwiseOr", "xor": "BitwiseXor"}


def binary(g: Nodes, op: str, a: str, b: str, ta: ir.TType, tb: ir.TType) -> str:
    d = ta.dtype
    if op in _PLAIN_BINARY:
        return g.op(_PLAIN_BINARY[op], [a, b], d)
    if op in ("div", "mod"):
        return _div_mod(g, op, a, b, d)
    if op in _COMPARE:
        return g.op(_COMPARE[op], [a, b], d, out="bool")
    if op == "ne":
        return g.add("Not", [g.op("Equal", [a, b], d, out="bool")])
    if op in _BOOL_LOGIC:
        return g.add(_BOOL_LOGIC[op] if d == "bool" else _BITWISE[op], [a, b])
    if op in ("shl", "shr"):
        return _shift(g, op, a, g.cast(b, tb.dtype, d), d)
    raise ValueError(f"unknown binary primitive {op!r}")


def _div_mod(g: Nodes, op: str, a: str, b: str, d: str) -> str:
    """Float: true division, fmod. Integer: truncating `Div`, and the remainder as
    `a - (a / b) * b` (onnxruntime before 1.32 takes an integer `Mod` through doubles,
    inexact for 64-bit values); a signed divisor of -1 becomes 1 (C++ traps on
    MIN / -1), the quotient then negated; a zero divisor becomes 1, the quotient then 0
    (and so the remainder)."""
    if is_float(d):
        return g.op("Div", [a, b], d) if op == "div" else g.op("Mod", [a, b], d, fmod=1)
    one = g.const(1, d)
    zero = g.op("Equal", [b, g.const(0, d)], d, out="bool")
    safe = select(g, zero, one, b, d)
    if d in SIGNED:
        minus_one = g.op("Equal", [b, g.const(-1, d)], d, out="bool")
        safe = select(g, minus_one, one, safe, d)
    quotient = g.op("Div", [a, safe], d)
    if op == "mod":  # x % 1 == x % -1 == 0
        return g.op("Sub", [a, g.op("Mul", [quotient, safe], d)], d)
    if d in SIGNED:
        quotient = select(g, minus_one, g.op("Neg", [quotient], d), quotient, d)
    return select(g, zero, g.const(0, d), quotient, d)


def select(g: Nodes, c: str, a: str, b: str, dtype: str) -> str:
    return g.op("Where", [a, b], dtype, pre=[c])


def _shift(g: Nodes, op: str, x: str, n: str, d: str) -> str:
    """`shl`/`shr` by a count `n` of x's dtype, on the unsigned dtype of the same width
    (see the module docstring for counts of the width or more)."""
    bits, u = BITS[d], _UNSIGNED_TWIN[d]
    w = work("BitShift", u)  # u16 shifts in u32: the low 16 bits are the same
    n64 = g.cast(n, d, "i64")
    count = g.cast(g.op("Min", [n64, g.const(bits - 1, "i64")], "i64"), "i64", w)
    if op == "shr" and d in SIGNED:
        sign = g.op("Neg", [g.cast(g.op("Less", [x, g.const(0, d)], d, out="bool"),
                                   "bool", d)], d)  # -1 where x < 0, else 0
        flipped = g.cast(g.cast(g.add("BitwiseXor", [x, sign]), d, u), u, w)  # >= 0
        shifted = g.cast(g.add("BitShift", [flipped, count], direction="RIGHT"), w, u)
        return g.add("BitwiseXor", [g.cast(shifted, u, d), sign])
    direction = "LEFT" if op == "shl" else "RIGHT"
    big = g.cast(g.op("GreaterOrEqual", [n64, g.const(bits, "i64")], "i64", out="bool"),
                 "bool", w)  # 1 where the count is the width or more: one more bit out
    shifted = g.add("BitShift", [g.cast(g.cast(x, d, u), u, w), count], direction=direction)
    if w != u:  # bits shifted past the width of u are dropped before the second shift
        shifted = g.cast(g.cast(shifted, w, u), u, w)
    return g.cast(g.cast(g.add("BitShift", [shifted, big], direction=direction), w, u), u, d)


def unary(g: Nodes, op: str, x: str, d: str) -> str:
    if op == "neg":
        return g.op("Neg", [x], d)
    if op == "not":
        return g.add("Not" if d == "bool" else "BitwiseNot", [x])
    if op == "abs":
        return x if d in UNSIGNED else g.op("Abs", [x], d)
    if op == "rsqrt":  # both steps in the work dtype, rounded once
        w = work("Sqrt", d)
        y = g.add("Reciprocal", [g.add("Sqrt", [g.cast(x, d, w)])])
        return g.cast(y, w, d)
    raise ValueError(f"unknown unary primitive {op!r}")
