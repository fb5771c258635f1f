"""Which names a piece of program reads and declares, and which items an entry reaches.

Syntactic and conservative: a name counts as read wherever it is written as a `Name`,
whatever it refers to there (a shadowed variable, an index variable of the same name), so
code found dead here is dead; the checker settles the rest.
"""

from __future__ import annotations

from ...syntax import tree as t
from ...syntax.edit import nodes

__all__ = ["bound_names", "names_read", "reachable"]


def names_read(root: object) -> set[str]:
    """Every name root refers to: variables, generics, consts, called items, kernels. A
    variable read only to assign itself (`acc = acc + x`) does not count as read."""
    out: set[str] = set()
    for n in nodes(root, skip=lambda n: isinstance(n, t.Assign)):
        if isinstance(n, t.Assign):
            out |= names_read(n.value) - {n.name}
        elif isinstance(n, t.Name):
            out.add(n.id)
        elif isinstance(n, (t.Call, t.KernelBinding)):
            out.add(n.callee if isinstance(n, t.Call) else n.name)
    return out


def bound_names(stmt: object) -> tuple[str, ...]:
    """The names a statement declares."""
    if isinstance(stmt, (t.Let, t.LetIndex, t.VarDecl)):
        return (stmt.name,)
    if isinstance(stmt, t.LetTuple):
        return stmt.names
    return ()


def reachable(module: t.Module, root: str) -> set[str]:
    """The names of the items the item `root` uses, directly or not (itself included)."""
    by_name = {i.name: i for i in module.items}
    seen, todo = {root}, [root]
    while todo:
        item = by_name.get(todo.pop())
        for name in names_read(item) if item is not None else ():
            if name in by_name and name not in seen:
                seen.add(name)
                todo.append(name)
    return seen
