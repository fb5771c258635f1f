"""Program edits that flatten structure: an `if` replaced by one branch, a loop by one pass
of its body, a call of a `fn` or op by the callee's body.

Each edit turns one statement into several in the same list: the statements of the branch,
loop or callee come first, then the statement itself with the part replaced by their value.
The callee's names are renamed apart (`x` becomes `x_f`) so they cannot meet the caller's;
a branch's or loop's names are not, and where they collide the checker rejects the
candidate.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

from ...syntax import tree as t
from ...syntax.edit import nodes, replace, stmt_lists, transform
from .names import bound_names
from .program import editable, show, with_stmts, without_dead_code
from .search import Candidate, Current

VALUED = (t.Let, t.LetTuple, t.LetIndex, t.VarDecl, t.Assign, t.Return)
"""Statements with a `value` that may be an `if` or a valued `for` as a whole."""


def _edit(cur: Current, what: str, owner, field: str, stmts, k: int, new: list,
          grows: bool = False) -> Candidate:
    return Candidate("program", what, lambda: cur.with_module(without_dead_code(with_stmts(
        cur.module, owner, field, list(stmts[:k]) + new + list(stmts[k + 1:])))), grows)


def control(cur: Current) -> Iterator[Candidate]:
    """Replace an `if` (the whole value of a statement) by either branch, a loop by one
    pass of its body (the counter bound to the start), a valued `for` by one pass."""
    for item in editable(cur.module, cur.case.entry):
        for owner, field, stmts in stmt_lists(item):
            for k, s in enumerate(stmts):
                for what, new in _flattened(s):
                    yield _edit(cur, f"{what} in `{item.name}`", owner, field, stmts, k, new)


def _flattened(s: object) -> Iterator[tuple[str, list]]:
    if isinstance(s, t.For):
        yield f"run {show(s)} once", [t.Let(s.var, None, s.lo), *s.body]
    elif isinstance(s, t.While):
        yield f"run {show(s)} once", list(s.body)
    elif isinstance(s, VALUED) and isinstance(s.value, t.If):
        for name, block in (("then", s.value.then), ("else", s.value.orelse)):
            yield (f"keep the {name} branch of {show(s)}",
                   [*block.stmts, dataclasses.replace(s, value=block.value)])
    elif isinstance(s, VALUED) and isinstance(s.value, t.ForExpr):
        scan = s.value
        if scan.body and isinstance(scan.body[-1], t.Yield):
            yield (f"run {show(s)} once", [t.Let(scan.var, None, scan.lo), *scan.body[:-1],
                                            dataclasses.replace(s, value=scan.body[-1].value)])


# ---------------------------------------------------------------- inlining

def inline(cur: Current) -> Iterator[Candidate]:
    """Replace a call of a `fn` or op by the callee's body: its parameters bound to the
    arguments by `let`, its statements, then the statement with the returned value."""
    callees = {i.name: i for i in editable(cur.module)
               if isinstance(i, (t.Function, t.Op)) and _inlinable(i)}
    for item in editable(cur.module, cur.case.entry):
        for owner, field, stmts in stmt_lists(item):
            for k, s in enumerate(stmts):
                for call in _calls(s):
                    callee = callees.get(call.callee)
                    if callee is None or callee is item or len(call.args) != len(
                            callee.params) or any(a.name for a in call.args):
                        continue
                    yield _edit(cur, f"inline {show(call)} in `{item.name}`", owner, field,
                                stmts, k, _inlined(cur.module, s, call, callee), grows=True)


def _inlinable(item: t.Function | t.Op) -> bool:
    """A callee whose body ends in its only `return` (and that is not an entry)."""
    if isinstance(item, t.Function) and item.kind != "fn":
        return False
    returns = [n for n in nodes(item) if isinstance(n, t.Return)]
    return bool(item.body) and len(returns) == 1 and item.body[-1] is returns[0]


def _calls(s: object) -> Iterator[t.Call]:
    """The calls in the statement's own expressions (not in the statements of a loop)."""
    skip = (t.For, t.While, t.ForExpr)
    for n in nodes(s, skip=lambda n: isinstance(n, skip) and n is not s):
        if isinstance(n, t.Call):
            yield n


def _inlined(module: t.Module, s: object, call: t.Call, callee: t.Function | t.Op) -> list:
    taken = {n.id for n in nodes(module) if isinstance(n, t.Name)} | {
        i.name for i in module.items} | {
        b for o, f, stmts in stmt_lists(module) for st in stmts for b in bound_names(st)}
    binders = [p.name for p in callee.params] + [
        b for n in nodes(callee) for b in _binders(n)]
    names: dict[str, str] = {}
    for b in binders:
        names.setdefault(b, _fresh(f"{b}_{callee.name}", taken))
    generics = {}
    if call.generics is not None and len(call.generics) == len(callee.generics):
        generics = {g.name: v for g, v in zip(callee.generics, call.generics)}
    body = [_renamed(st, names, generics) for st in callee.body]
    lets = [t.Let(names[p.name], None, a.value) for p, a in zip(callee.params, call.args)]
    return [*lets, *body[:-1], replace(s, call, body[-1].value)]


def _binders(n: object) -> tuple[str, ...]:
    if isinstance(n, (t.For, t.ForExpr)):
        return (n.var,)
    return bound_names(n)


def _fresh(base: str, taken: set[str]) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _renamed(root: object, names: dict[str, str], generics: dict[str, t.Expr]) -> object:
    """root with its binders and their uses renamed, and generic names replaced by the
    call's explicit generic arguments."""
    def rename(n: object) -> object:
        if isinstance(n, t.Name):
            return generics.get(n.id) or t.Name(names.get(n.id, n.id))
        if isinstance(n, t.TypeName) and isinstance(generics.get(n.name), t.Name):
            return t.TypeName(generics[n.name].id)
        if isinstance(n, (t.Let, t.LetIndex, t.VarDecl, t.Assign)):
            return dataclasses.replace(n, name=names.get(n.name, n.name))
        if isinstance(n, t.LetTuple):
            return dataclasses.replace(n, names=tuple(names.get(x, x) for x in n.names))
        if isinstance(n, (t.For, t.ForExpr)):
            return dataclasses.replace(n, var=names.get(n.var, n.var))
        return n
    return transform(root, rename)
