"""The precision a result carries: the coarsest float its program computes with."""

from __future__ import annotations

import numpy as np

from linnet.fuzz.oracle import compare
from linnet.fuzz.precision import carried_dtype, program_floats

TEXT = """module m

entry main<N: Dim, F: Float>(x: Tensor[N; f32], y: Tensor[N; F]) -> f64 {
    return cast<f64>(sum[i] x[i])
}
"""


def test_the_floats_of_a_program_come_from_its_text_generics_and_inputs() -> None:
    assert program_floats(TEXT) == {"f32", "f64"}
    assert program_floats(TEXT, {"N": 4, "F": "bf16"}) == {"bf16", "f32", "f64"}
    assert program_floats("module m", dtypes=["f16", "i32"]) == {"f16"}
    assert program_floats("let f32x = 1  // not a dtype: f32x, xf16") == frozenset()


def test_a_result_is_held_to_the_coarsest_float_it_was_computed_with() -> None:
    assert carried_dtype("f64", {"f32", "f64"}) == "f32"
    assert carried_dtype("f32", {"bf16", "f16"}) == "bf16"
    assert carried_dtype("f16", {"f32"}) == "f16"
    assert carried_dtype("f64", set()) == "f64"
    assert carried_dtype("i32", {"f16"}) == "i32" and carried_dtype("bool", {"f32"}) == "bool"


def test_an_f64_sum_of_f32_values_one_f32_ulp_apart_is_within_the_carried_tolerance() -> None:
    expected = np.float64(np.float32(31.231409))
    actual = np.float64(np.nextafter(np.float32(expected), np.float32(0)))
    assert compare(expected, actual, "f64") is not None
    assert compare(expected, actual, carried_dtype("f64", program_floats(TEXT))) is None


def test_an_output_of_rounding_noise_is_compared_at_the_scale_of_its_inputs() -> None:
    noise, other = np.array([-1.1e-16, 0.0]), np.array([0.0, -2.2e-16])
    assert compare(noise, other, "f64") is not None
    assert compare(noise, other, "f64", scale_floor=1.0) is None
    assert compare(noise, np.array([1e-9, 0.0]), "f64", scale_floor=1.0) is not None


def test_slack_adds_the_oracles_own_rounding_error_per_element() -> None:
    expected, actual = np.array([0.2158, 0.5]), np.array([0.1855, 0.5])
    assert compare(expected, actual, "bf16") is not None
    slack = 2 * np.abs(expected - np.array([0.1932, 0.5]))
    assert compare(expected, actual, "bf16", slack=slack) is None
    assert compare(expected, np.array([0.2158, 0.45]), "bf16", slack=slack) is not None


def test_given_tolerances_replace_the_dtypes() -> None:
    expected, actual = np.array([1.0, 2.0]), np.array([1.0, 2.001])
    assert compare(expected, actual, "f32") is not None
    assert compare(expected, actual, "f32", tolerances=(1e-3, 0.0)) is None
    assert compare(expected, actual, "f32", tolerances=(1e-4, 1e-4)) is not None


def test_the_cross_check_holds_targets_to_the_kernel_tolerances_at_scale_one() -> None:
    from linnet.fuzz.crosscheck import result_difference
    want = np.array([1e-3, 0.0], dtype=np.float32)
    assert result_difference(want + np.float32(1e-7), want, "f32") is None  # 1e-7 of scale 1
    assert result_difference(want + np.float32(1e-2), want, "f32") is not None
    assert result_difference(np.array([1, 2]), np.array([1, 3]), "i32") is not None
    assert "shape" in result_difference(np.zeros(3), np.zeros(2), "f32")
