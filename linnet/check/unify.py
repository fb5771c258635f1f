"""Meeting two values: one dtype (literals adapt, nothing else converts) and one shape.

These helpers return a result or an error message; the caller decides the
diagnostic's code and span, since only it knows what the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dim_normal_form import Dim
from .dims import Facts
from .pack_products import shape_product
from .types import (DTYPE_KINDS, FLOAT, FLOAT_MAX, INT_RANGES, INTEGER, NUMERIC, DimItem, LitT,
                    PackDim, TensorT, Val, literal_values)


@dataclass(frozen=True)
class Problem:
    code: str
    message: str
    label: str = ""
    help: str = ""


def dtype_in_kind(dtype: str, kind: str, generic_kind: str | None) -> bool:
    """Does dtype (concrete, or a generic of generic_kind) belong to a dtype kind?"""
    allowed = DTYPE_KINDS[kind]
    if generic_kind is None:
        return dtype in allowed
    return set(DTYPE_KINDS[generic_kind]) <= set(allowed)


def literal_fits(lit: Val, dtype: str, generic_kind: str | None) -> Problem | None:
    """Can a literal or compile-time number take this dtype?"""
    kind = lit.type.kind  # type: ignore[union-attr]
    family = NUMERIC if kind == "int" else FLOAT
    if generic_kind is not None:
        if not set(DTYPE_KINDS[generic_kind]) <= set(family):
            return Problem("E2103", f"{lit.type} cannot take the dtype {dtype} "
                                    f"(a {generic_kind} generic)",
                           help=f"constrain the generic to `{'Float' if kind == 'float' else 'Numeric'}`"
                                " or cast explicitly")
        return None
    if dtype not in family:
        return Problem("E2103", f"{lit.type} used as {dtype}",
                       help="cast explicitly with `cast<...>(...)`")
    for value in literal_values(lit):
        problem = _in_range(value, dtype)
        if problem:
            return problem
    return None


def _in_range(lit: Val, dtype: str) -> Problem | None:
    value = lit.const.as_int() if lit.const is not None else None
    if dtype in INTEGER and value is not None:
        lo, hi = INT_RANGES[dtype]
        if not lo <= value <= hi:
            return Problem("E2105", f"literal {value} out of range for {dtype}",
                           label=f"{dtype} holds {lo} to {hi}")
    if dtype in FLOAT:
        number = lit.fconst if lit.fconst is not None else value
        if number is not None and abs(number) > FLOAT_MAX[dtype]:
            return Problem("E2105", f"literal {number} out of range for {dtype}",
                           label=f"{dtype} reaches {FLOAT_MAX[dtype]:.6g}")
    return None


def broadcast(a: tuple[DimItem, ...], b: tuple[DimItem, ...],
              facts: Facts) -> tuple[DimItem, ...] | Problem:
    """Right-aligned broadcast: each pair provably equal or one of them exactly 1."""
    out: list[DimItem] = []
    for k in range(1, max(len(a), len(b)) + 1):
        x = a[-k] if k <= len(a) else None
        y = b[-k] if k <= len(b) else None
        d = _broadcast_pair(x, y, facts)
        if d is None:
            return Problem("E2207", f"cannot broadcast {_shape(a)} with {_shape(b)}",
                           label=f"dimension {x} against {y}",
                           help="make the dimensions provably equal (a `where` clause), "
                                "or one of them 1")
        out.append(d)
    return tuple(reversed(out))


def _broadcast_pair(x: DimItem | None, y: DimItem | None, facts: Facts) -> DimItem | None:
    if x is None or y is None:
        return x if y is None else y
    if isinstance(x, PackDim) or isinstance(y, PackDim):
        return x if x == y else None
    if dims_equal(x, y, facts):
        return x
    if x.as_int() == 1:
        return y
    if y.as_int() == 1:
        return x
    return None


def dims_equal(x: DimItem, y: DimItem, facts: Facts) -> bool:
    if isinstance(x, PackDim) or isinstance(y, PackDim):
        return x == y
    return x == y or facts.prove(x, "==", y)


def shapes_equal(a: tuple[DimItem, ...], b: tuple[DimItem, ...], facts: Facts) -> bool:
    return len(a) == len(b) and all(dims_equal(x, y, facts) for x, y in zip(a, b))


def _shape(dims: tuple[DimItem, ...]) -> str:
    return "[" + ", ".join(map(str, dims)) + "]"


def shape_text(dims: tuple[DimItem, ...]) -> str:
    return _shape(dims)


def element_count(dims: tuple[DimItem, ...]) -> Dim:
    """The product of the dims, a pack `*S` counting as its `prod(S)`."""
    return shape_product(dims)


def same_type_problem(want: TensorT, got: TensorT, facts: Facts) -> Problem | None:
    """Is a tensor of type got acceptable where want is required?"""
    if want.dtype != got.dtype:
        return Problem("E2103", f"expected dtype {want.dtype}, found {got.dtype}",
                       label=f"this is {got}", help="cast explicitly with `cast<...>(...)`")
    if not shapes_equal(want.dims, got.dims, facts):
        return Problem("E2202", f"expected shape {_shape(want.dims)}, found {_shape(got.dims)}",
                       label=f"this is {got}")
    return None


def literal_type(v: Val) -> LitT | None:
    return v.type if isinstance(v.type, LitT) else None
