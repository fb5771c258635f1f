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

from typing import Any, Sequence

from .. import prims
from ..ir import tensor as ir
from ..ir import kernel_numerics as kn
from .common import (BITS, FLOATS, HALF, SIGNED, UNSIGNED, PrimCall, attr_int,  # noqa: F401
                     attr_ints, freeze, gathered_first, highest_value, is_float, lowest_value,
                     print_form, py_scalar, shape_code, shaped_call, slice_item_code)

JNP = {"bool": "bool_", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
       "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
       "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}
_ARITH = {"add": "+", "sub": "-", "mul": "*"}
_BITWISE = {"and": "&", "or": "|", "xor": "^"}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


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
        init = lowest_value(d) if op == "max" else highest_value(d)
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


def _concat(c: PrimCall) -> str:
    items = ", ".join(c.args) + ("," if len(c.args) == 1 else "")
    return f"jnp.concatenate(({items}), axis={c.axis})"


def _index(c: PrimCall) -> str:
    items = tuple(freeze(c.attrs["items"]))
    return f"{c.x}[{', '.join(slice_item_code(i) for i in items)}]" if items else c.x


def _dyn_index(c: PrimCall) -> str:
    if any(n == 0 for n in c.tx.shape[:len(c.args) - 1]):
        return _nowhere(c.result)
    return f"{c.x}[{', '.join(c.args[1:])}]" if len(c.args) > 1 else c.x


def _positions(c: PrimCall, table: tuple[int, ...]) -> tuple[str, str]:
    """A gather's positions made safe: where all lie inside their axes (broadcast over the
    table's other axes), and the index tuple, each position clamped into its axis. Both
    read the positions as i64 (a u64 above the i64 range wraps negative: outside too)."""
    wide = [(k, f"{p}.astype(jnp.int64)") for k, p in zip(c.axes, c.args[1:])]
    inside = " & ".join(f"({q} >= 0) & ({q} < {table[k]})" for k, q in wide)
    keys = ", ".join(f"jnp.clip({q}, 0, {table[k] - 1})" for k, q in wide)
    spread = ", None" * (len(table) - len(c.axes))
    return f"({inside})[...{spread}]", f"({keys},)"


def _gather(c: PrimCall) -> str:
    """A gather: positions outside their axis read 0; the others, clamped, index the table
    with its gathered axes moved first."""
    table = c.tx.shape
    if any(table[k] == 0 for k in c.axes):
        return _nowhere(c.result)
    inside, keys = _positions(c, table)
    order = gathered_first(len(table), c.axes)
    x = c.x if order == tuple(range(len(table))) else f"jnp.transpose({c.x}, {order!r})"
    return f"jnp.where({inside}, {x}[{keys}], jnp.zeros((), dtype={jnp_dtype(c.tx.dtype)}))"


def _scatter_add(c: PrimCall) -> str:
    """The adjoint of a gather: g added into zeros at the positions that lie inside."""
    table = c.result.shape
    if any(table[k] == 0 for k in c.axes):
        return _nowhere(c.result)
    order = gathered_first(len(table), c.axes)
    zeros = f"jnp.zeros({shape_code(tuple(table[k] for k in order))}, " \
            f"dtype={jnp_dtype(c.result.dtype)})"
    inside, keys = _positions(c, table)
    g = f"jnp.where({inside}, {c.x}, jnp.zeros((), dtype={jnp_dtype(c.tx.dtype)}))"
    out = f"{zeros}.at[{keys}].add({g})"
    back = tuple(order.index(k) for k in range(len(table)))
    return out if back == tuple(range(len(table))) else f"jnp.transpose({out}, {back!r})"


def _iota(c: PrimCall) -> str:
    (n,) = c.result.shape
    return cast_expr(f"jnp.arange({attr_int(n)}, dtype=jnp.int64)", "i64", c.result.dtype)


def _cumsum(c: PrimCall) -> str:
    w = _work(c.result.dtype)
    x = cast_expr(c.x, c.tx.dtype, w)
    total = f"jnp.cumsum({x}, axis={c.axis}, dtype={jnp_dtype(w)})"
    return cast_expr(total, w, c.result.dtype)


def functions(numerics: str, nan_guard: bool, kernel: bool) -> dict:
    """The functions the rows of `linnet.prims` name for JAX (`Via`), under the options."""
    return {
        "binary": lambda c: _binary(c.op, c.args[0], c.args[1], c.types[0], c.types[1],
                                    c.result.shape),
        "unary": lambda c: _unary(c.op, c.x, c.tx),
        "rsqrt": lambda c: _unary(c.op, c.x, c.tx,
                                  kernel and kn.precise_rsqrt(c.result.dtype, numerics)),
        "cast": lambda c: cast_expr(c.x, c.tx.dtype, c.result.dtype),
        "broadcast_to": lambda c: shaped_call("jnp.broadcast_to", c.x, c.result.shape),
        "reshape": lambda c: shaped_call("jnp.reshape", c.x, c.result.shape),
        "permute": lambda c: f"jnp.transpose({c.x}, {attr_ints(c.attrs['perm'])!r})",
        "concat": _concat,
        "index": _index,
        "dyn_index": _dyn_index,
        "gather": _gather,
        "scatter_add": _scatter_add,
        "iota": _iota,
        "fill": lambda c: shaped_call("jnp.broadcast_to",
                                      cast_expr(c.x, c.tx.dtype, c.result.dtype), c.result.shape),
        "cumsum": _cumsum,
        "reduce": lambda c: _reduce(c.op[len("reduce_"):], c.x, c.tx, c.result, c.axes,
                                    nan_guard),
        "diagonal": lambda c: _diagonal(c.x, c.tx, c.axes),
        "dot": lambda c: _dot(c.args, c.types, c.result, numerics),
    }


def prim_expr(op: str, args: Sequence[str], arg_types: Sequence[ir.Ty], result: ir.Ty,
              attrs: Any = (), numerics: str = "equivalent", nan_guard: bool = True,
              kernel: bool = False) -> str:
    """The JAX expression computing `Prim(op, args)`, over operand names `args`, as its row
    in `linnet.prims` says (a template, or a function of `functions`).

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
    call = PrimCall(op, tuple(args), tuple(tys), result, attrs)
    return print_form(prims.row(op).jax, call, functions(numerics, nan_guard, kernel), "JAX")
