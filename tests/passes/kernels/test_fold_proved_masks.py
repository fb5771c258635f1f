"""fold-proved-masks: selects on proved conditions folded, accesses under false masks gone."""

from __future__ import annotations

import torch

from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated

from pass_runs import DEVICE, func, prims, run
from egraph_frees import free_egraphs, older_objects_frozen  # noqa: F401 (autouse)


MASKS = """module m
pub kernel k<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(1) where B >= 1 {
    let offs = iota<i32>(B)
    let never = (offs >= N) & (offs < N)
    let v = load(x[offs], never, 7.0)
    let w = load(x[offs], offs < N, 0.0)
    store(y[offs], select(offs < N, w * 2.0, v), offs < N)
    store(y[offs], v, never)
}
pub op twice<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel k<N, 16> {
    return x * 2.0
}
entry main(x: Tensor[16; f32]) -> Tensor[16; f32] {
    return twice(x)
}
"""


def test_proved_masks_fold_selects_and_remove_accesses():
    compiled = compile_source(MASKS, entry="main")
    before = func(compiled.stage("egraph-tiles"), "kernel")
    after = func(compiled.stage("fold-proved-masks"), "kernel")
    assert len(prims(before, "select")) == 1 and len(prims(before, "store")) == 2
    assert prims(after, "select") == []
    assert len(prims(after, "store")) == 1 and len(prims(after, "load")) == 1
    module = import_generated(compiled.text, "folded_masks")
    x = torch.randn(16)
    (y,) = run(module, x)
    assert module._LT_TRITON and (module._LT_INTERPRET or DEVICE == "cuda")
    torch.testing.assert_close(y, x * 2.0)
