"""hoist-loop-invariants: invariant work leaves the loop, and the values stay."""

from __future__ import annotations

import torch

from linnet.ir import tensor as ir
from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated

from pass_runs import func, run
from egraph_frees import free_egraphs, older_objects_frozen  # noqa: F401 (autouse)


LOOP = """module m
entry main(x: Tensor[4, 8; f32], w: Tensor[8; f32]) -> Tensor[4, 8; f32] {
    var acc = x
    for t in 0..3 {
        let scaled[i, j] = x[i, j] * w[j] * 2.0
        let step[i, j] = acc[i, j] + scaled[i, j]
        acc = step
    }
    return acc
}
"""


def test_invariant_work_leaves_the_loop():
    before = compile_source(LOOP, entry="main").stage("fold-constants")
    after = compile_source(LOOP, entry="main").stage("hoist-loop-invariants")

    def inside(program):
        loop = next(b.expr for b in func(program, "entry").body.binds
                    if isinstance(b.expr, ir.Loop))
        return [b.expr.op for b in loop.body.binds if isinstance(b.expr, ir.Prim)]

    assert inside(before).count("mul") == 2
    assert inside(after) == ["add"]  # only the carried sum stays


def test_hoisted_loop_computes_the_same():
    module = import_generated(compile_source(LOOP, entry="main").text, "hoisted")
    x, w = torch.randn(4, 8), torch.randn(8)
    (y,) = run(module, x, w)
    torch.testing.assert_close(y, x + 3 * (x * w * 2.0))
