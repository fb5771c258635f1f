"""What the tests of single passes share: a generated module run on the test device, the
prims of a function, and its function of a kind. (The e-graphs a test makes are freed after
it by the fixtures of `egraph_frees`, which each such file imports.)"""

from __future__ import annotations

import torch

from linnet.ir import tensor as ir
from linnet.ir.walk import all_binds


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # else tests/conftest.py interprets


def run(module, *xs):
    """The module's results for inputs on the test device, back on the CPU."""
    return tuple(y.cpu() for y in module.main(*(x.to(DEVICE) for x in xs)))


def prims(f: ir.Func, op: str) -> list[ir.Prim]:
    return [b.expr for b in all_binds(f.body) if isinstance(b.expr, ir.Prim) and b.expr.op == op]


def func(program: ir.Program, kind: str) -> ir.Func:
    return next(f for f in program.funcs if f.kind == kind)
