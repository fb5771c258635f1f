"""Where `elaborate` writes and what names mean: the block builder and the scopes.

`Builder` holds the bindings being emitted (a stack of open blocks) and hands
out one function's variable names, each hint remembering its last suffix so
that naming stays linear; `Env` maps surface names to what they stand for
(runtime atoms, compile-time numbers, index expressions) through nested
scopes, rebinding a `var` in SSA style. Both are plain state with no knowledge
of the surface tree, so the body translator and the kernel translator share them.
"""

from __future__ import annotations

from ...ir import tensor as ir
from ...scopes import ScopeStack
from .vocabulary import ElaborationError, Value


class Builder:
    """The bindings being emitted (a stack of open blocks) and one function's names."""

    def __init__(self) -> None:
        self.blocks: list[list[ir.Bind]] = [[]]
        self.taken: set[str] = set()
        self.temps: set[str] = set()
        self.suffix: dict[str, int] = {}  # per hint, the last suffix handed out

    def fresh(self, hint: str, ty: ir.Ty) -> ir.Var:
        """A variable whose name no other variable of the function has (`acc`, `acc_1`).

        Each hint remembers its last suffix, so the ten-thousandth `a` of an unrolled
        `static for` costs one probe, not ten thousand: elaboration stays linear."""
        name, n = hint, self.suffix.get(hint, 0)
        if n:
            name = f"{hint}_{n}"
        while name in self.taken:
            n += 1
            name = f"{hint}_{n}"
        self.suffix[hint] = n
        self.taken.add(name)
        return ir.Var(name, ty)

    def emit(self, expr: ir.Expr, hint: str) -> ir.Var:
        """Bind expr to a fresh temporary in the current block."""
        var = self.fresh(hint, expr.type)
        self.temps.add(var.name)
        self.blocks[-1].append(ir.Bind(var, expr))
        return var

    def bind(self, expr: ir.Expr, name: str) -> ir.Var:
        """Bind expr to a variable named after `name` (a user name: never renamed later)."""
        var = self.fresh(name, expr.type)
        self.blocks[-1].append(ir.Bind(var, expr))
        return var

    def name(self, atom: ir.Atom, name: str) -> ir.Var:
        """A variable called after `name` holding atom: the temporary just emitted is
        renamed (no copy), anything else is copied into a new binding."""
        block = self.blocks[-1]
        if (isinstance(atom, ir.Var) and atom.name in self.temps and block
                and block[-1].var == atom):
            self.temps.discard(atom.name)
            if atom.name == name:
                return atom
            var = self.fresh(name, atom.type)
            block[-1] = ir.Bind(var, block[-1].expr)
            return var
        var = self.fresh(name, atom.type)
        block.append(ir.Bind(var, atom))
        return var

    def open(self) -> None:
        self.blocks.append([])

    def close(self, result: ir.Atom) -> ir.Block:
        return ir.Block(tuple(self.blocks.pop()), result)


class Env:
    """Names in scope: nested scopes of runtime atoms, compile-time numbers, or index
    expressions (inside a fn expanded in index notation)."""

    def __init__(self) -> None:
        self.scopes: ScopeStack[str, Value] = ScopeStack()

    def lookup(self, name: str) -> Value | None:
        return self.scopes.lookup(name)

    def define(self, name: str, value: Value) -> None:
        self.scopes.define(name, value)

    def assign(self, name: str, value: Value) -> None:
        """Rebind a `var` in the scope that declared it (SSA: a new Var each time)."""
        if not self.scopes.assign(name, value):
            raise ElaborationError(f"assignment to undeclared `{name}`")

    def push(self) -> None:
        self.scopes.push()

    def pop(self) -> None:
        self.scopes.pop()

