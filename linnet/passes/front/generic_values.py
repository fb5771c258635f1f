"""The values of an entry's generics, read from `--bind R=8 --bind T=f32 --bind S=2,3`
(or `bind={"R": 8}`) and the generics' defaults, and the entry chosen by name.

Apart from `bind_generics.py` because the flattening of a block entry (`block_entry.py`),
which that pass calls, reads them too.
"""

from __future__ import annotations

import re

from ...check.types import DTYPE_KINDS
from ...errors import MissingGeneric, UsageError, suggest
from ...syntax import tree as t


def pick_entry(entries: list[t.Function], name: str | None, owner: str) -> t.Function:
    """The entry named so among `entries` (of `owner`: the file, or a block), or the only
    one when no name is given."""
    names = ", ".join(e.name for e in entries) or "none"
    if name is None:
        if len(entries) != 1:
            head = f"{owner} has {len(entries)} entries ({names}); choose one with "
            raise UsageError(head + "entry=NAME", head + "--entry NAME")
        return entries[0]
    found = next((e for e in entries if e.name == name), None)
    if found is None:
        raise UsageError(f"no entry named `{name}`; {owner}'s entries: {names}"
                         + suggest(name, [e.name for e in entries]))
    return found


def parse_bindings(entry: t.Function, raw: dict[str, str]) -> dict[str, object]:
    """Every generic of the entry gets a value: given by --bind, or its default."""
    generics = {g.name: g for g in entry.generics}
    unknown = sorted(set(raw) - set(generics))
    if unknown:
        why = (f"`{entry.name}` has no generic named `{unknown[0]}` (its generics: "
               f"{', '.join(generics) or 'none'})")
        raise UsageError(f"bind {unknown[0]!r}: {why}", f"--bind {unknown[0]}: {why}")
    values: dict[str, object] = {}
    for name, g in generics.items():
        if name in raw:
            values[name] = _parse_value(g, raw[name])
        elif g.default is not None:
            values[name] = _default_value(g)
        else:
            head = f"generic `{name}: {g.kind}` of `{entry.name}` needs a value: "
            raise MissingGeneric(head + f"bind={{{name!r}: {_example(g, True)}}}",
                                 head + f"--bind {name}={_example(g)}", g)
    return values


def _parse_value(g: t.Generic, text: str) -> object:
    if g.kind == "Dim":
        if not _is_extent(text):
            raise _bad_value(g, text, "a Dim takes a non-negative integer below 2^63",
                             " written in ASCII digits")
        return int(text)
    if g.kind == "Shape":
        parts = [p.strip() for p in text.split(",")] if text.strip() else []
        if not all(_is_extent(p) for p in parts):
            raise _bad_value(g, text, "a Shape takes non-negative integers",
                             " separated by commas, such as 2,3", " (a tuple, such as (2, 3))")
        return tuple(int(p) for p in parts)
    if text not in DTYPE_KINDS[g.kind]:
        raise _bad_value(g, text, f"`{g.name}` is a {g.kind}; choose one of "
                         f"{', '.join(DTYPE_KINDS[g.kind])}")
    return text


def _bad_value(g: t.Generic, text: str, why: str, cli: str = "", lib: str = "") -> UsageError:
    """A value that cannot be a generic's, worded for the library (`bind R='x'`) and for
    the command line (`--bind R=x`)."""
    return UsageError(f"bind {g.name}={text!r}: {why}{lib}", f"--bind {g.name}={text}: {why}{cli}")


def _is_extent(text: str) -> bool:
    """A dimension as the command line writes it: ASCII decimal digits (`str.isdigit`
    would also take `²` and `٣`), small enough for an i64."""
    return re.fullmatch(r"[0-9]+", text) is not None and int(text) < 2**63


def _default_value(g: t.Generic) -> object:
    d = g.default
    if isinstance(d, t.IntLit):
        return d.value
    if isinstance(d, t.Name):
        return d.id
    head = f"generic `{g.name}` has a default this version cannot evaluate; "
    raise UsageError(head + "give it a value in bind", head + "--bind it")


def _example(g: t.Generic, python: bool = False) -> str:
    """A value of the generic's kind, as `--bind` (or, with python, `bind=`) takes it."""
    if python:
        return {"Dim": "8", "Shape": "(2, 3)", "Integer": "'i32'"}.get(g.kind, "'f32'")
    return {"Dim": "8", "Shape": "2,3", "Integer": "i32"}.get(g.kind, "f32")
