"""dce: tensor-core -> tensor-core, without dead bindings or unreachable functions.

Every IR expression but the kernel effects (`store` and the atomics,
`ir.EFFECTS`) is pure (calls included: ops and fns have no effects), so a
binding whose variable nothing reads is dropped, whatever it computes; an
effect is always kept, and so is an If, Loop or While with an effect in its
blocks (with what the effect reads). Blocks are swept backwards, so a chain
of dead bindings goes in one sweep, and nested blocks are swept too (a loop
keeps its carried values, which its structure needs, but loses the dead
bindings of its body). Functions not reachable from the entry through
`Call`s, looking into `grad` clauses and each op's chosen kernel
(`KernelChoice.func`), are dropped.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import tensor as ir
from ..block_memo import BlockMemo
from ..traverse import expr_blocks, expr_free_vars, map_blocks

_CLEAN: BlockMemo[bool] = BlockMemo()
"""The blocks a sweep found nothing dead in. Several passes end with `dce` (each e-graph
pass, `drop-dead-carries`), and most of a program reaches them unchanged, the same
block objects: a block swept clean once is not swept again while it lives."""


def dce(program: ir.Program) -> ir.Program:
    """Drop unused bindings and the functions the entry cannot reach."""
    funcs = tuple(dce_func(f) for f in program.funcs)
    reachable = reachable_funcs(funcs, program.entry)
    return replace(program, funcs=tuple(f for f in funcs if f.name in reachable))


def dce_func(f: ir.Func) -> ir.Func:
    grad = dce_func(f.grad) if f.grad is not None else None
    return replace(f, body=dce_block(f.body), grad=grad)


def dce_block(b: ir.Block) -> ir.Block:
    """The block without bindings that neither its result nor a kept binding reads."""
    if _CLEAN.get(b):
        return b
    live = {b.result} if isinstance(b.result, ir.Var) else set()
    kept: list[ir.Bind] = []
    for bind in reversed(b.binds):
        if bind.var not in live and not has_effect(bind.expr):
            continue
        expr = map_blocks(bind.expr, dce_block)
        kept.append(bind if expr is bind.expr else ir.Bind(bind.var, expr))
        live |= expr_free_vars(expr)
    binds = tuple(reversed(kept))
    if binds == b.binds:
        _CLEAN.put(b, True)
        return b
    return ir.Block(binds, b.result)


def has_effect(e: ir.Expr) -> bool:
    """Does e write memory, itself or anywhere in its nested blocks?"""
    if isinstance(e, ir.Prim):
        return e.op in ir.EFFECTS
    return any(has_effect(bind.expr) for b in expr_blocks(e) for bind in b.binds)


def calls(b: ir.Block) -> set[str]:
    """Names of the functions a block calls, nested blocks included."""
    names: set[str] = set()
    for bind in b.binds:
        if isinstance(bind.expr, ir.Call):
            names.add(bind.expr.callee)
        for inner in expr_blocks(bind.expr):
            names |= calls(inner)
    return names


def reachable_funcs(funcs: tuple[ir.Func, ...], entry: str) -> set[str]:
    """Function names reachable from `entry` (their grad clauses' calls count)."""
    by_name = {f.name: f for f in funcs}
    seen: set[str] = set()
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        f = by_name[name]
        if f.kernel is not None and f.kernel.func:
            todo.append(f.kernel.func)
        while f is not None:
            todo.extend(calls(f.body))
            f = f.grad
    return seen
