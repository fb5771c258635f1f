"""Tree building for the value constructs: aliases, structs, enums, optionals, `match`.

A mixin of the parser's transformer (`parser._Build`): one callback per grammar rule
of the model layer's values, each returning a surface-tree node. It needs only the
transformer's `_span` and `file`, so it lives apart from the rest of the parser.
"""

from __future__ import annotations

from typing import Any

from lark import Token

from . import tree as t

Child = Any


def _tokens(children: list[Child], kind: str) -> list[Token]:
    return [c for c in children if isinstance(c, Token) and c.type == kind]


def _generics(children: list[Child]) -> tuple:
    return next((tuple(c) for c in children
                 if isinstance(c, tuple) and type(c).__name__ == "_GenericList"), ())


class ValueBuild:
    """Callbacks for the rules of linnet.lark's values section and its patterns."""

    def alias_def(self, c: list[Child]) -> t.TypeAlias:
        return t.TypeAlias(c[1].value, _generics(c), c[-1], span=self._span(c))

    def struct_def(self, c: list[Child]) -> t.Struct:
        fields = tuple(x for x in c if isinstance(x, t.Param))
        return t.Struct(c[1].value, _generics(c), fields, span=self._span(c))

    def sfield(self, c: list[Child]) -> t.Param:
        return t.Param(c[0].value, c[2], span=self._span(c))

    def enum_def(self, c: list[Child]) -> t.Enum:
        names = [x.value for x in _tokens(c, "NAME")]
        return t.Enum(names[0], tuple(names[1:]), span=self._span(c))

    def generic_type(self, c: list[Child]) -> t.GenericType:
        return t.GenericType(c[0].value, tuple(c[2]), span=self._span(c))

    def optional_type(self, c: list[Child]) -> t.OptionalType:
        return t.OptionalType(c[0], span=self._span(c))

    def field(self, c: list[Child]) -> t.Field:
        return t.Field(c[0], c[2].value, span=self._span(c))

    def none_lit(self, c: list[Child]) -> t.NoneLit:
        return t.NoneLit(span=self._span(c))

    def some_expr(self, c: list[Child]) -> t.Some:
        return t.Some(c[2], span=self._span(c))

    def match_expr(self, c: list[Child]) -> t.Match:
        arms = tuple(x for x in c if isinstance(x, t.Arm))
        return t.Match(c[1], arms, span=self._span(c))

    def arm(self, c: list[Child]) -> t.Arm:
        return t.Arm(c[0], c[2], span=self._span(c))

    def variant_pat(self, c: list[Child]) -> t.VariantPat:
        return t.VariantPat(c[0].value, c[2].value, span=self._span(c))

    def none_pat(self, c: list[Child]) -> t.NonePat:
        return t.NonePat(span=self._span(c))

    def some_pat(self, c: list[Child]) -> t.SomePat:
        names = tuple(x.value for x in _tokens(c, "NAME"))
        return t.SomePat(names, len(_tokens(c, "LPAR")) == 2, span=self._span(c))

    def ellipsis(self, c: list[Child]) -> t.EllipsisIx:
        return t.EllipsisIx(span=self._span(c))
