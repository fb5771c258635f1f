"""Walking and rebuilding surface trees: what tools that edit programs share.

Why: the mutator (`linnet.testing.mutate`) and the reducer (`linnet.fuzz.reduce`) both
take a parsed module apart and put an edited copy together, to print it back to text. Trees
are frozen, so an edit rebuilds the path from the root to the edited node and shares the
rest. Nodes are found by identity (`is`), not equality: two equal subtrees at different
places are different targets.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

from . import tree as t

__all__ = ["STMT_LISTS", "children", "nodes", "replace", "stmt_lists", "transform"]

STMT_LISTS = ("body", "stmts")
"""The fields that hold a statement list (bodies of items, loops, grad clauses; blocks)."""


def nodes(root: object, skip: Callable[[object], bool] = lambda n: False) -> Iterator[object]:
    """Every tree node under root (root included), parents before children, in source
    order; below a node for which `skip` is true nothing is visited (the node itself is)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if not skip(node):
            stack.extend(reversed(list(children(node))))


def children(node: object) -> Iterator[object]:
    """The nodes directly under `node`, in field order."""
    if not dataclasses.is_dataclass(node):
        return
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        items = value if isinstance(value, tuple) else (value,)
        yield from (v for v in items if dataclasses.is_dataclass(v))


def replace(root: object, target: object, new: object) -> object:
    """root with the node `target` (by identity) replaced by `new`."""
    if root is target:
        return new
    return _rebuilt(root, lambda child: replace(child, target, new))


def transform(root: object, fn: Callable[[object], object]) -> object:
    """root rebuilt bottom-up, each node passed through `fn` after its children (`fn`
    returns the node itself to keep it)."""
    if not dataclasses.is_dataclass(root):
        return root
    return fn(_rebuilt(root, lambda child: transform(child, fn)))


def _rebuilt(root: object, visit: Callable[[object], object]) -> object:
    """root with each child node passed through `visit`; root itself where none changed,
    so an edit copies only the path from the root to what it edits."""
    if not dataclasses.is_dataclass(root):
        return root
    changes = {}
    for f in dataclasses.fields(root):
        value = getattr(root, f.name)
        if isinstance(value, tuple):
            rebuilt = tuple(visit(v) for v in value)
            if any(a is not b for a, b in zip(rebuilt, value)):
                changes[f.name] = rebuilt
        elif dataclasses.is_dataclass(value):
            rebuilt = visit(value)
            if rebuilt is not value:
                changes[f.name] = rebuilt
    return dataclasses.replace(root, **changes) if changes else root


def stmt_lists(root: object) -> Iterator[tuple[object, str, tuple[t.Stmt, ...]]]:
    """Each statement list under root: (the node holding it, the field, the statements)."""
    for node in nodes(root):
        if isinstance(node, t.Module):
            continue
        for name in STMT_LISTS:
            value = getattr(node, name, None)
            if isinstance(value, tuple):  # not Reduce.body, an expression
                yield node, name, value
