"""Kernels generic in their dtype (`generic_dtypes.linnet`, test-only): f32, f16 and bf16
kernels against their bodies with the tolerance of each dtype, and integer kernels exactly.
Under Triton's interpreter the generated module computes half tiles in f32 (the interpreter
computes bf16 wrongly); on a GPU they are real half-precision tiles."""

from __future__ import annotations

from hypothesis import example, given, settings

from linnet.fuzz import target_spec
from linnet.testing.strategies import cases

from kernel_cases import DEVICE, HERE, assert_agree, case_at, examples

FILE = str(HERE / "generic_dtypes.linnet")
SCALE_ROWS = target_spec(FILE, "scale_rows")
SUM_SQUARES = target_spec(FILE, "sum_squares")
INT_ROW_SUMS = target_spec(FILE, "int_row_sums")
FLOATS = {"T": ("f32", "f16", "bf16")}


@settings(max_examples=examples(1.0))
@given(cases(SCALE_ROWS, max_dim=300, dtypes=FLOATS, device=DEVICE))
@example(case_at(SCALE_ROWS, R=1, C=1, T="bf16"))
@example(case_at(SCALE_ROWS, R=3, C=256, T="f16"))
def test_scale_rows(case) -> None:
    assert_agree(SCALE_ROWS, case)


@settings(max_examples=examples(1.0))
@given(cases(SUM_SQUARES, max_dim=300, dtypes=FLOATS, device=DEVICE))
@example(case_at(SUM_SQUARES, R=1, C=1, T="f16"))
@example(case_at(SUM_SQUARES, R=2, C=255, T="bf16"))
def test_sum_squares_accumulates_in_f32(case) -> None:
    assert_agree(SUM_SQUARES, case)


@settings(max_examples=examples(1.0))
@given(cases(INT_ROW_SUMS, max_dim=300, dtypes={"T": ("i32", "i64")}, device=DEVICE))
@example(case_at(INT_ROW_SUMS, R=1, C=1, T="i32"))
@example(case_at(INT_ROW_SUMS, R=4, C=256, T="i64"))
def test_integer_row_sums_are_exact(case) -> None:
    result = assert_agree(INT_ROW_SUMS, case)
    assert all(e.tolerance.exact for e in result.outputs) and not result.grads
