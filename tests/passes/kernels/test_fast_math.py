"""fast-math: division through reciprocals, under --numerics fast only."""

from __future__ import annotations

import torch

from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated

from pass_runs import func, prims, run
from egraph_frees import free_egraphs, older_objects_frozen  # noqa: F401 (autouse)


SOFTMAX = "examples/softmax.linnet"


def test_fast_math_divides_through_reciprocals_only_under_fast():
    from pathlib import Path
    path = str(Path(__file__).resolve().parents[3] / SOFTMAX)
    for numerics, expect in (("equivalent", 0), ("fast", 1)):
        compiled = compile_source(path=path, entry="main", numerics=numerics)
        kernel = func(compiled.stage("fast-math"), "kernel")
        recips = [d for d in prims(kernel, "div") if d.type.shape == ()]
        assert len(recips) == expect
        assert len([d for d in prims(kernel, "div") if d.type.shape]) == 1 - expect
        op = next(f for f in compiled.stage("fast-math").funcs if f.kind == "op")
        assert prims(op, "div")  # the body keeps its division
    module = import_generated(compiled.text, "fast_softmax")
    x = torch.randn(64, 1000)
    (y,) = run(module, x)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
