"""How each tensor-IR primitive is computed in StableHLO: the table of the StableHLO printer.

Every row writes operations through an `OpWriter`, which prints them in MLIR's generic form
(`%v3 = "stablehlo.add"(%v1, %v2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`). The
generic form is verbose but has one grammar for every operation and does not change between
releases of the dialect, so the text parses on every JAX that bundles StableHLO.

The semantics are the JAX table's (`jax_ops.py`), which are XLA's, row for row:

- Elementwise operands are broadcast to the result shape first (`broadcast_in_dim`, axes
  aligned on the right, size-1 axes stretched), since StableHLO never broadcasts implicitly.
- Integers wrap; `div` is `stablehlo.divide` (truncating; `MIN / -1` is `MIN`), `mod` is
  `stablehlo.remainder` (the dividend's sign; `fmod` for floats). An integer divisor of 0
  is made 1 and the quotient 0 (`int_div_mod`): the language's `x / 0` and `x % 0` are 0.
- `shl`/`shr` convert the count to the shifted dtype and use `shift_left`,
  `shift_right_arithmetic` (signed) or `shift_right_logical` (unsigned): counts of the width
  or more give 0, or the sign for an arithmetic shift, as `lax` does.
- Comparisons use `compare_type` SIGNED, UNSIGNED (unsigned and bool) or FLOAT (no total
  order: NaN compares unequal), as JAX lowers them.
- `min`/`max` are `stablehlo.minimum`/`maximum`, which propagate NaN (IEEE-754 minimum and
  maximum), the very operations `jnp.minimum`/`jnp.maximum` lower to. A float max or min
  reduction is also NaN where its slice holds one (`stablehlo_reductions`): XLA's vectorised CPU
  reductions can skip a NaN.
- `cast` is `stablehlo.convert` (float to integer truncates, integers keep their low bits),
  except to `bool`, which is `x != 0`.
- Sums, products, scans and contractions of f16/bf16 values run in f32 and round once;
  an empty `max` is the dtype's lowest value (`-inf` for floats), an empty `min` its highest.
- `dot` and `Einsum` are `dot_general` with `precision_config = [HIGHEST, HIGHEST]` unless
  the numerics are "fast".

The text is written by `OpWriter` (`stablehlo_writer.py`, with values, types and literals),
from the operations of `stablehlo_building_blocks.py`; the rows live in modules named for
what they compute: `stablehlo_elementwise.py`, `stablehlo_gathers.py` (index, gather,
scatter), `stablehlo_reductions.py` (scans, reductions, `dot`), and here the shape and
construction rows and the table itself (`FUNCTIONS`, `prim`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import prims
from ..ir import tensor as ir
from .common import attr_int, attr_ints
from .stablehlo_building_blocks import (broadcast, compare, constant, convert, diagonal,
                                        dot_general, reduce, reshape, transpose)
from .stablehlo_elementwise import (cast, compare_row, elementwise, int_div_mod, select,
                                    shift, unary)
from .stablehlo_gathers import dyn_index, gather, index, scatter_add
from .stablehlo_reductions import cumsum, dot, reduce_row
from .stablehlo_writer import (ELEMENT, OpWriter, Row, Value, dense_array, literal_text,
                               round_float, tensor_type, work_dtype)

__all__ = ["ELEMENT", "FUNCTIONS", "OpWriter", "Row", "Value", "broadcast", "compare",
           "constant", "convert", "dense_array", "diagonal", "dot_general", "literal_text",
           "prim", "reduce", "reshape", "round_float", "tensor_type", "transpose",
           "work_dtype"]


# ------------------------------------------------------- shapes and construction

def _broadcast_to(r: Row) -> Value:
    return broadcast(r.w, r.args[0], r.result.shape)


def _reshape(r: Row) -> Value:
    return reshape(r.w, r.args[0], r.result.shape)


def _permute(r: Row) -> Value:
    return transpose(r.w, r.args[0], attr_ints(r.attrs["perm"]))


def _concat(r: Row) -> Value:
    axis = attr_int(r.attrs["axis"]) % r.result.rank
    return r.w.op1("stablehlo.concatenate", r.args, r.result, f"dimension = {axis} : i64")


def _iota(r: Row) -> Value:
    counts = r.w.op1("stablehlo.iota", [], ir.TType(r.result.shape, "i64"),
                     "iota_dimension = 0 : i64")
    return convert(r.w, counts, r.result.dtype)


def _fill(r: Row) -> Value:
    return broadcast(r.w, convert(r.w, r.args[0], r.result.dtype), r.result.shape)


def _diagonal(r: Row) -> Value:
    return diagonal(r.w, r.args[0], attr_ints(r.attrs["axes"]))


# -------------------------------------------------------------- the table

#: The functions the rows of `linnet.prims` name for StableHLO (`Via`).
FUNCTIONS: dict[str, Callable[[Row], Value]] = {
    "div_mod": lambda r: int_div_mod(r, r.op),
    "compare": lambda r: compare_row(r.op)(r),
    "shift": lambda r: shift(r.op)(r),
    "abs": unary("abs"),
    "select": select, "cast": cast, "broadcast_to": _broadcast_to, "reshape": _reshape,
    "permute": _permute, "concat": _concat, "index": index, "dyn_index": dyn_index,
    "gather": gather, "scatter_add": scatter_add,
    "iota": _iota, "fill": _fill, "cumsum": cumsum,
    "reduce": lambda r: reduce_row(r.op[len("reduce_"):])(r),
    "diagonal": _diagonal, "dot": dot,
}


def prim(w: OpWriter, op: str, args: Sequence[Value], result: ir.Ty, attrs: Any = (),
         numerics: str = "equivalent") -> Value:
    """Write the operations computing `Prim(op, args)`, as its row in `linnet.prims` says
    (a StableHLO operation, or a function of `FUNCTIONS`); its value."""
    ir.check_prim_operands(op, args, [a.type for a in args], result)
    form = prims.row(op).stablehlo
    row = Row(w, list(args), result, dict(attrs), numerics, op)
    if isinstance(form, prims.Op):
        value = elementwise(row, form.name)
    elif isinstance(form, prims.Via):
        value = FUNCTIONS[form.name](row)
    else:
        raise ValueError(f"no StableHLO lowering for primitive {op!r}")
    if value.type != result:
        raise ValueError(f"{op}: the StableHLO row gave {value.type}, expected {result}")
    return value
