"""Read-only walks over the tensor IR: what an expression reads, what it nests.

Shared by the passes (through `linnet/passes/traverse.py`), the verifier, the
printers and the tests, so that adding a node kind means changing one place.
"""

from __future__ import annotations

from typing import Iterator

from . import tensor as ir


def expr_atoms(e: ir.Expr) -> tuple[ir.Atom, ...]:
    """The atoms an expression reads directly (not those of its nested blocks)."""
    if isinstance(e, (ir.Var, ir.Lit)):
        return (e,)
    if isinstance(e, (ir.Prim, ir.Einsum, ir.Call)):
        return e.args
    if isinstance(e, ir.MakeTuple):
        return e.items
    if isinstance(e, ir.GetItem):
        return (e.tup,)
    if isinstance(e, ir.If):
        return (e.cond,)
    if isinstance(e, ir.Loop):
        return e.runtime_bounds + e.init
    if isinstance(e, ir.While):
        return e.init
    if isinstance(e, ir.Comprehension):
        return tuple(ix_atoms(e.body))
    raise TypeError(f"not a tensor IR expression: {type(e).__name__}")


def ix_atoms(e: ir.IxExpr) -> Iterator[ir.Atom]:
    """The atoms an index expression reads, in order of appearance."""
    if isinstance(e, ir.IxAccess):
        yield e.tensor
    elif isinstance(e, ir.IxScalar):
        yield e.value
    elif isinstance(e, ir.IxPrim):
        for a in e.args:
            yield from ix_atoms(a)
    elif isinstance(e, ir.IxReduce):
        yield from ix_atoms(e.body)
    else:
        raise TypeError(f"not an index expression: {type(e).__name__}")


def expr_blocks(e: ir.Expr) -> tuple[ir.Block, ...]:
    """The blocks nested directly in an expression."""
    if isinstance(e, ir.If):
        return (e.then, e.orelse)
    if isinstance(e, ir.Loop):
        return (e.body,)
    if isinstance(e, ir.While):
        return (e.cond, e.body)
    return ()


def expr_binders(e: ir.Expr) -> tuple[ir.Var, ...]:
    """Variables an expression binds for its nested blocks (loop index, carried values)."""
    if isinstance(e, ir.Loop):
        return (e.index, *e.carried)
    if isinstance(e, ir.While):
        return e.carried
    return ()



def all_binds(block: ir.Block) -> Iterator[ir.Bind]:
    """Every Bind of a block, those of its nested blocks included, in order."""
    for b in block.binds:
        yield b
        for inner in expr_blocks(b.expr):
            yield from all_binds(inner)
