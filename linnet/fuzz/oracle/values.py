"""The values of the model layer (docs/models.md, "Values" and "Calls"): structs, enums,
optionals, `match`, named arguments and defaults, and `...` in an index.

They are values of the language, not tensors, and the oracle holds them as such: a struct
is a `StructV` (its fields by name, in declaration order), an enum value an `EnumV` (the
variant's name), an optional `NONE` or a `SomeV`. Nothing here follows how the compiler
makes them disappear (tuples, i64 positions, flags): only what the language says they
mean. An entry's struct parameter is its fields, one input each, and a struct result the
tuple of its fields (docs/models.md, "What a backend sees"): `flatten` and `gather` are
that convention.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from ...check.types import TensorT, TupleT
from ...check.value_types import EnumT, OptionalT, StructT
from ...syntax import tree as t
from .errors import OracleError


@dataclass(frozen=True)
class StructV:
    """A struct value: its name and its fields, in declaration order."""
    name: str
    fields: tuple[tuple[str, Any], ...]

    def field(self, name: str):
        for f, v in self.fields:
            if f == name:
                return v
        raise OracleError(f"`{self.name}` has no field `{name}`")


@dataclass(frozen=True)
class EnumV:
    """An enum value: the enum and the variant chosen."""
    enum: str
    variant: str


@dataclass(frozen=True)
class SomeV:
    """`some(v)`."""
    value: Any


class _NoneV:
    """`none`: one value, whatever optional type it takes."""

    def __repr__(self) -> str:
        return "none"


NONE = _NoneV()


def conform_value(body, value, ty):
    """A struct, optional or enum value held as the checker's type `ty` (fields and the
    optional's value conformed in turn); None when `ty` is none of these."""
    if isinstance(ty, StructT) and isinstance(value, StructV):
        return StructV(value.name, tuple((f, body.conform(value.field(f), fty))
                                         for f, fty in ty.fields))
    if isinstance(ty, OptionalT):
        if isinstance(value, SomeV):
            return SomeV(body.conform(value.value, ty.inner))
        return value
    if isinstance(ty, EnumT):
        return value
    return None


class ValueEval:
    """Expressions of the model layer; a mixin of the oracle's `Body`."""

    def expr_Field(self, e: t.Field):
        variant = self._variant(e)
        if variant is not None:
            return variant
        base = self.expr(e.base)
        if not isinstance(base, StructV):
            raise OracleError(f"`.{e.name}` of a value that is not a struct")
        return base.field(e.name)

    def _variant(self, e: t.Field) -> EnumV | None:
        """`E.A` where `E` names an enum (and no local hides it)."""
        if not isinstance(e.base, t.Name) or self._is_local(e.base.id):
            return None
        item = self.globals.items.get(e.base.id)
        if isinstance(item, t.Enum):
            if e.name not in item.variants:
                raise OracleError(f"`{item.name}` has no variant `{e.name}`")
            return EnumV(item.name, e.name)
        return None

    def _is_local(self, name: str) -> bool:
        return any(name in scope for scope in self.scopes)

    def expr_NoneLit(self, e: t.NoneLit):
        return NONE

    def expr_Some(self, e: t.Some):
        return SomeV(self.expr(e.value))

    def expr_Match(self, e: t.Match):
        scrutinee = self.expr(e.scrutinee)
        for arm in e.arms:
            bound = _matches(arm.pattern, scrutinee)
            if bound is None:
                continue
            self.scopes.append({})
            try:
                for name, value in bound:
                    self.bind(name, value)
                return self.expr(arm.value)
            finally:
                self.scopes.pop()
        raise OracleError(f"no arm of a `match` takes {scrutinee!r}")

    def struct_call(self, e: t.Call, item: t.Struct) -> StructV:
        """`S(k = a, v = b)`: fields by name, held in declaration order."""
        given = {a.name: a.value for a in e.args}
        if set(given) != {f.name for f in item.fields} or None in given:
            raise OracleError(f"`{item.name}` built without each field once, by name")
        return StructV(item.name, tuple((f.name, self.expr(given[f.name]))
                                        for f in item.fields))

    def call_args(self, params: tuple[t.Param, ...], args: tuple[t.Arg, ...]) -> list:
        """The values of a call's arguments in parameter order: positional ones first, then
        named ones, then each missing parameter's default (a literal)."""
        slots: list = [None] * len(params)
        names = [p.name for p in params]
        for k, arg in enumerate(args):
            at = k if arg.name is None else names.index(arg.name) if arg.name in names else -1
            if at < 0 or at >= len(params) or slots[at] is not None:
                raise OracleError(f"an argument that fits no parameter ({arg.name or k})")
            slots[at] = arg.value
        exprs = [given if given is not None else p.default for p, given in zip(params, slots)]
        if any(x is None for x in exprs):
            raise OracleError("a call leaves out a parameter without a default")
        return [self.expr(x) for x in exprs]

    def expand_ellipsis(self, items: tuple, rank: int) -> tuple:
        """`x[..., 0]`: the `...` stands for a full slice of every axis not written."""
        at = [k for k, item in enumerate(items) if isinstance(item, t.EllipsisIx)]
        if not at:
            return items
        if len(at) > 1:
            raise OracleError("`...` twice in one index")
        missing = rank - (len(items) - 1)
        if missing < 0:
            raise OracleError("more indices than axes")
        full = (t.Slice(None, None, None),) * missing
        return items[:at[0]] + full + items[at[0] + 1:]


def _matches(pattern, value) -> list[tuple[str, Any]] | None:
    """The names a pattern binds when it takes the value, or None when it does not."""
    if isinstance(pattern, t.VariantPat):
        ok = isinstance(value, EnumV) and (value.enum, value.variant) == (
            pattern.enum, pattern.variant)
        return [] if ok else None
    if isinstance(pattern, t.NonePat):
        return [] if value is NONE else None
    if isinstance(pattern, t.SomePat):
        if not isinstance(value, SomeV):
            return None
        if not pattern.tuple_:
            return [(pattern.names[0], value.value)]
        inner = value.value
        if not isinstance(inner, tuple) or len(inner) != len(pattern.names):
            raise OracleError("a `some((...))` pattern of another length")
        return list(zip(pattern.names, inner))
    raise OracleError(f"the pattern {type(pattern).__name__}")


# ---------------------------------------------------------------- across the entry

def leaf_types(ty) -> Iterator[TensorT]:
    """The tensors a value of type `ty` crosses to a backend as: a struct is its fields,
    a tuple its items, in order, nested alike."""
    if isinstance(ty, StructT):
        for _, field in ty.fields:
            yield from leaf_types(field)
    elif isinstance(ty, TupleT):
        for item in ty.items:
            yield from leaf_types(item)
    elif isinstance(ty, TensorT):
        yield ty
    else:
        raise OracleError(f"an entry's parameter or result of type {ty}")


def gather(ty, leaves: Iterator):
    """The value of type `ty` made of the next leaves (an entry's struct parameter from its
    fields' inputs)."""
    if isinstance(ty, StructT):
        return StructV(ty.name, tuple((name, gather(f, leaves)) for name, f in ty.fields))
    if isinstance(ty, TupleT):
        return tuple(gather(item, leaves) for item in ty.items)
    return next(leaves)


def flatten(value, ty) -> list:
    """A result as the backend returns it: a struct as its fields, a tuple as its items
    (nested alike), each leaf in its dtype's form."""
    if isinstance(ty, StructT):
        if not isinstance(value, StructV):
            raise OracleError(f"a result of type {ty} that is not a struct")
        return [x for name, f in ty.fields for x in flatten(value.field(name), f)]
    if isinstance(ty, TupleT):
        return [x for v, item in zip(value, ty.items) for x in flatten(v, item)]
    return [value]


__all__ = ["StructV", "EnumV", "SomeV", "NONE", "ValueEval", "conform_value", "leaf_types",
           "gather", "flatten"]
