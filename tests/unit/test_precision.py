"""The precision a result carries: the coarsest float its program computes with."""

from __future__ import annotations

import numpy as np

from linnet.testing.oracle import compare
from linnet.testing.precision import carried_dtype, program_floats

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
