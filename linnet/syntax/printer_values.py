"""Printing the value constructs: aliases, structs, enums, optionals, `match`, `...`.

The surface printer (`printer.py`) registers these beside its own tables; they call
back into it for expressions and types, so `parse(print_module(tree)) == tree` holds
for programs using them as for the rest (a parsed tree: a `match` arm holding statements
is made by the flattening of block entries alone, and printed for its dumps).
"""

from __future__ import annotations

from . import printer as p
from . import tree as t


def _field(e: t.Field, closed: bool) -> str:
    base = p._expr(e.base, p.POSTFIX, closed=True)
    if isinstance(e.base, (t.IntLit, t.FloatLit)):
        base = f"({base})"  # `1.x` would lex as a number
    return f"{base}.{e.name}"


def _none(e: t.NoneLit, closed: bool) -> str:
    return "none"


def _some(e: t.Some, closed: bool) -> str:
    return f"some({p.print_expr(e.value)})"


def _pattern(pat: t.Pattern) -> str:
    if isinstance(pat, t.VariantPat):
        return f"{pat.enum}.{pat.variant}"
    if isinstance(pat, t.NonePat):
        return "none"
    inner = ", ".join(pat.names)
    return f"some(({inner}))" if pat.tuple_ else f"some({inner})"


def _match(e: t.Match, closed: bool) -> str:
    """One arm per line: arms have no separator, a newline reads best."""
    arms = [f"{_pattern(a.pattern)} => {_arm_value(a.value)}" for a in e.arms]
    scrutinee = p._expr(e.scrutinee, p.LOOSEST, closed=False)
    return f"match {scrutinee} {{\n" + p._indent("\n".join(arms), 1) + "\n}"


def _arm_value(value: t.Expr | t.Block) -> str:
    """An arm's value; one starting with `(` or `+`/`-` would join the arm before it when
    written on one line, and on its own line a leading `+` would too. A `Block`, which
    only the flattening of a block entry makes (the parser does not read one back), is
    printed as an `if` branch is, one statement per line."""
    if isinstance(value, t.Block):
        return p._block(value, p._block_value(value), tall=True)
    text = p._expr(value, p.LOOSEST, closed=False)
    return f"({text})" if text.startswith("+") else text


def _generic_type(ty: t.GenericType) -> str:
    return f"{ty.name}<{p._list(ty.args)}>"


def _optional_type(ty: t.OptionalType) -> str:
    return p.print_type(ty.inner) + "?"


def _alias(a: t.TypeAlias) -> str:
    return f"type {a.name}{p._generics(a.generics)} = {p.print_type(a.type)}"


def _struct(s: t.Struct) -> str:
    fields = "\n".join(f"{f.name}: {p.print_type(f.type)}" for f in s.fields)
    body = "{\n" + p._indent(fields, 1) + "\n}" if fields else "{}"
    return f"struct {s.name}{p._generics(s.generics)} {body}"


def _enum(e: t.Enum) -> str:
    return f"enum {e.name} {{ {', '.join(e.variants)} }}"


def default(param: t.Param) -> str:
    """` = value` for a parameter with a default, else nothing."""
    return "" if param.default is None else " = " + p.print_expr(param.default)


EXPRS = {t.Field: _field, t.NoneLit: _none, t.Some: _some, t.Match: _match}
TYPES = {t.GenericType: _generic_type, t.OptionalType: _optional_type}
ITEMS = {t.TypeAlias: _alias, t.Struct: _struct, t.Enum: _enum}
