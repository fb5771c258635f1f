"""The checker's types for the model layer's values: structs, enums, optionals.

They sit beside the tensor types of `types.py`. A struct type carries its fields'
types with the generics of one use substituted (`KV<f32>` is `KV` with f32 fields);
an enum type its variants; an optional the type it may hold. `none` has a type of
its own, `NoneT`, until its context says which optional it is (E2113 otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable
from .types import TupleT


@dataclass(frozen=True, slots=True)
class StructT:
    name: str
    fields: tuple[tuple[str, object], ...]  # (field name, checker type), declaration order

    def field(self, name: str):
        return next((ty for f, ty in self.fields if f == name), None)

    def __str__(self) -> str:
        return f"{self.name} {{ " + ", ".join(f"{f}: {ty}" for f, ty in self.fields) + " }"


@dataclass(frozen=True, slots=True)
class EnumT:
    name: str
    variants: tuple[str, ...]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class OptionalT:
    inner: object

    def __str__(self) -> str:
        return f"{self.inner}?"


@dataclass(frozen=True, slots=True)
class NoneT:
    """The type of `none` before its context makes it an optional."""

    def __str__(self) -> str:
        return "none"


def map_parts(ty, f: Callable):
    """ty with f applied to the types it is made of (its fields, its inner type), or None
    when ty is not one of these types: how substitution reaches inside them."""
    if isinstance(ty, StructT):
        return StructT(ty.name, tuple((name, f(x)) for name, x in ty.fields))
    if isinstance(ty, OptionalT):
        return OptionalT(f(ty.inner))
    return None


def parts(ty) -> tuple:
    """The types a struct or optional is made of (none for any other type)."""
    if isinstance(ty, StructT):
        return tuple(x for _, x in ty.fields)
    if isinstance(ty, OptionalT):
        return (ty.inner,)
    return ()


def as_tuples(ty):
    """ty as a backend sees it: a struct is the tuple of its fields (nested alike)."""
    if isinstance(ty, StructT):
        return TupleT(tuple(as_tuples(x) for _, x in ty.fields))
    if isinstance(ty, TupleT):
        return TupleT(tuple(as_tuples(x) for x in ty.items))
    return ty


def leaves(ty) -> list:
    """The types a value of ty becomes once structs are their fields (tuples stay)."""
    if isinstance(ty, StructT):
        return [leaf for _, x in ty.fields for leaf in leaves(x)]
    return [ty]
