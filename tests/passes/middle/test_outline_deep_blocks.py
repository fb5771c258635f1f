"""outline-deep-blocks: nesting past MAX_DEPTH moves into functions of its own."""

from __future__ import annotations

import pytest

from linnet.ir import tensor as ir
from linnet.ir.walk import expr_blocks
from linnet.passes.middle.outline_deep_blocks import MAX_DEPTH, outline_deep_blocks

from default_recursion import default_limit  # noqa: F401 (autouse)

torch = pytest.importorskip("torch")


def _nested_ifs(n: int) -> ir.Program:
    """main(x: f32) = if x < 0 { 0 } else if x < 1 { 1 } ... else { x }, n ifs deep."""
    f32, b = ir.TType((), "f32"), ir.TType((), "bool")
    x = ir.Var("x", f32)

    def level(i: int) -> ir.Block:
        if i == n:
            return ir.Block((), x)
        c, r = ir.Var(f"c{i}", b), ir.Var(f"r{i}", f32)
        test = ir.Bind(c, ir.Prim("lt", (x, ir.Lit(float(i), f32)), b))
        branch = ir.If(c, ir.Block((), ir.Lit(float(i), f32)), level(i + 1), f32)
        return ir.Block((test, ir.Bind(r, branch)), r)

    return ir.Program((ir.Func("main", "entry", (x,), level(0)),), "main")


def _depth(block: ir.Block) -> int:
    inner = [_depth(b) for bind in block.binds for b in expr_blocks(bind.expr)]
    return 1 + max(inner, default=0)


def test_outlining_bounds_the_depth_of_every_function():
    program = outline_deep_blocks(_nested_ifs(100))
    assert len(program.funcs) == 1 + 100 // MAX_DEPTH
    assert all(_depth(f.body) <= MAX_DEPTH + 1 for f in program.funcs)
    from linnet.ir.verify import verify
    assert verify(program, "tensor-outlined") == []
    problems = verify(program, "tensor-kernel-tiles")  # fns made again, after inline-fns
    assert len(problems) == 2 * (len(program.funcs) - 1), problems
    assert any(m.endswith(": fn Func is not allowed in tensor-kernel-tiles (inline-fns removes "
                          "it)") for m in problems)
    from linnet.torch.interpreter import run
    for x, want in [(-1.0, 0.0), (50.5, 51.0), (99.5, 99.5), (500.0, 500.0)]:
        (out,) = run(program, torch.tensor(x))
        assert float(out) == want


def test_shallow_programs_are_unchanged():
    program = _nested_ifs(MAX_DEPTH)
    assert outline_deep_blocks(program) is program
