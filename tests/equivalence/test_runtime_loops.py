"""Kernel loops whose bounds are computed at run time, kernel against body, through Triton
(its interpreter here, a GPU where there is one) and through Pallas (its interpreter here).

The kernels are those of `tests/spec/valid/96_kernel_runtime_loops.linnet` (program r walks
columns 0..r, a band of tiles clamped with `max`/`min`, and stores from two loops that carry
nothing) and `97_kernel_loop_bound_params.linnet` (a scalar parameter bounds the loop, which
runs no trip for n <= 0 and runs past the matrix for n > C). Sizes are drawn to satisfy both
`where` clauses; the explicit cases hit the loops that run no trip.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linnet.fuzz import compare_kernel_and_body, target_spec
from linnet.testing.strategies import cases

from kernel_cases import DEVICE, ROOT, case_at, examples

VALID = ROOT / "tests" / "spec" / "valid"
LOOPS = str(VALID / "96_kernel_runtime_loops.linnet")
PARAMS = str(VALID / "97_kernel_loop_bound_params.linnet")
OPS = [(LOOPS, "strict_lower_sums"), (LOOPS, "band_sums"), (LOOPS, "lower_doubled"),
       (PARAMS, "first_column_sums")]
TARGETS = ["torch", "jax"]


def agree(spec, case, target: str) -> None:
    """Kernel against body; for JAX in Pallas's interpreter unless JAX has a GPU (the
    variable is read when each comparison runs, and restored after it)."""
    saved = os.environ.get("LINNET_PALLAS_INTERPRET")
    if target == "jax" and pytest.importorskip("jax").default_backend() != "gpu":
        os.environ["LINNET_PALLAS_INTERPRET"] = "1"
    try:
        result = compare_kernel_and_body(spec.path, spec.name, case.inputs, device=DEVICE,
                                         grad=False, text=spec.text, values=case.values,
                                         seed=case.seed, target=target)
    finally:
        if saved is None:
            os.environ.pop("LINNET_PALLAS_INTERPRET", None)
        else:
            os.environ["LINNET_PALLAS_INTERPRET"] = saved
    assert result.kernel_ran, result
    assert result.ok, f"{case!r}\n{result}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path, op", OPS, ids=[op for _, op in OPS])
@settings(max_examples=examples(0.3))
@given(data=st.data())
def test_run_time_bounds_agree_with_the_body(target, path, op, data):
    spec = target_spec(path, op)
    agree(spec, data.draw(cases(spec, max_dim=70, device=DEVICE), label="case"), target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op, size", [("strict_lower_sums", 1), ("band_sums", 1),
                                      ("band_sums", 33), ("lower_doubled", 17)])
def test_programs_whose_loops_run_no_trip(target, op, size):
    """R = 1: program 0's loops run 0..0 (and lower_doubled's second loop runs 1..1 in
    none); band_sums at 33 clamps its tile range at both ends."""
    spec = target_spec(LOOPS, op)
    agree(spec, case_at(spec, R=size), target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [-100, -3, 0, 1, 16, 17, 40, 1000])
def test_a_parameter_bound_below_the_lower_one_at_it_and_past_the_matrix(target, n):
    spec = target_spec(PARAMS, "first_column_sums")
    agree(spec, case_at(spec, R=9, C=40, overrides={"n": n}), target)
