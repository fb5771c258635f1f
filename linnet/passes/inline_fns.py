"""inline-fns: tensor IR -> tensor IR with no `fn` left.

A `fn` is a pure helper that the language promises to inline (docs/language.md, "Items"),
so every `Call` of a Func of kind "fn" is replaced by the callee's body: its
parameters read the call's arguments, every variable it binds gets a fresh
name in the caller (names stay unique within a function), and the variable
holding the call's result is bound by the callee's own last step. Callees are
inlined into first (fns cannot recurse: the checker forbids it), then the fn
Funcs are dropped. Ops stay functions: they are what kernels replace.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace

from ..ir import tensor as ir
from .traverse import Rewriter, bound_vars


def inline_fns(program: ir.Program) -> ir.Program:
    """Every call of a fn replaced by its body; the fns themselves dropped."""
    fns = {f.name: f for f in program.funcs if f.kind == "fn"}
    if not fns:
        return program
    done: dict[str, ir.Func] = {}
    funcs = tuple(Inliner(fns, done).func(f) for f in program.funcs if f.kind != "fn")
    return replace(program, funcs=funcs)


class Inliner(Rewriter):
    """Rewrites one function's calls of fns; `done` memoizes callees already inlined into."""

    def __init__(self, fns: dict[str, ir.Func], done: dict[str, ir.Func]) -> None:
        super().__init__()
        self.fns = fns
        self.done = done

    def callee(self, name: str) -> ir.Func:
        """The fn with its own fn calls inlined first (each fn processed once)."""
        if name not in self.done:
            self.done[name] = Inliner(self.fns, self.done).func(self.fns[name])
        return self.done[name]

    def call(self, e: ir.Call, bind: ir.Bind) -> ir.Expr | None:
        if e.callee not in self.fns:
            return super().call(e, bind)
        body = self.instantiate(self.callee(e.callee), self.atoms(e.args), bind.var)
        for b in body.binds:
            self.emit(b)
        if body.result != bind.var:
            self.replace_uses(bind.var, body.result)
        return None

    def instantiate(self, f: ir.Func, args: tuple[ir.Atom, ...], target: ir.Var) -> ir.Block:
        """f's body renamed apart for this call site: parameters become the arguments,
        each bound variable a fresh name, and the result (when the body binds it at top
        level) the caller's `target` variable, so no copy is needed."""
        mapping: dict[ir.Var, ir.Atom] = dict(zip(f.params, args))
        for v in bound_vars(f.body):
            mapping[v] = ir.Var(self.names.fresh(v.name), v.type)
        if any(b.var == f.body.result for b in f.body.binds):
            mapping[f.body.result] = target
        return rename(f.body, mapping)


def rename(node, mapping: dict[ir.Var, ir.Atom]):
    """node with every variable, bound or used, replaced through mapping.

    One structural traversal covers binders (`Bind.var`, loop indices and carried
    values) and uses alike, in blocks and index expressions; types and literals hold
    no variables and are kept as they are.
    """
    if isinstance(node, ir.Var):
        return mapping.get(node, node)
    if isinstance(node, tuple):
        return tuple(rename(x, mapping) for x in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (ir.TType, ir.TupleTy, ir.Lit)):
        return node
    changes = {f.name: rename(getattr(node, f.name), mapping)
               for f in dataclasses.fields(node)}
    return replace(node, **changes)
