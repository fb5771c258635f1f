"""outline-deep-blocks: tensor-kernel-tiles -> tensor-outlined, control flow nested too
deeply for the generated code, moved out.

A long `else if` chain is an `If` in the else block of an `If`, hundreds deep. The
PyTorch and JAX printers write each nested block one indentation level further in,
and CPython refuses more than 100 levels ("too many levels of indentation"); deep
nesting also strains every later walk. So, in every function but kernels, an If,
Loop or While found `MAX_DEPTH` blocks deep is moved into a function of its own (kind
"fn"): its parameters are the construct's free variables, its body binds the construct
and returns it, and the construct's place holds a `Call`. The new function starts
at depth zero again, so a chain of any length becomes a chain of calls, each function
at most `MAX_DEPTH` blocks deep. Programs nested less deeply are returned unchanged.

Kernels are left alone: a kernel's body is one Triton or Pallas function (the
generated launch has no calls between kernels).
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import tensor as ir
from ..traverse import expr_free_vars, map_blocks

#: Blocks nested inside one another in a function before the next construct is moved
#: out. Each level costs a printer one or two indentation levels; CPython allows 100.
MAX_DEPTH = 24

_CONTROL = (ir.If, ir.Loop, ir.While)


def outline_deep_blocks(program: ir.Program) -> ir.Program:
    """The program with every construct nested `MAX_DEPTH` deep in a function of its own."""
    outliner = _Outliner({f.name for f in program.funcs})
    funcs = tuple(outliner.func(f) for f in program.funcs)
    if not outliner.made:
        return program
    return replace(program, funcs=funcs + tuple(outliner.made))


class _Outliner:
    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.made: list[ir.Func] = []
        self.origin = ""

    def func(self, f: ir.Func) -> ir.Func:
        if f.kind == "kernel":
            return f
        self.origin = f.name
        body = self.block(f.body, 0)
        grad = self.func(f.grad) if f.grad is not None else None
        if body is f.body and grad is f.grad:
            return f
        return replace(f, body=body, grad=grad)

    def block(self, b: ir.Block, depth: int) -> ir.Block:
        binds = tuple(self.bind(bind, depth) for bind in b.binds)
        return b if binds == b.binds else ir.Block(binds, b.result)

    def bind(self, bind: ir.Bind, depth: int) -> ir.Bind:
        e = bind.expr
        if not isinstance(e, _CONTROL):
            return bind
        if depth >= MAX_DEPTH:
            return ir.Bind(bind.var, self.outline(e))
        inner = map_blocks(e, lambda b: self.block(b, depth + 1))
        return bind if inner is e else ir.Bind(bind.var, inner)

    def outline(self, e: ir.If | ir.Loop | ir.While) -> ir.Call:
        """A new function computing e (itself outlined further where still deep); its call."""
        params = tuple(sorted(expr_free_vars(e), key=lambda v: v.name))
        name = self.fresh_name()
        result = ir.Var(f"{name}_result", e.type)
        body = self.block(ir.Block((ir.Bind(result, e),), result), 0)
        self.made.append(ir.Func(name, "fn", params, body,
                                 source=f"control flow nested deep in {self.origin}"))
        return ir.Call(name, params, e.type)

    def fresh_name(self) -> str:
        n = len(self.made)
        while f"outlined_{n}" in self.taken:
            n += 1
        name = f"outlined_{n}"
        self.taken.add(name)
        return name
