"""The kernels really run: for each example op, at sizes where its kernel's `where` holds,
the module compiled with `numerics="equivalent"` holds a Triton kernel and the one compiled
with `"exact"` holds no Triton at all; and Triton can launch it here (CUDA, or the
interpreter that `tests/conftest.py` turns on without a GPU).

These fail until the compiler chooses kernels and prints them (the equivalence tests of
`test_kernels_vs_bodies.py` compare the body with itself until then).
"""

from __future__ import annotations

import pytest

from linnet.fuzz import kernel_runtime, target_spec
from linnet.fuzz import harness

from kernel_cases import DEVICE, example

SMALL = {
    "softmax": dict(R=3, C=5),
    "matmul": dict(M=3, N=5, K=7),
    "matmul_bf16": dict(M=3, N=5, K=7),
    "column_stats": dict(R=3, C=5),
    "row_scan": dict(R=3, C=5),
    "row_product": dict(R=3, C=5),
    "layer_norm": dict(R=3, C=5),
    "attention": dict(B=1, H=2, L=3, S=5, D=16),
    "attention_causal": dict(B=1, H=2, L=70, D=32),
    "attention_bf16": dict(B=1, H=2, L=3, S=5, D=16),
    "attention_causal_bf16": dict(B=1, H=1, L=130, D=16),
    "layer_norm_bf16": dict(R=3, C=5),
    "relu": dict(N=5),
}


def test_triton_can_launch_kernels_here() -> None:
    ran, how = kernel_runtime(DEVICE)
    assert ran, how


@pytest.mark.parametrize("op", sorted(SMALL))
def test_equivalent_has_a_kernel_and_exact_has_none(op: str) -> None:
    spec = target_spec(example(op.removesuffix("_bf16").removesuffix("_causal")), op)
    assert spec.satisfies(SMALL[op])
    _, exact = harness.compiled(spec, SMALL[op], "exact")
    assert "triton" not in exact
    _, equivalent = harness.compiled(spec, SMALL[op], "equivalent")
    assert "@triton.jit" in equivalent, f"{op}: no Triton kernel in the generated module"
