"""drop-dead-carries: loop carries nothing reads leave the loop."""

from __future__ import annotations

import torch

from linnet.ir import tensor as ir
from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated

from pass_runs import func, run
from egraph_frees import free_egraphs, older_objects_frozen  # noqa: F401 (autouse)


CARRIES = """module m
entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    var acc = x
    var count = x
    var unused = x
    for t in 0..3 {
        acc = acc + count
        count = count * 2.0
        unused = unused + acc
    }
    return acc
}
"""


def test_dead_carries_leave_the_loop():
    compiled = compile_source(CARRIES, entry="main")

    def carried(stage):
        loop = next(b.expr for b in func(compiled.stage(stage), "entry").body.binds
                    if isinstance(b.expr, ir.Loop))
        return [v.name for v in loop.carried]

    assert len(carried("dce")) == 3
    assert len(carried("drop-dead-carries")) == 2  # count feeds acc; unused feeds nothing
    module = import_generated(compiled.text, "carries")
    x = torch.randn(4)
    (y,) = run(module, x)
    torch.testing.assert_close(y, x + x + 2 * x + 4 * x)
