"""Walks over surface trees that `elaborate` needs: children, and the names a body assigns.

`assigned_outer` answers the question every loop and `if` asks before it is
translated, which outer `var`s the body assigns (what a loop carries and a
branch hands back); `adjoint_checks` asks it too. `child_nodes` is the generic step
both this walk and the index-notation dependency test take.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

from ...syntax import tree as t


def child_nodes(node) -> Iterator:
    """The tree nodes directly inside node (tuples flattened)."""
    for f in dataclasses.fields(node):
        if f.name in ("span", "callee_span", "name_spans"):
            continue
        value = getattr(node, f.name)
        for x in value if isinstance(value, tuple) else (value,):
            if dataclasses.is_dataclass(x):
                yield x


Memo = dict[int, tuple[t.Block, tuple[str, ...]]]


def assigned_outer(body, memo: Memo | None = None) -> list[str]:
    """The names a body assigns that it did not declare itself, in order of first
    assignment: the `var`s a loop or a branch must hand back. `memo` keeps each nested
    block's answer (by identity; the memo holds the block): an elaborator asks at every
    level of an `else if` chain, and with one memo for the whole body each block is walked
    once, not once per enclosing level."""
    out: list[str] = []
    _assigned(body, set(), out, memo if memo is not None else {})
    return list(dict.fromkeys(out))


def has_effect(body) -> bool:
    """Does a body (a node, or a tuple of statements) hold a `store` or an atomic? A loop
    that does is kept even when it carries nothing."""
    if isinstance(body, tuple):
        return any(has_effect(s) for s in body)
    return isinstance(body, t.Effect) or any(has_effect(c) for c in child_nodes(body))


def _assigned(node, declared: set[str], out: list[str], memo: Memo) -> None:
    if isinstance(node, tuple):  # a statement sequence: a scope of its own
        inner = set(declared)
        for s in node:
            _assigned(s, inner, out, memo)
        return
    if isinstance(node, t.Assign):
        _assigned(node.value, declared, out, memo)
        if node.name not in declared:
            out.append(node.name)
    elif isinstance(node, (t.Let, t.VarDecl, t.LetIndex, t.LetTuple)):
        _assigned(node.value, declared, out, memo)
        declared.update(getattr(node, "names", None) or (node.name,))
    elif isinstance(node, (t.For, t.ForExpr)):
        _assigned(node.lo, declared, out, memo)
        _assigned(node.hi, declared, out, memo)
        _assigned(node.body, declared | {node.var}, out, memo)
    elif isinstance(node, t.While):
        _assigned(node.cond, declared, out, memo)
        _assigned(node.body, declared, out, memo)
    elif isinstance(node, t.Block):
        # A block declares only inside itself: what it assigns under `declared` is what it
        # assigns under no outer declaration, less `declared` (so the answer is reused).
        out.extend(n for n in _block_assigned(node, memo) if n not in declared)
    elif dataclasses.is_dataclass(node):
        for child in child_nodes(node):
            _assigned(child, declared, out, memo)


def _block_assigned(block: t.Block, memo: Memo) -> tuple[str, ...]:
    """What a block assigns that it does not declare, each name once, remembered."""
    hit = memo.get(id(block))
    if hit is not None and hit[0] is block:
        return hit[1]
    out: list[str] = []
    inner: set[str] = set()
    _assigned(block.stmts, inner, out, memo)
    _assigned(block.value, inner, out, memo)
    names = tuple(dict.fromkeys(out))
    memo[id(block)] = (block, names)
    return names
