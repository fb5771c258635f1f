"""Walks over surface trees that `elaborate` needs: children, and the names a body assigns.

`assigned_outer` answers the question every loop and `if` asks before it is
translated, which outer `var`s the body assigns (what a loop carries and a
branch hands back); `adjoint_checks` asks it too. `_children` is the generic step
both this walk and the index-notation dependency test take.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

from ..syntax import tree as t


def _children(node) -> Iterator:
    """The tree nodes directly inside node (tuples flattened)."""
    for f in dataclasses.fields(node):
        if f.name in ("span", "callee_span", "name_spans"):
            continue
        value = getattr(node, f.name)
        for x in value if isinstance(value, tuple) else (value,):
            if dataclasses.is_dataclass(x):
                yield x


def assigned_outer(body) -> list[str]:
    """The names a body assigns that it did not declare itself, in order of first
    assignment: the `var`s a loop or a branch must hand back."""
    out: list[str] = []
    _assigned(body, set(), out)
    return list(dict.fromkeys(out))


def has_effect(body) -> bool:
    """Does a body (a node, or a tuple of statements) hold a `store` or an atomic? A loop
    that does is kept even when it carries nothing."""
    if isinstance(body, tuple):
        return any(has_effect(s) for s in body)
    return isinstance(body, t.Effect) or any(has_effect(c) for c in _children(body))


def _assigned(node, declared: set[str], out: list[str]) -> None:
    if isinstance(node, tuple):  # a statement sequence: a scope of its own
        inner = set(declared)
        for s in node:
            _assigned(s, inner, out)
        return
    if isinstance(node, t.Assign):
        _assigned(node.value, declared, out)
        if node.name not in declared:
            out.append(node.name)
    elif isinstance(node, (t.Let, t.VarDecl, t.LetIndex, t.LetTuple)):
        _assigned(node.value, declared, out)
        declared.update(getattr(node, "names", None) or (node.name,))
    elif isinstance(node, (t.For, t.ForExpr)):
        _assigned(node.lo, declared, out)
        _assigned(node.hi, declared, out)
        _assigned(node.body, declared | {node.var}, out)
    elif isinstance(node, t.While):
        _assigned(node.cond, declared, out)
        _assigned(node.body, declared, out)
    elif isinstance(node, t.Block):
        inner = set(declared)
        _assigned(node.stmts, inner, out)
        _assigned(node.value, inner, out)
    elif dataclasses.is_dataclass(node):
        for child in _children(node):
            _assigned(child, declared, out)
