"""Program edits that remove things: items, kernels, grad clauses, statements, parameters,
and parts of expressions.

Each pass yields candidates in a fixed order, biggest cuts first (a whole item before a
statement, an expression before its operands), so that the search reaches a small case in
few tries. Kernels are kept as written or dropped whole: an edit inside a tile program can
make it access memory out of range, which no backend is asked to survive.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

from ...syntax import tree as t
from ...syntax.edit import nodes, replace, stmt_lists, transform
from ...syntax.printer import print_expr, print_stmt
from ..case import Case
from .names import bound_names, names_read, reachable
from .search import Candidate, Current

BOOLEAN_OPS = frozenset({"==", "!=", "<", "<=", ">", ">=", "&&", "||"})
LITERALS = (t.IntLit(0, "0"), t.IntLit(1, "1"), t.FloatLit(0.0, "0.0"), t.FloatLit(1.0, "1.0"))
"""The literals an expression may become (an integer literal does not fit everywhere a
float one does, as an item of a returned tuple)."""


# ---------------------------------------------------------------- helpers

def show(node: object, width: int = 60) -> str:
    """A statement or expression on one short line, for a step's description."""
    text = print_stmt(node) if isinstance(node, t.Stmt.__args__) else print_expr(node)
    line = " ".join(text.split())
    return "`" + (line if len(line) <= width else line[:width - 3] + "...") + "`"


def with_stmts(module: t.Module, owner: object, field: str, stmts: list) -> t.Module:
    """module with the statement list `field` of `owner` replaced."""
    return replace(module, owner, dataclasses.replace(owner, **{field: tuple(stmts)}))


def editable(module: t.Module, entry: str | None = None) -> list[object]:
    """The items whose insides may be edited: all but kernels; `entry` first (cutting it
    down may leave the others unused)."""
    items = [i for i in module.items if not isinstance(i, t.Kernel)]
    return sorted(items, key=lambda i: i.name != entry)


def entry_of(cur: Current) -> t.Function | None:
    for item in cur.module.items:
        if isinstance(item, t.Function) and item.name == cur.case.entry:
            return item
    return None


def _program(cur: Current, what: str, make, tidy: bool = False) -> Candidate:
    """A program edit; with `tidy`, also without the code the edit leaves dead."""
    if tidy:
        return Candidate("program", what, lambda: cur.with_module(without_dead_code(make())))
    return Candidate("program", what, lambda: cur.with_module(make()))


# ---------------------------------------------------------------- items

def items(cur: Current) -> Iterator[Candidate]:
    """Remove every item the entry does not reach, then each other item, then each `use`."""
    module, entry = cur.module, cur.case.entry
    keep = reachable(module, entry)
    if any(i.name not in keep for i in module.items):
        yield _program(cur, "remove the items the entry does not use",
                       lambda: dataclasses.replace(module, items=tuple(
                           i for i in module.items if i.name in keep)))
    for item in reversed(module.items):
        if item.name != entry:
            yield _program(cur, f"remove {type(item).__name__.lower()} `{item.name}`",
                           lambda item=item: dataclasses.replace(module, items=tuple(
                               i for i in module.items if i is not item)))
    for use in module.uses:
        yield _program(cur, f"remove `use {'.'.join(use.path)}`",
                       lambda use=use: dataclasses.replace(module, uses=tuple(
                           u for u in module.uses if u is not use)))


def kernels(cur: Current) -> Iterator[Candidate]:
    """Drop each op's kernel binding (the op runs its body) and each grad clause."""
    module = cur.module
    for item in module.items:
        if isinstance(item, t.Op) and item.kernel is not None:
            yield _program(cur, f"drop the kernel `{item.kernel.name}` of op `{item.name}`",
                           lambda item=item: replace(module, item, dataclasses.replace(
                               item, kernel=None)))
    for item in module.items:
        if isinstance(item, (t.Op, t.Function)) and item.grad is not None:
            yield _program(cur, f"drop the grad clause of `{item.name}`",
                           lambda item=item: replace(module, item, dataclasses.replace(
                               item, grad=None)))


# ---------------------------------------------------------------- statements

def without_dead_code(module: t.Module) -> t.Module:
    """module without the statements that declare or assign names nothing reads, and
    loops with empty bodies (in each item, to a fixed point: a name read only by a removed
    statement is dead too)."""
    for item in module.items:
        while True:
            read = names_read(item)
            dead = [(owner, field, stmts) for owner, field, stmts in stmt_lists(item)
                    if any(_dead(s, read) for s in stmts)]
            if not dead:
                break
            owner, field, stmts = dead[0]
            new = dataclasses.replace(owner, **{field: tuple(
                s for s in stmts if not _dead(s, read))})
            module, item = replace(module, owner, new), replace(item, owner, new)
    return module


def _dead(stmt: object, read: set[str]) -> bool:
    if isinstance(stmt, (t.For, t.While)):
        return not stmt.body
    if isinstance(stmt, t.Assign):
        return stmt.name not in read
    names = bound_names(stmt)
    return bool(names) and not any(n in read for n in names)


def dead_code(cur: Current) -> Iterator[Candidate]:
    yield _program(cur, "remove the statements whose names are never read",
                   lambda: without_dead_code(cur.module))


def statements(cur: Current) -> Iterator[Candidate]:
    """Remove each statement but a `return` or `yield`, last ones first (a statement is
    more often unused the later it comes)."""
    module = cur.module
    for item in editable(module, cur.case.entry):
        for owner, field, stmts in stmt_lists(item):
            for k in reversed(range(len(stmts))):
                if isinstance(stmts[k], (t.Return, t.Yield)):
                    continue
                yield _program(cur, f"remove {show(stmts[k])} in `{item.name}`",
                               lambda o=owner, f=field, s=stmts, k=k: with_stmts(
                                   module, o, f, s[:k] + s[k + 1:]), tidy=True)


def copies(cur: Current) -> Iterator[Candidate]:
    """Remove each `let a = e` (or `var a = e` never assigned) where e is a name or a
    literal, or a is read once, putting e where a was read."""
    module = cur.module
    for item in editable(module, cur.case.entry):
        assigned = {n.name for n in nodes(item) if isinstance(n, t.Assign)}
        reads: dict[str, int] = {}
        for n in nodes(item):
            if isinstance(n, t.Name):
                reads[n.id] = reads.get(n.id, 0) + 1
        for owner, field, stmts in stmt_lists(item):
            for s in stmts:
                if isinstance(s, (t.Let, t.VarDecl)) and s.annotation is None \
                        and s.name not in assigned and (reads.get(s.name) == 1 or isinstance(
                            s.value, (t.Name, t.IntLit, t.FloatLit, t.BoolLit))):
                    yield _program(cur, f"put {show(s.value)} where `{s.name}` was read in "
                                   f"`{item.name}`", lambda item=item, o=owner, f=field, s=s:
                                   _forwarded(module, item, o, f, s))


def _forwarded(module: t.Module, item: object, owner: object, field: str, s) -> t.Module:
    stmts = getattr(owner, field)
    new_owner = dataclasses.replace(owner, **{field: tuple(x for x in stmts if x is not s)})
    new_item = replace(item, owner, new_owner)
    new_item = transform(new_item, lambda n: s.value if isinstance(
        n, t.Name) and n.id == s.name else n)
    return replace(module, item, new_item)


def returns(cur: Current) -> Iterator[Candidate]:
    """Return a parameter or a variable declared earlier instead of the returned value (or
    of an item of a returned tuple), earliest first: what follows becomes dead code."""
    module = cur.module
    for item in editable(module, cur.case.entry):
        body = getattr(item, "body", ())
        if not body or not isinstance(body[-1], t.Return):
            continue
        ret = body[-1]
        names = [p.name for p in item.params] + [n for s in body[:-1] for n in bound_names(s)]
        targets = list(ret.value.items) if isinstance(ret.value, t.TupleExpr) else [ret.value]
        for target in targets:
            for name in names:
                if not (isinstance(target, t.Name) and target.id == name):
                    yield _program(cur, f"return `{name}` for {show(target)} in `{item.name}`",
                                   lambda tg=target, n=name: replace(module, tg, t.Name(n)),
                                   tidy=True)


# ---------------------------------------------------------------- expressions

def value_exprs(item: object) -> Iterator[t.Expr]:
    """The expressions of an item's statements, parents first: not its signature, `where`
    clauses, kernel binding, type annotations or the explicit generics of a call."""
    outside = set()
    for n in nodes(item):
        for f in ("generics", "params", "result", "where", "kernel", "annotation", "acc",
                  "results", "grid", "warps", "stages"):
            value = getattr(n, f, None) if not isinstance(n, t.Module) else None
            for v in value if isinstance(value, tuple) else (value,):
                if v is not None and dataclasses.is_dataclass(v):
                    outside.update(id(m) for m in nodes(v))
    for n in nodes(item, skip=lambda n: id(n) in outside):
        if id(n) not in outside and isinstance(n, t.Expr.__args__) \
                and not isinstance(n, (t.ForExpr, t.ListExpr)):
            yield n


def smaller_exprs(e: t.Expr) -> list[t.Expr]:
    """What `e` may be replaced by: its operands, then literals."""
    out: list[t.Expr] = []
    if isinstance(e, t.Binary):
        out += [e.left, e.right]
    elif isinstance(e, t.Unary):
        out.append(e.operand)
    elif isinstance(e, t.Call):
        out += [a.value for a in e.args if a.name is None and not isinstance(a.value, t.ListExpr)]
    elif isinstance(e, t.Index):
        out.append(e.base)
    elif isinstance(e, t.If):
        out += [b.value for b in (e.then, e.orelse) if not b.stmts]
    if _boolean(e):
        out += [t.BoolLit(False), t.BoolLit(True)]
    elif not isinstance(e, t.BoolLit):
        out += [lit for lit in LITERALS
                if not (isinstance(e, (t.IntLit, t.FloatLit)) and e.value == lit.value)]
    return out


def _boolean(e: t.Expr) -> bool:
    return (isinstance(e, t.Binary) and e.op in BOOLEAN_OPS) or isinstance(e, t.BoolLit) \
        or (isinstance(e, t.Unary) and e.op == "!") \
        or (isinstance(e, t.Reduce) and e.op in ("any", "all"))


def expressions(cur: Current) -> Iterator[Candidate]:
    """Replace each expression by one of its operands or by a literal (0, 1; false, true
    for a condition)."""
    module = cur.module
    for item in editable(module, cur.case.entry):
        for e in value_exprs(item):
            for new in smaller_exprs(e):
                yield _program(cur, f"replace {show(e)} by {show(new)} in `{item.name}`",
                               lambda e=e, new=new: replace(module, e, new), tidy=True)


# ---------------------------------------------------------------- parameters

def params(cur: Current) -> Iterator[Candidate]:
    """Remove each parameter nothing reads: of the entry with its input, of a fn or op
    with the argument at each call; then each generic of the entry nothing names."""
    module = cur.module
    for item in editable(module, cur.case.entry):
        if not isinstance(item, (t.Function, t.Op)):
            continue
        read = names_read(dataclasses.replace(item, params=()))
        for k, p in enumerate(item.params):
            if p.name in read:
                continue
            if item.name == cur.case.entry:
                yield Candidate("program", f"remove parameter `{p.name}` of the entry and "
                                f"its input", lambda k=k, item=item: _drop_input(cur, item, k))
            else:
                yield _program(cur, f"remove parameter `{p.name}` of `{item.name}`",
                               lambda k=k, item=item: _drop_param(module, item, k))
    entry = entry_of(cur)
    if entry is not None:
        read = names_read(dataclasses.replace(entry, generics=()))
        for g in entry.generics:
            if g.name not in read:
                yield Candidate("program", f"remove generic `{g.name}` of the entry",
                                lambda g=g: _drop_generic(cur, entry, g))


def _drop_input(cur: Current, entry: t.Function, k: int) -> Case:
    module = replace(cur.module, entry, dataclasses.replace(
        entry, params=entry.params[:k] + entry.params[k + 1:]))
    return cur.with_module(module).with_inputs(cur.case.inputs[:k] + cur.case.inputs[k + 1:])


def _drop_param(module: t.Module, item: t.Function | t.Op, k: int) -> t.Module:
    def drop_arg(n: object) -> object:
        if isinstance(n, t.Call) and n.callee == item.name and len(n.args) == len(item.params):
            return dataclasses.replace(n, args=n.args[:k] + n.args[k + 1:])
        return n
    module = replace(module, item, dataclasses.replace(
        item, params=item.params[:k] + item.params[k + 1:]))
    return transform(module, drop_arg)


def _drop_generic(cur: Current, entry: t.Function, g: t.Generic) -> Case:
    module = replace(cur.module, entry, dataclasses.replace(
        entry, generics=tuple(x for x in entry.generics if x is not g)))
    generics = {k: v for k, v in cur.case.generics.items() if k != g.name}
    return dataclasses.replace(cur.with_module(module), generics=generics)
