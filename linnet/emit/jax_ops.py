"""How each tensor-IR primitive is computed with JAX: the table of the JAX printer.

The generated module's `main` runs with 64-bit types enabled (`jax.enable_x64(True)` for
the call), so every Linnet dtype is a JAX dtype of its own, unsigned ones included, and
XLA's integer semantics are the language's (docs/language.md, "Types and generics", `docs/ir.md`):

- Integer arithmetic wraps; `div` (`lax.div`) truncates toward zero and `mod` (`lax.rem`)
  takes the sign of the dividend; `MIN / -1` is `MIN` and `MIN % -1` is 0 in XLA. An
  integer `/` or `%` by zero gives 0, as on every backend: the divisor is 1 there and the
  quotient 0 (XLA alone would give -1 and the dividend).
- Float `div` is true division; float `mod` is `lax.rem`, C's `fmod`.
- Float-to-int `cast` truncates toward zero; a cast to bool is `!= 0`; integer casts keep
  the low bits.
- `shl` is `lax.shift_left`, `shr` is arithmetic on signed dtypes and logical on unsigned
  ones; counts of the width or more give 0 or the sign, as the language says.
- `min`/`max` and their reductions propagate NaN; an empty `max` is the dtype's lowest value.
- f16/bf16 sums, products of sums (`einsum`, `dot`) and scans accumulate in f32 and round
  once, as the PyTorch backends do.
- Contractions (`einsum`, `dot`) run at full precision (`lax.Precision.HIGHEST`) unless
  `--numerics fast`.

Operands are JAX arrays named by plain identifiers (literals are 0-d arrays of their dtype,
made by `literal_expr`, so no weak typing ever promotes an operand).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..ir import tensor as ir
from . import kernel_numerics as kn
from .torch_ops import (BITS, FLOATS, SIGNED, UNSIGNED, _index_item, _int, _ints, freeze,
                        is_float, py_scalar, shape_code)

JNP = {"bool": "bool_", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
       "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
       "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}
HALF = ("f16", "bf16")
_ARITH = {"add": "+", "sub": "-", "mul": "*"}
_BITWISE = {"and": "&", "or": "|", "xor": "^"}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_MATH = ("exp", "log", "sqrt", "sin", "cos", "tanh")


def jnp_dtype(dtype: str) -> str:
    if dtype not in JNP:
        raise ValueError(f"unknown dtype {dtype!r}")
    return "jnp." + JNP[dtype]


def value_of(value: bool | int | float, dtype: str) -> bool | int | float:
    """A literal's value in its dtype: integers wrapped to the width (unsigned ones
    non-negative), floats as floats."""
    if dtype == "bool":
        return bool(value)
    if is_float(dtype):
        return float(value)
    bits = BITS[dtype]
    v = int(value) % (1 << bits)
    return v - (1 << bits) if dtype in SIGNED and v >= 1 << (bits - 1) else v


def literal_expr(value: bool | int | float, dtype: str) -> str:
    return f"jnp.asarray({py_scalar(value_of(value, dtype))}, dtype={jnp_dtype(dtype)})"


def cast_expr(x: str, src: str, dst: str) -> str:
    if src == dst:
        return x
    if dst == "bool":
        return f"({x} != 0)"
    return f"lax.convert_element_type({x}, {jnp_dtype(dst)})"


def _work(dtype: str) -> str:
    """The dtype a sum of `dtype` values accumulates in (`kn.accumulates_in`)."""
    return kn.accumulates_in("reduce_sum", dtype)


def precision(numerics: str) -> str:
    """The `lax.Precision` of contractions under `numerics`
    (`kn.reduced_precision_contractions`)."""
    if kn.reduced_precision_contractions(numerics):
        return "lax.Precision.DEFAULT"
    return "lax.Precision.HIGHEST"


def _fit(x: str, tx: ir.TType, shape: tuple[int, ...]) -> str:
    """An operand broadcast to the result's shape, for `lax` functions: unlike `jnp` and the
    operators, they take operands of one shape only, while the IR's elementwise primitives
    broadcast lower-rank and size-1 operands (numpy's rule)."""
    return x if tuple(tx.shape) == tuple(shape) else f"jnp.broadcast_to({x}, {shape_code(shape)})"


def _nonzero(b: str) -> str:
    """An integer divisor with its zeros made 1: `x / 0` and `x % 0` are 0 in the language,
    and the quotient by 1 is then masked (`div`) or already 0 (`mod`)."""
    return f"jnp.where({b} == 0, jnp.ones_like({b}), {b})"


def _binary(op: str, a: str, b: str, ta: ir.TType, tb: ir.TType,
            shape: tuple[int, ...]) -> str:
    d = ta.dtype
    if op in _ARITH:
        return f"({a} {_ARITH[op]} {b})"
    if op in ("div", "mod", "shl", "shr") and not (op == "div" and is_float(d)):
        a, b = _fit(a, ta, shape), _fit(b, tb, shape)  # lax.div, lax.rem, lax.shift_*
    if op == "div":
        if is_float(d):
            return f"({a} / {b})"
        return f"jnp.where({b} == 0, 0, lax.div({a}, {_nonzero(b)}))"
    if op == "mod":
        return f"lax.rem({a}, {b})" if is_float(d) else f"lax.rem({a}, {_nonzero(b)})"
    if op in ("min", "max"):
        return f"jnp.{'minimum' if op == 'min' else 'maximum'}({a}, {b})"
    if op in _BITWISE:
        return f"({a} {_BITWISE[op]} {b})"
    if op in _COMPARE:
        return f"({a} {_COMPARE[op]} {b})"
    if op in ("shl", "shr"):
        count = b if tb.dtype == d else cast_expr(b, tb.dtype, d)
        fn = ("shift_left" if op == "shl" else
              "shift_right_logical" if d in UNSIGNED else "shift_right_arithmetic")
        return f"lax.{fn}({a}, {count})"
    raise ValueError(f"unknown binary primitive {op!r}")


def _unary(op: str, a: str, ta: ir.TType, precise_rsqrt: bool = False) -> str:
    if op == "neg":
        return f"(-{a})"
    if op == "not":
        return f"(~{a})"  # logical on bool, bitwise on integers
    if op == "abs":
        return a if ta.dtype in UNSIGNED else f"jnp.abs({a})"
    if op == "rsqrt":
        return f"(1 / jnp.sqrt({a}))" if precise_rsqrt else f"lax.rsqrt({a})"
    if op in _MATH:
        return f"jnp.{op}({a})"
    raise ValueError(f"unknown unary primitive {op!r}")


def _in_f32(op: str, args: Sequence[str], tys: Sequence[ir.TType], result: ir.TType,
            attrs: dict, numerics: str, nan_guard: bool) -> str:
    """A half-precision `op` computed on f32 operands and rounded to the result's dtype, as
    `kn.computes_in_f32` says a kernel computes it (Pallas's Triton lowering has no
    f16/bf16 division: it fails to compile on the GPU)."""
    wide = [cast_expr(x, t.dtype, "f32") for x, t in zip(args, tys)]
    wide_tys = [ir.TType(t.shape, "f32") for t in tys]
    inner = prim_expr(op, wide, wide_tys, ir.TType(result.shape, "f32"), attrs, numerics,
                      nan_guard, kernel=True)
    return cast_expr(inner, "f32", result.dtype)


def _lowest(dtype: str) -> bool | int | float:
    if is_float(dtype):
        return -math.inf
    return 0 if dtype in UNSIGNED else -(1 << (BITS[dtype] - 1))


def _highest(dtype: str) -> bool | int | float:
    if is_float(dtype):
        return math.inf
    return (1 << BITS[dtype]) - 1 if dtype in UNSIGNED else (1 << (BITS[dtype] - 1)) - 1


def _reduce(op: str, x: str, tx: ir.TType, tr: ir.TType, axes: tuple[int, ...],
            nan_guard: bool = True) -> str:
    axes = tuple(sorted({a % tx.rank if tx.rank else a for a in axes}))
    d = tr.dtype
    if not axes:
        return cast_expr(x, tx.dtype, d)
    dims = repr(axes)
    if op in ("sum", "prod"):
        w = _work(d)
        total = f"jnp.{op}({cast_expr(x, tx.dtype, w)}, axis={dims}, dtype={jnp_dtype(w)})"
        return cast_expr(total, w, d)
    x = cast_expr(x, tx.dtype, d)
    if op in ("max", "min"):
        init = _lowest(d) if op == "max" else _highest(d)
        # a typed initial: a bare Python int past i64 (the u64 maximum) overflows jit
        extreme = f"jnp.{op}({x}, axis={dims}, initial={literal_expr(init, d)})"
        if nan_guard and is_float(d):  # XLA's vectorised CPU reductions can skip NaN
            return f"jnp.where(jnp.isnan({x}).any(axis={dims}), jnp.nan, {extreme})"
        return extreme
    if op in ("any", "all"):
        return f"jnp.{op}({x}, axis={dims})"
    raise ValueError(f"unknown reduction reduce_{op}")


def _diagonal(x: str, tx: ir.TType, axes: tuple[int, ...]) -> str:
    """Merge `axes` into one axis, placed last (as `numpy.diagonal`)."""
    rank = tx.rank
    axes = tuple(a % rank for a in axes)
    rest = tuple(a for a in range(rank) if a not in axes)
    perm = rest + axes
    if perm != tuple(range(rank)):
        x = f"jnp.transpose({x}, {perm!r})"
    for _ in range(len(axes) - 1):
        x = f"jnp.diagonal({x}, 0, -2, -1)"
    return x


def _dot(args: Sequence[str], tys: Sequence[ir.TType], result: ir.TType, numerics: str) -> str:
    """`acc + a @ b`: the operands cast to the result dtype (exact for half operands of an
    f32 result); a half result is computed in f32 and rounded once."""
    w = _work(result.dtype)
    a, b = (cast_expr(x, t.dtype, w) for x, t in zip(args[:2], tys[:2]))
    product = cast_expr(f"jnp.matmul({a}, {b}, precision={precision(numerics)})", w,
                        result.dtype)
    return f"({args[2]} + {product})" if len(args) == 3 else product


def einsum_expr(spec: str, args: Sequence[str], arg_types: Sequence[ir.TType],
                result: ir.TType, acc: str = "", numerics: str = "equivalent") -> str:
    """`Einsum(spec, args)`: operands cast to the accumulator, contracted, cast back."""
    acc = acc or result.dtype
    w = _work(acc)
    xs = ", ".join(cast_expr(x, t.dtype, w) for x, t in zip(args, arg_types))
    how = f", precision={precision(numerics)}" if is_float(w) else ""
    total = f"jnp.einsum({spec!r}, {xs}{how}, preferred_element_type={jnp_dtype(w)})"
    return cast_expr(cast_expr(total, w, acc), acc, result.dtype)


def _nowhere(result: ir.TType) -> str:
    """A runtime read along an axis of extent 0: every position is out of range, so the
    value is undefined (docs/language.md, "Statements and expressions") and never used
    where the program is right (a
    loop of no trips, a branch not taken). JAX still traces that code and refuses to index
    an empty axis, so the read gives zeros of the result type instead."""
    return f"jnp.zeros({shape_code(result.shape)}, dtype={jnp_dtype(result.dtype)})"


def prim_expr(op: str, args: Sequence[str], arg_types: Sequence[ir.Ty], result: ir.Ty,
              attrs: Any = (), numerics: str = "equivalent", nan_guard: bool = True,
              kernel: bool = False) -> str:
    """The JAX expression computing `Prim(op, args)`, over operand names `args`.

    `nan_guard`: float max/min reductions give NaN where their slice holds one (see
    `_reduce`); off in Pallas kernels, whose reductions compile to Triton's, which do.
    `kernel`: the expression is a Pallas kernel's, computed as `kernel_numerics` says
    (f16/bf16 division, remainder and math in f32, rounded once: `_in_f32`; `rsqrt` as
    `kn.precise_rsqrt` says). Off, XLA computes op bodies as it likes."""
    attrs = dict(attrs)
    tys = list(arg_types)
    ir.check_prim_operands(op, args, tys, result)
    if kernel and kn.computes_in_f32(op, result.dtype):
        return _in_f32(op, args, tys, result, attrs, numerics, nan_guard)
    a = args[0] if args else ""
    ta = tys[0] if tys else None
    if ir.PRIMS[op][0] == 2:
        return _binary(op, args[0], args[1], tys[0], tys[1], result.shape)
    if op in ("neg", "not", "abs", "rsqrt") + _MATH:
        return _unary(op, a, ta, kernel and kn.precise_rsqrt(result.dtype, numerics))
    if op == "select":
        return f"jnp.where({args[0]}, {args[1]}, {args[2]})"
    if op == "cast":
        return cast_expr(a, ta.dtype, result.dtype)
    if op == "broadcast_to":
        return f"jnp.broadcast_to({a}, {shape_code(result.shape)})"
    if op == "reshape":
        return f"jnp.reshape({a}, {shape_code(result.shape)})"
    if op == "permute":
        return f"jnp.transpose({a}, {_ints(attrs['perm'])!r})"
    if op == "concat":
        items = ", ".join(args) + ("," if len(args) == 1 else "")
        return f"jnp.concatenate(({items}), axis={_int(attrs['axis'])})"
    if op == "index":
        items = tuple(freeze(attrs["items"]))
        return f"{a}[{', '.join(_index_item(i) for i in items)}]" if items else a
    if op == "dyn_index":
        if any(n == 0 for n in ta.shape[:len(args) - 1]):
            return _nowhere(result)
        return f"{a}[{', '.join(args[1:])}]" if len(args) > 1 else a
    if op == "iota":
        (n,) = result.shape
        return cast_expr(f"jnp.arange({_int(n)}, dtype=jnp.int64)", "i64", result.dtype)
    if op == "fill":
        return f"jnp.broadcast_to({cast_expr(a, ta.dtype, result.dtype)}, " \
               f"{shape_code(result.shape)})"
    if op == "cumsum":
        w = _work(result.dtype)
        x = cast_expr(a, ta.dtype, w)
        total = f"jnp.cumsum({x}, axis={_int(attrs['axis'])}, dtype={jnp_dtype(w)})"
        return cast_expr(total, w, result.dtype)
    if op.startswith("reduce_"):
        return _reduce(op[len("reduce_"):], a, ta, result, _ints(attrs["axes"]), nan_guard)
    if op == "diagonal":
        return _diagonal(a, ta, _ints(attrs["axes"]))
    if op == "dot":
        return _dot(args, tys, result, numerics)
    raise ValueError(f"no JAX lowering for primitive {op!r}")
