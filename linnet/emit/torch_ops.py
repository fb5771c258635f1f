"""How each tensor-IR primitive is computed with PyTorch: the one table of the torch backends.

Both PyTorch backends read this module and nothing else for the meaning of a primitive:

- the printer (`linnet.emit.torch`) writes `prim_expr(...)` into the generated module, and
  pastes the source of the `_ln_*` helpers that the expressions call;
- the interpreter (`linnet.torch.interpreter`) compiles the *same* expression text into a
  function (`compile_expr`) and runs it in a namespace made by executing the *same* helper
  source (`helper_namespace`).

So the two cannot drift apart: there is one text per primitive, operand types, result type
and attributes, and it is what both of them run.

Operands are always torch tensors (literals are 0-d tensors made by `literal_expr`), named
by plain identifiers; `_d` names the device on which new tensors are made.

Semantics (docs/language.md, "Types and generics", `docs/ir.md`):

- Integer arithmetic wraps at the dtype's width; integer `div` truncates toward zero and
  `mod` takes the sign of the dividend (`torch.div(..., rounding_mode="trunc")`, `torch.fmod`);
  `MIN / -1` wraps to `MIN` (torch would trap on the CPU) and `MIN % -1` is 0.
  An integer `/` or `%` by zero gives 0 (torch would raise on the CPU): `_ln_sdiv`,
  `_ln_udiv` and their kin divide by 1 there and put 0 in the quotient.
- Float `div` is true division. Float `mod` is `fmod`: the result has the sign of the dividend
  (C's `fmod`, the same convention as the integer `%`), not Python's floored modulo.
- float-to-int `cast` truncates toward zero; out-of-range values are undefined.
- `shr` is arithmetic on signed dtypes and logical on unsigned ones; shift counts of the
  width or more give 0 (`shl`, unsigned `shr`) or the sign (signed `shr`); negative
  counts are undefined.
- `min`/`max` and `reduce_max`/`reduce_min` propagate NaN. `reduce_max` of an empty axis is
  the dtype's lowest value (`-inf` for floats, the minimum for integers); `reduce_min`'s
  is the highest (`inf`, the maximum).
- Reductions, `cumsum` and `Einsum` compute in the result (accumulator) dtype; an operand of
  another dtype is cast first. For f16/bf16, torch accumulates internally in f32 and rounds
  once at the end: at least as accurate as accumulating in the narrow type.

Unsigned dtypes. torch has `uint8` natively; `uint16/32/64` exist as dtypes but almost no
operation is implemented for them. Inside a program they are therefore *held* in a signed
storage dtype (`STORAGE`), converted only at the boundary (inputs and outputs of `main`
keep the declared unsigned dtypes):

- `u16` is held in int32 and `u32` in int64, as their values (0 .. 2**n - 1). Every
  operation that can leave the range is masked back (`& 0xFFFF`, `& 0xFFFFFFFF`); since the
  wider type wraps modulo a larger power of two, the low bits are exact.
- `u64` is held in int64 as the same 64 bits. `add sub mul neg shl and or xor`, sums,
  products and equality are the same bit operations; ordered comparisons, `min`/`max`, max
  and min reductions flip the sign bit first (`_ln_flip`); `div`, `mod`, `shr`, and casts
  to and from floats have helpers.
"""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

from .. import prims
from ..ir import tensor as ir
from .common import (BITS, FLOATS, SIGNED, UNSIGNED, PrimCall, attr_int,  # noqa: F401
                     attr_ints, freeze, is_float, is_int, print_form, py_scalar, scalar_value,
                     shape_code, shaped_call, slice_item_code)

# the runtime helpers live in their own module; the backends reach them through this one
from .torch_helpers import (HELPERS, compile_expr, helper_namespace, helper_source,  # noqa: F401
                            helpers_used)

# ------------------------------------------------------------------ dtypes

#: The torch dtype of each Linnet dtype, as seen by callers of `main`.
PUBLIC = {"bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
          "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
          "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}

#: The torch dtype a value of each Linnet dtype is held in inside a program.
STORAGE = {**PUBLIC, "u16": "int32", "u32": "int64", "u64": "int64"}

#: Unsigned dtypes held in a wider signed dtype: the mask that keeps them in range.
MASK = {"u16": 0xFFFF, "u32": 0xFFFFFFFF}


_SIGN_BIT = -0x8000000000000000  # int64 with only the sign bit set


def torch_dtype(dtype: str) -> str:
    """The storage dtype as code: `torch.int32` for i32 and u16."""
    return "torch." + STORAGE[_dtype(dtype)]


def public_dtype(dtype: str) -> str:
    """The dtype `main` takes and returns, as code: `torch.uint16` for u16."""
    return "torch." + PUBLIC[_dtype(dtype)]


def _dtype(dtype: object) -> str:
    if not isinstance(dtype, str) or dtype not in PUBLIC:
        raise ValueError(f"unknown dtype {dtype!r}")
    return dtype


def storage_value(value: bool | int | float, dtype: str) -> bool | int | float:
    """A literal's value as held in storage (u64 above 2**63 - 1 becomes negative)."""
    if dtype == "bool":
        return bool(value)
    if is_float(dtype):
        return float(value)
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"literal {value!r} is not an integer for {dtype}")
        value = int(value)
    bits = BITS[dtype]
    v = int(value) % (1 << bits)  # two's complement wrap, as the language's arithmetic
    if dtype in SIGNED or dtype == "u64":
        return v - (1 << bits) if v >= 1 << (bits - 1) else v
    return v


def lowest(dtype: str) -> bool | int | float:
    """The identity of max: the dtype's lowest value, in storage."""
    if is_float(dtype):
        return -math.inf
    if dtype in UNSIGNED:
        return 0
    return -(1 << (BITS[_dtype(dtype)] - 1))


def highest(dtype: str) -> bool | int | float:
    """The identity of min: the dtype's highest value, in storage (u64: all ones, i.e. -1)."""
    if is_float(dtype):
        return math.inf
    if dtype == "u64":
        return -1
    if dtype in UNSIGNED:
        return (1 << BITS[dtype]) - 1
    return (1 << (BITS[_dtype(dtype)] - 1)) - 1


# ------------------------------------------------------------- attributes

# ----------------------------------------------------------- expressions

def _wrap(expr: str, dtype: str) -> str:
    """Bring a u16/u32 result back into range (the wider storage already wrapped)."""
    return f"({expr} & {MASK[dtype]:#x})" if dtype in MASK else expr


def literal_expr(value: bool | int | float, dtype: str) -> str:
    """A 0-d tensor holding a literal, on the device `_d`: made once, then shared
    (`_ln_lit`)."""
    value = scalar_value(value)
    return (f"_ln_lit({py_scalar(storage_value(value, _dtype(dtype)))}, "
            f"{torch_dtype(dtype)}, _d)")


def cast_expr(x: str, src: str, dst: str) -> str:
    """Convert a value held as `src` into one held as `dst`."""
    src, dst = _dtype(src), _dtype(dst)
    if src == dst:
        return x
    if dst == "bool":
        return f"({x} != 0)"
    if is_float(dst):
        if src == "u64":
            return f"_ln_u64_to_float({x}, {torch_dtype(dst)})"
        return f"{x}.to({torch_dtype(dst)})"
    # integer destinations
    if is_float(src):  # truncation toward zero
        if dst == "u64":
            return f"_ln_float_to_u64({x})"
        if dst in MASK:
            v = f"({x}.to(torch.int64) & {MASK[dst]:#x})"
            return v if STORAGE[dst] == "int64" else f"{v}.to({torch_dtype(dst)})"
        return f"{x}.to({torch_dtype(dst)})"
    # bool or integer to integer: keep the low bits (torch's integer conversions wrap)
    converted = x if STORAGE[src] == STORAGE[dst] else f"{x}.to({torch_dtype(dst)})"
    fits = src == "bool" or (src in UNSIGNED and BITS[src] <= BITS[dst])
    return _wrap(converted, dst) if dst in MASK and not fits else converted


def _same(b: str, tb: ir.TType, ta: ir.TType) -> str:
    """A shift count in the shifted value's storage dtype."""
    return b if STORAGE[tb.dtype] == STORAGE[ta.dtype] else f"{b}.to({torch_dtype(ta.dtype)})"


_ARITH = {"add": "+", "sub": "-", "mul": "*"}
_BITWISE = {"and": "&", "or": "|", "xor": "^"}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _binary(op: str, a: str, b: str, ta: ir.TType, tb: ir.TType) -> str:
    d = ta.dtype
    if op in _ARITH:
        return _wrap(f"({a} {_ARITH[op]} {b})", d)
    if op == "div":
        if is_float(d):
            return f"({a} / {b})"  # true division
        if d in SIGNED:
            return f"_ln_sdiv({a}, {b})"
        return f"_ln_udiv64({a}, {b})" if d == "u64" else f"_ln_udiv({a}, {b})"
    if op == "mod":
        # floats: fmod, the sign of the dividend (like the integer `%`), not Python's floored %
        if is_float(d):
            return f"torch.fmod({a}, {b})"
        if d in SIGNED:
            return f"_ln_smod({a}, {b})"
        return f"_ln_umod64({a}, {b})" if d == "u64" else f"_ln_umod({a}, {b})"
    if op in ("min", "max"):
        fn = "minimum" if op == "min" else "maximum"
        if d == "u64":
            return f"_ln_flip(torch.{fn}(_ln_flip({a}), _ln_flip({b})))"
        return f"torch.{fn}({a}, {b})"
    if op in _BITWISE:
        return f"({a} {_BITWISE[op]} {b})"
    if op in _COMPARE:
        if d == "u64" and op not in ("eq", "ne"):
            return f"(_ln_flip({a}) {_COMPARE[op]} _ln_flip({b}))"
        return f"({a} {_COMPARE[op]} {b})"
    if op == "shl":
        return _wrap(f"({a} << {_same(b, tb, ta)})", d)
    if op == "shr":
        if d == "u64":
            return f"_ln_lshr64({a}, {_same(b, tb, ta)})"
        # u8 is unsigned in torch, u16/u32 are held as non-negative values: `>>` is logical
        return f"({a} >> {_same(b, tb, ta)})"
    raise ValueError(f"unknown binary primitive {op!r}")


def _unary(op: str, a: str, ta: ir.TType) -> str:
    d = ta.dtype
    if op == "neg":
        return _wrap(f"(-{a})", d)
    if op == "not":
        return _wrap(f"(~{a})", d)  # logical on bool, bitwise on integers
    if op == "abs":
        return a if d in UNSIGNED else f"torch.abs({a})"  # abs(MIN) wraps to MIN
    raise ValueError(f"unknown unary primitive {op!r}")


def _reduce(op: str, x: str, tx: ir.TType, tr: ir.TType, axes: tuple[int, ...]) -> str:
    rank = tx.rank
    axes = tuple(sorted({a % rank if rank else a for a in axes}))
    d = tr.dtype
    x = cast_expr(x, tx.dtype, d)  # accumulate in the result dtype
    if not axes:
        return x
    dims = repr(axes)
    if op == "sum":
        return _wrap(f"torch.sum({x}, dim={dims}, dtype={torch_dtype(d)})", d)
    if op == "prod":  # torch.prod reduces one axis at a time; the highest first
        for a in reversed(axes):
            x = f"torch.prod({x}, dim={a}, dtype={torch_dtype(d)})"
        return _wrap(x, d)
    if op in ("max", "min"):
        if any(tx.shape[a] == 0 for a in axes):  # torch refuses an empty max: the identity
            fill = lowest(d) if op == "max" else highest(d)
            return (f"torch.full({shape_code(tr.shape)}, {py_scalar(fill)}, "
                    f"dtype={torch_dtype(d)}, device=_d)")
        fn = "amax" if op == "max" else "amin"
        if d == "u64":
            return f"_ln_flip(torch.{fn}(_ln_flip({x}), dim={dims}))"
        return f"torch.{fn}({x}, dim={dims})"
    if op in ("any", "all"):
        return f"torch.{op}({x}, dim={dims})"
    raise ValueError(f"unknown reduction reduce_{op}")


def _diagonal(x: str, tx: ir.TType, axes: tuple[int, ...]) -> str:
    """Merge `axes` into one axis, placed last (as `numpy.diagonal`, and as
    lower-index-notation labels it: the remaining axes in order, then the merged one)."""
    rank = tx.rank
    axes = tuple(a % rank for a in axes)
    if len(set(axes)) != len(axes) or len(axes) < 2:
        raise ValueError(f"diagonal needs two or more distinct axes, got {axes}")
    rest = tuple(a for a in range(rank) if a not in axes)
    perm = rest + axes
    if perm != tuple(range(rank)):
        x = f"torch.permute({x}, {perm!r})"
    for _ in range(len(axes) - 1):
        x = f"torch.diagonal({x}, 0, -2, -1)"
    return x


def _dot(args: Sequence[str], tys: Sequence[ir.TType], result: ir.TType) -> str:
    """`acc + a @ b` in the result dtype (the operands cast to it first)."""
    a, b = (cast_expr(x, t.dtype, result.dtype) for x, t in zip(args[:2], tys[:2]))
    product = f"torch.matmul({a}, {b})"
    return f"({args[2]} + {product})" if len(args) == 3 else product


def diagonal_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    rank = len(shape)
    axes = tuple(a % rank for a in axes)
    return tuple(n for a, n in enumerate(shape) if a not in axes) + (min(shape[a] for a in axes),)


def _dyn_index(c: PrimCall) -> str:
    """Runtime positions (i64 scalars; others are converted: a u8 tensor would be a mask)."""
    idx = [i if t.dtype == "i64" else f"{i}.to(torch.int64)"
           for i, t in zip(c.args[1:], c.types[1:])]
    return f"{c.x}[{', '.join(idx)}]" if idx else c.x


def _index(c: PrimCall) -> str:
    items = tuple(freeze(c.attrs["items"]))
    return f"{c.x}[{', '.join(slice_item_code(i) for i in items)}]" if items else c.x


def _gather(c: PrimCall) -> str:
    """A gather: `_ln_gather` masks positions outside their axis to 0 and clamps them."""
    return f"_ln_gather({c.x}, {c.axes!r}, {', '.join(c.args[1:])})"


def _scatter_add(c: PrimCall) -> str:
    return (f"_ln_scatter_add({c.x}, {shape_code(c.result.shape)}, {c.axes!r}, "
            f"{', '.join(c.args[1:])})")


def _concat(c: PrimCall) -> str:
    items = ", ".join(c.args) + ("," if len(c.args) == 1 else "")
    return f"torch.cat(({items}), dim={c.axis})"


def _iota(c: PrimCall) -> str:
    (n,) = c.result.shape
    return cast_expr(f"torch.arange({attr_int(n)}, dtype=torch.int64, device=_d)", "i64",
                     c.result.dtype)


def _cumsum(c: PrimCall) -> str:
    d = c.result.dtype
    x = cast_expr(c.x, c.tx.dtype, d)
    return _wrap(f"torch.cumsum({x}, dim={c.axis}, dtype={torch_dtype(d)})", d)


#: The functions the rows of `linnet.prims` name for PyTorch (`Via`).
FUNCTIONS = {
    "binary": lambda c: _binary(c.op, c.args[0], c.args[1], c.types[0], c.types[1]),
    "unary": lambda c: _unary(c.op, c.x, c.tx),
    "cast": lambda c: cast_expr(c.x, c.tx.dtype, c.result.dtype),
    "broadcast_to": lambda c: shaped_call("torch.broadcast_to", c.x, c.result.shape),
    "reshape": lambda c: shaped_call("torch.reshape", c.x, c.result.shape),
    "permute": lambda c: f"torch.permute({c.x}, {attr_ints(c.attrs['perm'])!r})",
    "concat": _concat,
    "index": _index,
    "dyn_index": _dyn_index,
    "gather": _gather,
    "scatter_add": _scatter_add,
    "iota": _iota,
    "fill": lambda c: shaped_call("torch.broadcast_to",
                                  cast_expr(c.x, c.tx.dtype, c.result.dtype), c.result.shape),
    "cumsum": _cumsum,
    "reduce": lambda c: _reduce(c.op[len("reduce_"):], c.x, c.tx, c.result, c.axes),
    "diagonal": lambda c: _diagonal(c.x, c.tx, c.axes),
    "dot": lambda c: _dot(c.args, c.types, c.result),
}


def prim_expr(op: str, args: Sequence[str], arg_types: Sequence[ir.Ty], result: ir.Ty,
              attrs: Any = ()) -> str:
    """The Python expression computing `Prim(op, args)`, over operand names `args`: as its
    row in `linnet.prims` says (a template, or a function of `FUNCTIONS`)."""
    tys = list(arg_types)
    ir.check_prim_operands(op, args, tys, result)
    _dtype(result.dtype)
    for t in tys:
        _dtype(t.dtype)
    call = PrimCall(op, tuple(args), tuple(tys), result, dict(attrs))
    return print_form(prims.row(op).torch, call, FUNCTIONS, "torch")


_EINSUM_SPEC = re.compile(r"^[A-Za-z]*(,[A-Za-z]*)*->[A-Za-z]*$")


def einsum_expr(spec: str, args: Sequence[str], arg_types: Sequence[ir.Ty], result: ir.TType,
                acc: str = "") -> str:
    """`Einsum(spec, args)`: operands cast to `acc`, contracted in `acc`, cast to the result."""
    if not isinstance(spec, str) or not _EINSUM_SPEC.match(spec):
        raise ValueError(f"bad einsum spec {spec!r}")
    if len(spec.split("->")[0].split(",")) != len(args):
        raise ValueError(f"einsum {spec!r} with {len(args)} operands")
    acc = _dtype(acc or result.dtype)
    xs = [cast_expr(x, t.dtype, acc) for x, t in zip(args, arg_types)]
    if is_float(acc):
        body = f"torch.einsum({spec!r}, {', '.join(xs)})"
    elif is_int(acc):
        # integer contractions: broadcast products and a sum (CUDA has no integer matmul)
        body = _wrap(f"_ln_einsum_int({spec!r}, {torch_dtype(acc)}, {', '.join(xs)})", acc)
    else:
        raise ValueError(f"einsum in {acc}")
    return cast_expr(body, acc, result.dtype)


def loop_index_expr(i: str) -> str:
    """A counted loop's index, the Python int `i`, as the i64 0-d tensor the IR reads.

    Loops count with a Python `range`, which holds no trips: `torch.arange(lo, hi)` would
    materialise every index before the first trip (8 GB for 10**9 trips)."""
    return f"torch.full((), {i}, dtype=torch.int64, device=_d)"


def empty_expr(ty: ir.TType) -> str:
    """An empty tensor of a type (a scan of no trips)."""
    return f"torch.empty({shape_code(ty.shape)}, dtype={torch_dtype(ty.dtype)}, device=_d)"


def input_expr(x: str, ty: ir.TType) -> str:
    """An input of `main`: checked against its type and brought into storage."""
    return (f"_ln_arg({x}, {public_dtype(ty.dtype)}, {torch_dtype(ty.dtype)}, "
            f"{shape_code(ty.shape)}, _d)")


def output_expr(x: str, ty: ir.TType) -> str:
    """An output of `main`: the declared dtype and shape, contiguous."""
    return f"_ln_out({x}, {public_dtype(ty.dtype)}, {shape_code(ty.shape)})"
