"""cse: tensor-core -> tensor-core, each pure expression computed once per scope.

A binding whose expression (Prim, Einsum, GetItem, MakeTuple or
Comprehension, compared after earlier merges) equals one already bound in
the same block or an enclosing one is dropped, and its uses read the earlier
variable. Inner blocks see outer bindings but not the reverse, so nothing is
hoisted out of a branch or a loop. Calls, Ifs and loops are never merged:
they are left to passes that know what they cost. Kernel memory is never
merged: an effect (`store`, the atomics) happens as often as it is written,
and a `load` (pure, but it reads what effects write) is kept where it is
rather than proving no effect lies between two of them.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from functools import cache

from ...ir import tensor as ir
from ...scopes import ScopeStack
from ..traverse import Rewriter

PURE = (ir.Prim, ir.Einsum, ir.GetItem, ir.MakeTuple, ir.Comprehension)


def cse(program: ir.Program) -> ir.Program:
    """Merge repeated pure expressions within each block and its nested blocks."""
    return _CSE().program(program)


class _CSE(Rewriter):
    def __init__(self) -> None:
        super().__init__()
        self.scopes: ScopeStack[object, ir.Var] = ScopeStack()

    def func(self, f: ir.Func) -> ir.Func:
        saved, self.scopes = self.scopes, ScopeStack()
        try:
            return super().func(f)
        finally:
            self.scopes = saved

    def block(self, b: ir.Block) -> ir.Block:
        self.scopes.push()
        try:
            return super().block(b)
        finally:
            self.scopes.pop()

    def bind(self, bind: ir.Bind) -> None:
        e = self.expr(bind.expr, bind)
        if e is None:
            return
        if isinstance(e, PURE) and not touches_memory(e):
            k = key(e)
            earlier = self.lookup(k)
            if earlier is not None and earlier.type == bind.var.type:
                self.replace_uses(bind.var, earlier)
                return
            self.scopes.define(k, bind.var)
        self.emit(bind if e is bind.expr else ir.Bind(bind.var, e))

    def lookup(self, k: object) -> ir.Var | None:
        return self.scopes.lookup(k)


def touches_memory(e: ir.Expr) -> bool:
    """An effect or a load: never merged (see the module's docstring)."""
    return isinstance(e, ir.Prim) and (e.op in ir.EFFECTS or e.op == "load")


def key(node: object) -> object:
    """A hashable structural key: equal keys mean equal values.

    Literals are keyed by their exact spelling, so -0.0 and 0.0 (equal in
    Python) stay apart while two NaN literals (unequal in Python) match;
    lists in attributes become tuples. A key is built of tuples, strings and
    numbers only, whose hashes are computed in C: `cse` hashes each key
    several times (its scopes), and a node's own dataclass hash is Python code.
    """
    kind = type(node)
    if kind is ir.Var:
        return ("Var", node.name, _type_key(node.type))
    if kind is ir.Lit:
        return ("Lit", type(node.value).__name__, repr(node.value), _type_key(node.type))
    if kind is ir.TType or kind is ir.TupleTy:
        return _type_key(node)
    names = _field_names(kind)
    if names is not None:
        return (kind.__name__,) + tuple(key(getattr(node, n)) for n in names)
    if isinstance(node, (tuple, list)):
        return tuple(key(x) for x in node)
    if isinstance(node, dict):
        return tuple(sorted((k, key(v)) for k, v in node.items()))
    return node


def _type_key(ty: ir.Ty) -> tuple:
    """`key` of a type, built directly (types are in every node)."""
    if type(ty) is ir.TType:
        return ("TType", ty.shape, ty.dtype)
    return ("TupleTy", tuple(_type_key(x) for x in ty.items))


@cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """A node class's field names (None for a class that is no dataclass), once per class
    (`fields()` per node was a fifth of `cse` on a long unrolled loop)."""
    return tuple(f.name for f in fields(cls)) if is_dataclass(cls) else None
