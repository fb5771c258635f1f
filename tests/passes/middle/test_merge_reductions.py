"""merge-reductions: directly nested like reductions written as one."""

from __future__ import annotations

import numpy as np

from linnet.ir import tensor as ir
from linnet.passes.middle.merge_reductions import merge_reductions

from tests.passes.middle.test_lower_index_notation import (Body, K, M, V, at, check_values, comp,
                                                            einsums, ix, lowered, program, rand,
                                                            red)


def test_directly_nested_sums_merge_into_one_reduction() -> None:
    """merge-reductions, then lowering: the product a[i, j] * v[j] is no larger than a, so
    multiply, then one sum over i, j. Without the merge: two sums, the same value."""
    a, v = V("a", M, K), V("v", K)
    inner = red("sum", {"j": K}, ix("mul", at(a, "i", "j"), at(v, "j")))
    body = Body()
    s = body.let("s", comp({}, red("sum", {"i": M}, inner)))
    p = program((a, v), body, s)
    xa, xv = rand(M, K), rand(K)
    for merge, want in ((True, [("reduce_sum", (0, 1))]),
                        (False, [("reduce_sum", (1,)), ("reduce_sum", (0,))])):
        low = lowered(merge_reductions(p) if merge else p)
        assert einsums(low) == []
        reductions = [b.expr for b in low.funcs[0].body.binds
                      if isinstance(b.expr, ir.Prim) and b.expr.op.startswith("reduce_")]
        assert [(r.op, r.attr("axes")) for r in reductions] == want
        check_values(p, low, np.float32((xa @ xv).sum()), xa, xv, rtol=1e-4)
