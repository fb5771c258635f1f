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
    elif isinstance(e, ir.IxGather):
        yield e.tensor
        for p in e.positions:
            if not isinstance(p, str):
                yield from ix_atoms(p)
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
    return (x for x in walk_binds(block) if isinstance(x, ir.Bind))


def walk_binds(block: ir.Block) -> Iterator[ir.Bind | ir.Block]:
    """Every Bind of a block and of its nested blocks, in order (each Bind before the blocks
    it nests), and each block itself after its last Bind (where its result is read).

    On an explicit stack: nested generators (`yield from` per level) pass every item up
    through each enclosing level, so n blocks nested n deep (an `else if` chain) would cost
    n * n; this costs n."""
    stack = [(block, iter(block.binds))]
    while stack:
        current, binds = stack[-1]
        bind = next(binds, None)
        if bind is None:
            stack.pop()
            yield current
            continue
        yield bind
        for inner in reversed(expr_blocks(bind.expr)):
            stack.append((inner, iter(inner.binds)))
