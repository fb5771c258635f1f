"""The checker's types: tensors with symbolic shapes, literals, tuples.

A scalar is a rank-0 tensor. Literals and compile-time integers have a
contextual type (`LitT`) that takes the dtype of whatever they meet, so
`x * 2` works for any numeric `x` while `f32 + bf16` never does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from .dim_normal_form import Dim

INTEGER = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOAT = ("f16", "bf16", "f32", "f64")
NUMERIC = INTEGER + FLOAT
DTYPES = ("bool",) + NUMERIC
KINDS = ("Dim", "Shape", "DType", "Numeric", "Integer", "Float")
DTYPE_KINDS = {"DType": DTYPES, "Numeric": NUMERIC, "Integer": INTEGER, "Float": FLOAT}

INT_RANGES = {
    "i8": (-2**7, 2**7 - 1), "i16": (-2**15, 2**15 - 1), "i32": (-2**31, 2**31 - 1),
    "i64": (-2**63, 2**63 - 1), "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1),
    "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1),
}
FLOAT_MAX = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38,
             "f64": 1.7976931348623157e308}


@dataclass(frozen=True, slots=True)
class PackDim:
    """A shape pack `*S` standing for zero or more dimensions."""
    name: str

    def __str__(self) -> str:
        return f"*{self.name}"


DimItem = Union[Dim, PackDim]


@dataclass(frozen=True, slots=True)
class TensorT:
    dims: tuple[DimItem, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def has_pack(self) -> bool:
        return any(isinstance(d, PackDim) for d in self.dims)

    def __str__(self) -> str:
        if not self.dims:
            return self.dtype
        return f"Tensor[{', '.join(map(str, self.dims))}; {self.dtype}]"


@dataclass(frozen=True, slots=True)
class LitT:
    """A literal or compile-time number whose dtype comes from context."""
    kind: str  # "int" or "float"

    def __str__(self) -> str:
        return "integer literal" if self.kind == "int" else "float literal"


@dataclass(frozen=True, slots=True)
class TupleT:
    items: tuple["Type", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


@dataclass(frozen=True, slots=True)
class ShapeT:
    """A shape literal `[A, B]`, as reshape, broadcast_to and fill take."""
    dims: tuple[DimItem, ...]

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.dims)) + "]"


@dataclass(frozen=True, slots=True)
class DTypeT:
    """A dtype written where a value could stand, as in `f<4, f32>`."""
    dtype: str

    def __str__(self) -> str:
        return f"dtype {self.dtype}"


@dataclass(frozen=True, slots=True)
class MemT:
    """A kernel's tensor in memory: readable by `load`, writable by `store`."""
    tensor: TensorT
    role: str  # "param" or "result"

    def __str__(self) -> str:
        return f"{self.tensor} in memory"


@dataclass(frozen=True, slots=True)
class ErrorT:
    """The type of something already reported; silences follow-on errors."""

    def __str__(self) -> str:
        return "<error>"


Type = Union[TensorT, LitT, TupleT, ShapeT, DTypeT, MemT, ErrorT]
ERROR = ErrorT()


@dataclass(frozen=True, slots=True)
class Val:
    """A checked expression: its type, and its value when known at compile time.

    A literal chosen at run time (`if c { 300 } else { 0 }`, `select(c, 1.0, 2.0)`) has no
    single value, but each value it may take is known: `alternatives` lists them, so that
    wherever the literal takes a dtype each one is checked for range as a written literal is.
    `zero` marks a tensor every element of which is known to be zero (`cast<i32>(0)`,
    `fill<i32>([4], 0)`), so that an integer division by it is E2130 as by a literal `0`.
    `known` holds the alternatives again, as the keys of a dict (an ordered set), when
    `choice_of` made them, so that joining one more value to a long `else if` chain's copies
    them with their hashes instead of comparing it with every earlier one. Never mutated.
    """
    type: Type
    const: Dim | None = None
    fconst: float | None = None
    alternatives: tuple["Val", ...] = ()
    zero: bool = False
    known: dict["Val", None] | None = field(default=None, compare=False, repr=False)

    @property
    def is_error(self) -> bool:
        return isinstance(self.type, ErrorT)


ERR = Val(ERROR)


def scalar(dtype: str) -> TensorT:
    return TensorT((), dtype)


def is_scalar(t: Type, dtype: str | None = None) -> bool:
    return isinstance(t, TensorT) and t.rank == 0 and (dtype is None or t.dtype == dtype)


def default_dtype(lit: LitT) -> str:
    return "i64" if lit.kind == "int" else "f64"


def literal_values(v: Val) -> tuple[Val, ...]:
    """The known values a literal may take: its alternatives, or itself when its value is
    known, or none (an operation that is not folded, such as a shift)."""
    if v.alternatives:
        return v.alternatives
    return (v,) if v.const is not None or v.fconst is not None else ()


def choice_of(kind: LitT, *options: Val) -> Val:
    """A literal of kind that is one of the options, chosen at run time: their values in
    order, each once. An option `choice_of` made is merged as a dict, whose entries carry
    their hashes: an `else if` chain of n literal arms joins n times, each with all the arms
    after it, and a list scan per value made that cubic."""
    merged: dict[Val, None] = {}
    for option in options:
        merged.update(option.known if option.known is not None
                      else dict.fromkeys(literal_values(option)))
    return Val(kind, alternatives=tuple(merged), known=merged)


def joint_literal(a: LitT, b: LitT) -> LitT:
    """The literal kind of an operation on two literals: float if either is a float."""
    return LitT("float" if "float" in (a.kind, b.kind) else "int")


def materialize(v: Val) -> TensorT | Type:
    """The type a value has once bound to a variable: literals take their default dtype."""
    return scalar(default_dtype(v.type)) if isinstance(v.type, LitT) else v.type


def compile_time_int(v: Val) -> Dim | None:
    """The value of a compile-time integer: a literal, a `Dim`, or an integer `const`."""
    if v.const is None:
        return None
    if isinstance(v.type, LitT) and v.type.kind == "int":
        return v.const
    if isinstance(v.type, TensorT) and v.type.rank == 0 and v.type.dtype in INTEGER:
        return v.const
    return None


def known_zero(v: Val) -> bool:
    """Is every element of v known to be zero: a literal `0` or `0.0`, or a zero tensor?"""
    if v.zero or v.fconst == 0.0:
        return True
    return v.const is not None and not v.alternatives and v.const.as_int() == 0


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`1 index`, `2 indices`: messages read as a person would write them."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
