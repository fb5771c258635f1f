"""How each tile primitive of a kernel Func is written in Triton: the table of the Triton printer.

`linnet.emit.triton` lays out a kernel (parameters, bindings, control flow); this module
gives the text of each primitive, literal and cast, as `torch_ops` does for PyTorch. It
decides nothing about what a kernel computes, only how Triton spells the language's
semantics (docs/language.md, "Types and generics" and "Kernels", `docs/ir.md`):

- Every value is a typed Triton tensor: literals are `tl.full((), v, dtype)` (never bare
  Python numbers, whose type Triton would pick), `inf`/`nan` come from constexpr globals.
- Integer arithmetic wraps natively. Triton's integer `//` and `%` truncate toward zero
  (C semantics; the interpreter models the same); `MIN / -1` and `MIN % -1` are routed
  through `_lt_sdiv`/`_lt_smod` so they give `MIN` and 0 instead of undefined behaviour,
  and a zero divisor through them and `_lt_udiv`/`_lt_umod` so that `x / 0` and `x % 0`
  give 0, as on every backend.
  Float `%` is `fmod` (`frem`).
- Shifts: `>>` is arithmetic on signed and logical on unsigned dtypes (Triton follows the
  signedness); counts of the width or more give 0 (or the sign for signed `shr`), where
  LLVM would give poison.
- Float `min`/`max` and their reductions propagate NaN (`PropagateNan.ALL`).
- Numerics are `linnet.ir.kernel_numerics`'s, spelled here: f16/bf16 division,
  remainder and math computed in f32 and rounded back (`computes_in_f32`), sums, products
  and scans accumulated in f32 (`accumulates_in`); a correctly rounded f32 division and
  square root (`rounded`) is `tl.div_rn`/`tl.sqrt_rn`, since Triton's `/` and `tl.sqrt` are
  the device's approximations for f32 (for f64 they are IEEE already); `rsqrt` is
  `tl.rsqrt` (`precise_rsqrt`); a tile product's `precision` attribute is Triton's
  `input_precision` (`tile_product_precision`). Half dtypes are spelled `_lt_f16`/`_lt_bf16`,
  which the generated module sets to `tl.float32` under the interpreter (see
  `linnet.emit.triton.PRELUDE`).
- Unsigned dtypes are Triton's own (`tl.uint16` ...): launchers hand kernels tensors of
  torch's unsigned dtypes, not the wider storage the torch bodies use.
"""

from __future__ import annotations

import math
from typing import Sequence

from .. import prims
from ..ir import tensor as ir
from ..ir import kernel_numerics as kn
from .common import (BITS, SIGNED, UNSIGNED, PrimCall, attr_int, attr_ints, freeze, is_float,
                     print_form, scalar_value)

# ------------------------------------------------------------------ dtypes

TL = {"bool": "tl.int1", "i8": "tl.int8", "i16": "tl.int16", "i32": "tl.int32",
      "i64": "tl.int64", "u8": "tl.uint8", "u16": "tl.uint16", "u32": "tl.uint32",
      "u64": "tl.uint64", "f16": "_lt_f16", "bf16": "_lt_bf16", "f32": "tl.float32",
      "f64": "tl.float64"}
HALF = ("f16", "bf16")
#: Triton widens these in `tl.sum`, `tl.max`, `tl.cumsum`: results are cast back.
NARROW = ("i8", "i16", "u8", "u16", "f16", "bf16")


def tl_dtype(dtype: str) -> str:
    if dtype not in TL:
        raise ValueError(f"unknown dtype {dtype!r}")
    return TL[dtype]


def literal_expr(value: bool | int | float, dtype: str) -> str:
    """A typed rank-0 tensor holding a literal (an unsigned value as itself, not its storage)."""
    value = scalar_value(value)
    if dtype == "bool":
        text = "1" if value else "0"
    elif is_float(dtype):
        v = float(value)
        text = ("_lt_nan" if math.isnan(v) else ("_lt_inf" if v > 0 else "-_lt_inf")
                if math.isinf(v) else repr(v))
    else:
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"literal {value!r} is not an integer for {dtype}")
            value = int(value)
        bits = BITS[dtype]
        v = int(value) % (1 << bits)
        if dtype in SIGNED and v >= 1 << (bits - 1):
            v -= 1 << bits
        text = str(v)
    return f"tl.full((), {text}, {tl_dtype(dtype)})"


def cast_expr(x: str, src: str, dst: str) -> str:
    """Convert a tile; to bool is `!= 0`, float to int truncates (Triton's `fptosi`)."""
    if src == dst:
        return x
    if dst == "bool":
        return f"({x} != 0)"
    return f"{x}.to({tl_dtype(dst)})"


def _up(x: str, dtype: str) -> str:
    """A half tile widened to f32 (for math Triton only has in f32)."""
    return f"{x}.to(tl.float32)" if dtype in HALF else x


def _widen(x: str, op: str, dtype: str) -> str:
    """An operand of `op` in the dtype the policy computes it in (`kn.work_dtype`)."""
    return f"{x}.to(tl.float32)" if kn.computes_in_f32(op, dtype) else x


def _narrow(text: str, op: str, dtype: str) -> str:
    """`op`'s result, computed as `_widen` says, rounded back to `dtype`."""
    return f"{text}.to({tl_dtype(dtype)})" if kn.computes_in_f32(op, dtype) else text


def _rn(op: str, dtype: str, numerics: str) -> bool:
    """Spell `op` with Triton's correctly rounded form (`tl.div_rn`, `tl.sqrt_rn`)? Where the
    policy asks for the rounded result and the work is f32: Triton's f32 `/` and `tl.sqrt`
    are the device's approximations, its f64 ones IEEE already."""
    return kn.rounded(op, dtype, numerics) and kn.work_dtype(op, dtype) == "f32"


# ------------------------------------------------------------ elementwise

_ARITH = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^",
          "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _binary(op: str, a: str, b: str, ta: ir.TType, tb: ir.TType, numerics: str) -> str:
    d = ta.dtype
    if op in _ARITH:
        text = f"({a} {_ARITH[op]} {b})"
        return f"({text} != 0)" if _scalar_bool_meets_tile(op, ta, tb) else text
    if op == "div":
        if is_float(d):
            x, y = _widen(a, op, d), _widen(b, op, d)
            quotient = f"tl.div_rn({x}, {y})" if _rn(op, d, numerics) else f"({x} / {y})"
            return _narrow(quotient, op, d)
        return f"_lt_sdiv({a}, {b})" if d in SIGNED else f"_lt_udiv({a}, {b})"
    if op == "mod":
        if is_float(d):
            return _narrow(f"({_widen(a, op, d)} % {_widen(b, op, d)})", op, d)
        return f"_lt_smod({a}, {b})" if d in SIGNED else f"_lt_umod({a}, {b})"
    if op in ("min", "max"):
        fn = "tl.minimum" if op == "min" else "tl.maximum"
        nan = ", propagate_nan=tl.PropagateNan.ALL" if is_float(d) else ""
        return f"{fn}({a}, {b}{nan})"
    if op in ("shl", "shr"):
        return _shift(op, a, b, ta, tb)
    raise ValueError(f"unknown binary primitive {op!r}")


def _shift(op: str, a: str, b: str, ta: ir.TType, tb: ir.TType) -> str:
    """Shifts with the language's large counts: 0, or the sign for signed `shr`."""
    bits = BITS[ta.dtype]
    count = f"tl.minimum({b}, {bits - 1})"
    if tb.dtype != ta.dtype:
        count = f"{count}.to({tl_dtype(ta.dtype)})"
    if op == "shr" and ta.dtype in SIGNED:
        return f"({a} >> {count})"
    sym = "<<" if op == "shl" else ">>"
    return f"tl.where({b} < {bits}, {a} {sym} {count}, 0)"


def _unary(op: str, a: str, ta: ir.TType, numerics: str) -> str:
    d = ta.dtype
    if op == "neg":
        return f"(-{a})"
    if op == "not":
        return f"(~{a})"  # logical on int1, bitwise on integers
    if op == "abs":
        return a if d in UNSIGNED else f"tl.abs({a})"
    raise ValueError(f"unknown unary primitive {op!r}")


def _sqrt(c: PrimCall, numerics: str) -> str:
    d, x = c.tx.dtype, c.x
    return f"tl.sqrt_rn({x})" if _rn(c.op, d, numerics) else f"tl.sqrt({x})"


def _rsqrt(c: PrimCall, numerics: str) -> str:
    precise = kn.precise_rsqrt(c.tx.dtype, numerics)
    return f"tl.div_rn(1.0, tl.sqrt_rn({c.x}))" if precise else f"tl.rsqrt({c.x})"


def _math(form: object, c: PrimCall, numerics: str) -> str:
    """A float function: its operand widened as the policy says, the function, the result
    rounded back (`_widen`, `_narrow`)."""
    d = c.tx.dtype
    wide = PrimCall(c.op, (_widen(c.x, c.op, d),), c.types, c.result, c.attrs)
    return _narrow(print_form(form, wide, functions(numerics), "Triton"), c.op, d)


# ----------------------------------------------------------------- shapes

def _insert_axes(x: str, src: tuple[int, ...], dst: tuple[int, ...]) -> str | None:
    """`x[:, None]`-style indexing when dst is src with size-1 axes inserted, else None."""
    items, k = [], 0
    for n in dst:
        if k < len(src) and n == src[k]:
            items.append(":")
            k += 1
        elif n == 1:
            items.append("None")
        else:
            return None
    return f"{x}[{', '.join(items)}]" if k == len(src) else None


def _scalar_bool_meets_tile(op: str, ta: ir.TType, tb: ir.TType) -> bool:
    """A logical op of a bool scalar and a bool tile, `odd && inside[j]`: Triton's
    interpreter holds a 0-d comparison's bool as an integer, and `&` with a tile then gives
    integers, which a load, store or atomic refuses as a mask ("mask has unsupported
    dtype"); the printer compares the result with 0 (compiled, that folds away)."""
    return (op in ("and", "or", "xor") and ta.dtype == "bool"
            and (ta.rank == 0) != (tb.rank == 0))


def _splat(x: str, dst: tuple[int, ...], dtype: str) -> str:
    """A scalar spread over a tile. A bool is compared with 0 after it: Triton's interpreter
    spreads a 0-d bool into integers, which a load, store or atomic refuses as a mask
    ("mask has unsupported dtype"); compiled, the comparison of an i1 folds away."""
    splat = f"tl.broadcast_to({x}, {dst!r})"
    return f"({splat} != 0)" if dtype == "bool" else splat


def _reshape(x: str, src: tuple[int, ...], dst: tuple[int, ...], dtype: str) -> str:
    if src == dst:
        return x
    if not src:  # a scalar to a tile of ones: a splat
        return _splat(x, dst, dtype)
    if not dst:  # a one-element tile to a scalar: reduce it (the combine never runs)
        return f"tl.reduce({x}, None, _lt_first)"
    inserted = _insert_axes(x, src, dst)
    return inserted if inserted is not None else f"tl.reshape({x}, {dst!r})"


def _broadcast(x: str, src: tuple[int, ...], dst: tuple[int, ...], dtype: str) -> str:
    if src == dst:
        return x
    if not src:
        return _splat(x, dst, dtype)
    if len(src) < len(dst):  # numpy's leading axes, which tl.broadcast_to wants
        x = f"{x}[{', '.join(['None'] * (len(dst) - len(src)) + [':'] * len(src))}]"
    return f"tl.broadcast_to({x}, {dst!r})"


def _permute(x: str, perm: tuple[int, ...]) -> str:
    if perm == tuple(range(len(perm))):
        return x
    if len(perm) == 2:
        return f"tl.trans({x})"
    return f"tl.permute({x}, {perm!r})"


def _index(x: str, tx: ir.TType, items: tuple) -> str:
    """Only the trivial forms: full slices, and `at 0` on size-1 axes (tiles are not sliced)."""
    keep = []
    for axis, item in enumerate(items):
        item = freeze(item)
        n = tx.shape[axis]
        if item[0] == "slice" and tuple(item[1:]) in ((0, n, 1), (0, None, 1), (None, None, None)):
            keep.append(n)
        elif item[0] == "at" and n == 1 and item[1] == 0:
            continue
        else:
            raise ValueError(f"kernels cannot slice tiles: index {item!r} of {tx}")
    return _reshape(x, tx.shape, tuple(keep) + tx.shape[len(items):], tx.dtype)


# ------------------------------------------------------------- reductions

def _reduce(op: str, x: str, tx: ir.TType, tr: ir.TType, axes: tuple[int, ...]) -> str:
    """One axis at a time, the highest first, accumulating in the result dtype."""
    axes = tuple(sorted({a % tx.rank for a in axes}, reverse=True)) if tx.rank else ()
    d = tr.dtype
    if op in ("any", "all"):
        if not axes:
            return x
        x = f"{x}.to(tl.int32)"
        for a in axes:
            x = f"tl.{'max' if op == 'any' else 'min'}({x}, axis={a})"
        return f"({x} != 0)"
    x = cast_expr(x, tx.dtype, d)
    if not axes:
        return x
    x = _up(x, d)  # sums and products: kn.accumulates_in; max and min are exact in either
    for a in axes:
        if op == "sum":
            x = f"tl.sum({x}, axis={a})"
        elif op == "prod":
            x = f"tl.reduce({x}, {a}, _lt_mul)"
        elif op in ("max", "min") and is_float(d):
            x = f"tl.reduce({x}, {a}, _lt_f{op})"
        elif op in ("max", "min"):
            x = f"tl.{op}({x}, axis={a})"
        else:
            raise ValueError(f"unknown reduction reduce_{op}")
    return f"{x}.to({tl_dtype(d)})" if d in NARROW else x


def _cumsum(x: str, tx: ir.TType, tr: ir.TType, axis: int) -> str:
    d = tr.dtype
    x = cast_expr(cast_expr(x, tx.dtype, d), d, kn.accumulates_in("cumsum", d))
    x = f"tl.cumsum({x}, axis={axis % tx.rank})"
    return f"{x}.to({tl_dtype(d)})" if d in NARROW else x


# ------------------------------------------------------------- the table

def _no_slicing(c: PrimCall) -> str:
    raise ValueError(f"{c.op} is not available in kernels: tiles cannot be sliced, joined "
                     "or gathered from (load the memory instead)")


def functions(numerics: str) -> dict:
    """The functions the rows of `linnet.prims` name for Triton (`Via`), under `numerics`."""
    return {
        "binary": lambda c: _binary(c.op, c.args[0], c.args[1], c.types[0], c.types[1],
                                    numerics),
        "unary": lambda c: _unary(c.op, c.x, c.tx, numerics),
        "sqrt": lambda c: _sqrt(c, numerics),
        "rsqrt": lambda c: _rsqrt(c, numerics),
        "dot": lambda c: dot_expr(c.args, c.types, c.result, str(c.attrs.get("precision", ""))),
        "cast": lambda c: cast_expr(c.x, c.tx.dtype, c.result.dtype),
        "broadcast_to": lambda c: _broadcast(c.x, c.tx.shape, c.result.shape, c.result.dtype),
        "reshape": lambda c: _reshape(c.x, c.tx.shape, c.result.shape, c.result.dtype),
        "permute": lambda c: _permute(c.x, attr_ints(c.attrs["perm"])),
        "index": lambda c: _index(c.x, c.tx, tuple(freeze(c.attrs["items"]))),
        "iota": lambda c: cast_expr(f"tl.arange(0, {attr_int(c.result.shape[0])})", "i32",
                                    c.result.dtype),
        "fill": lambda c: _broadcast(cast_expr(c.x, c.tx.dtype, c.result.dtype), (),
                                     c.result.shape, c.result.dtype),
        "cumsum": lambda c: _cumsum(c.x, c.tx, c.result, c.axis),
        "reduce": lambda c: _reduce(c.op[len("reduce_"):], c.x, c.tx, c.result, c.axes),
        "program_id": lambda c: f"tl.program_id({c.axis})",
        "no_slicing": _no_slicing,
    }


def prim_expr(op: str, args: Sequence[str], arg_types: Sequence[ir.TType], result: ir.TType,
              attrs=(), numerics: str = "equivalent") -> str:
    """The Triton expression of a pure tile primitive over operand names `args`, as its row
    in `linnet.prims` says (a template, or a function of `functions`)."""
    ir.check_prim_operands(op, args, arg_types, result, kind="tiles")
    definition = prims.row(op)
    call = PrimCall(op, tuple(args), tuple(arg_types), result, dict(attrs))
    if definition.family == "math":
        return _math(definition.triton, call, numerics)
    return print_form(definition.triton, call, functions(numerics), "Triton")


def memory_stmt(op: str, ptr: str, args: Sequence[str], mem: ir.TType,
                types: Sequence[ir.Ty] = ()) -> str:
    """`load` (an expression), `store` and the atomics (statements); `args` follow the pointer,
    `types` are their types.

    A masked load without `other` reads 0 where the mask is false (Triton would leave it
    undefined). A scalar value or mask at a tile of offsets is broadcast to the tile
    (`tile_operands`).
    """
    offsets, *rest = tile_operands(op, args, types)
    where = f"{ptr} + {offsets}"
    if op == "load":
        if not rest:
            return f"tl.load({where})"
        other = rest[1] if len(rest) > 1 else literal_expr(0, mem.dtype)
        return f"tl.load({where}, mask={rest[0]}, other={other})"
    if op in ir.EFFECTS:
        fn = "tl.store" if op == "store" else f"tl.{op}"
        mask = f", mask={rest[1]}" if len(rest) > 1 else ""
        return f"{fn}({where}, {rest[0]}{mask})"
    raise ValueError(f"not a memory primitive: {op!r}")


def tile_operands(op: str, args: Sequence[str], types: Sequence[ir.Ty]) -> list[str]:
    """A memory access's operands after the pointer, each scalar value or mask broadcast to
    the tile of the offsets (`args[0]`); a load's `other` is left to Triton.

    docs/language.md, "Kernels" allows a scalar value (`store`, atomics) and a scalar mask at a
    tile of positions. Compiled Triton broadcasts them itself, but its interpreter
    (`TRITON_INTERPRET=1`) rejects a scalar mask ("mask has unsupported dtype"), so the
    generated code never relies on it: what it passes has the tile's shape. A bool scalar is
    compared with 0 after broadcasting (`_splat`), since the interpreter splats one as integers.
    """
    if not types or not types[0].shape:
        return list(args)
    tile = tuple(int(n) for n in types[0].shape)
    count = 2 if op == "load" else 3  # offsets and mask, or offsets, value and mask
    out = list(args)
    for k in range(1, min(count, len(args))):
        if types[k].rank == 0:
            out[k] = _splat(args[k], tile, types[k].dtype)
    return out


# ----------------------------------------------------------------- dot

_DOT_DTYPES = ("f16", "bf16", "f32")


def dot_expr(args: Sequence[str], types: Sequence[ir.TType], result: ir.TType,
             precision: str) -> str:
    """`tl.dot(a, b[, acc])` accumulating in f32; f32 operands at the given precision, the
    e-graph's `kn.tile_product_precision` ("ieee": full f32, "tf32": TF32)."""
    if result.dtype != "f32" or types[0].dtype not in _DOT_DTYPES:
        raise ValueError(f"tl.dot of {types[0].dtype} to {result.dtype}")
    extra = f", {args[2]}" if len(args) == 3 else ""
    how = f', input_precision="{precision}"' if precision else ""
    return f"tl.dot({args[0]}, {args[1]}{extra}{how}, out_dtype=tl.float32)"
