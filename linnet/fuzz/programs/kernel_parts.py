"""The helpers the kernel templates share: renaming a tile expression onto the op's
tensors, `iota<i32>` positions, ceiling division, the dtypes atomics take."""

from __future__ import annotations

import dataclasses

from ...syntax import tree as t
from .exprs import call

ATOMIC_DTYPES = ("f32", "i32", "u32", "i64", "u64")


def rename(node, names: dict[str, str]):
    """The tree with each `Name` in `names` renamed (tiles to the op's tensors)."""
    if isinstance(node, t.Name):
        return t.Name(names.get(node.id, node.id))
    if isinstance(node, tuple):
        return tuple(rename(x, names) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {f.name: rename(getattr(node, f.name), names)
                   for f in dataclasses.fields(node) if f.name != "span"}
        return dataclasses.replace(node, **changes)
    return node


def i32(e: t.Expr) -> t.Expr:
    return call("iota", e, generics=(t.Name("i32"),))


def ceil_div(n: t.Expr, b: t.Expr) -> t.Expr:
    return t.Binary("/", t.Binary("-", t.Binary("+", n, b), t.IntLit(1)), b)
