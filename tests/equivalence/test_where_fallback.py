"""Where a kernel's `where` fails for the bound sizes the op's body runs instead, silently,
and still computes the op (docs/language.md, "Kernels")."""

from __future__ import annotations

import pytest

from linnet.fuzz import compare_kernel_and_body, make_inputs, target_spec
from linnet.fuzz import harness

from kernel_cases import DEVICE, example

# op, sizes past the kernel's tile (B >= C fails; layer norm's tile is next_pow2(C), up to
# BC <= 16384)
BEYOND = [("softmax", dict(R=2, C=1025)), ("row_scan", dict(R=2, C=1030)),
          ("row_product", dict(R=2, C=257)), ("layer_norm", dict(R=2, C=16385)),
          ("attention", dict(B=1, H=2, L=3, S=4, D=65)),
          ("attention_causal", dict(B=1, H=1, L=5, D=24))]


@pytest.mark.parametrize(("op", "values"), BEYOND, ids=[op for op, _ in BEYOND])
def test_body_runs_where_the_kernel_does_not_apply(op: str, values: dict) -> None:
    spec = target_spec(example(op.removesuffix("_causal")), op)
    assert spec.allows(values) and not spec.satisfies(values)
    _, text = harness.compiled(spec, values, "equivalent")
    assert "@triton.jit" not in text
    style = "unit" if op == "row_product" else "normal"
    inputs = make_inputs(spec, values, seed=1, style=style, device=DEVICE)
    result = compare_kernel_and_body(spec.path, op, inputs, device=DEVICE, values=values)
    assert result.ok and not result.kernel_chosen, str(result)
