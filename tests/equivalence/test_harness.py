"""`linnet.testing` itself: tolerances, the comparison of tensors, the specs read from the
where clauses, the strategies, inputs and shrinking. None of this needs kernels to run."""

from __future__ import annotations

import math
import random

import pytest
import torch
from hypothesis import given, settings

from linnet.fuzz import (Tolerance, compare_kernel_and_body, compare_outputs, draw_values,
                        kernel_ops, make_inputs, shrink, target_spec, tolerance_for)
from linnet.fuzz.harness import ProgramError, compiled
from linnet.testing.strategies import cases, generic_values

from kernel_cases import DEVICE, HERE, example

# ops that live in another op's example
EXAMPLE_OF = {"matmul_bf16": "matmul", "matmul_bt": "matmul", "attention_causal": "attention",
              "attention_bf16": "attention", "attention_causal_bf16": "attention",
              "layer_norm_bf16": "layer_norm", "layer_norm_backward": "layer_norm"}
OPS = ["softmax", "matmul", "matmul_bf16", "matmul_bt", "column_stats", "row_scan", "row_product",
       "layer_norm", "layer_norm_bf16", "layer_norm_backward", "attention",
       "attention_causal", "attention_bf16", "attention_causal_bf16", "relu"]


# ---------------------------------------------------------------- tolerances

def test_tolerances_by_dtype_and_numerics() -> None:
    assert tolerance_for("f32") == Tolerance(1e-5, 1e-5)
    assert tolerance_for("f32", "fast").rtol == pytest.approx(1e-2)
    assert tolerance_for("f16").rtol == pytest.approx(1e-2)
    assert tolerance_for("bf16", "equivalent").rtol == pytest.approx(2e-2)
    for dtype in ("i32", "i64", "u8", "bool"):
        assert tolerance_for(dtype).exact


def test_tolerance_grows_with_the_reduction_length() -> None:
    assert tolerance_for("f32", reduction_length=16) == tolerance_for("f32")
    assert tolerance_for("f32", reduction_length=1024).rtol == pytest.approx(8e-5)


# ---------------------------------------------------------------- comparing tensors

def test_equal_tensors_pass_and_a_one_percent_error_fails() -> None:
    x = torch.randn(4, 5)
    assert compare_outputs("y", x, x.clone(), tolerance_for("f32")).ok
    err = compare_outputs("y", x, x * 1.01, tolerance_for("f32"))
    assert not err.ok and err.max_rel == pytest.approx(0.01, rel=1e-3) and err.ratio > 100


def test_absolute_tolerance_is_relative_to_the_output_scale() -> None:
    body = torch.tensor([1000.0, 0.0])
    assert compare_outputs("y", body, torch.tensor([1000.0, 5e-3]), tolerance_for("f32")).ok
    assert not compare_outputs("y", body, torch.tensor([1000.0, 5e-2]),
                               tolerance_for("f32")).ok
    tiny = torch.tensor([1e-20, 2e-20])
    assert not compare_outputs("y", tiny, tiny * 1.5, tolerance_for("f32")).ok


def test_nan_and_infinity_positions_must_match() -> None:
    body = torch.tensor([float("nan"), float("inf"), 1.0])
    assert compare_outputs("y", body, body.clone(), tolerance_for("f32")).ok
    other = torch.tensor([float("nan"), -float("inf"), 1.0])
    err = compare_outputs("y", body, other, tolerance_for("f32"))
    assert not err.ok and "infinity" in err.problem


def test_integers_are_exact_and_shapes_and_dtypes_must_match() -> None:
    a = torch.arange(6, dtype=torch.int32)
    assert compare_outputs("y", a, a.clone(), tolerance_for("i32")).ok
    b = a.clone()
    b[2] += 1
    assert "1 of 6 elements differ" in compare_outputs("y", a, b, tolerance_for("i32")).problem
    assert not compare_outputs("y", a, a[:5], tolerance_for("i32")).ok
    assert not compare_outputs("y", a, a.to(torch.int64), tolerance_for("i32")).ok
    flags = torch.tensor([True, False])
    assert not compare_outputs("y", flags, ~flags, tolerance_for("bool")).ok


# ---------------------------------------------------------------- specs

def test_every_example_op_with_a_kernel_is_found() -> None:
    found = {op for name in OPS for op in kernel_ops(example(EXAMPLE_OF.get(name, name)))}
    assert found == set(OPS)


def test_kernel_where_is_written_in_the_op_generics() -> None:
    spec = target_spec(example("softmax"), "softmax")
    assert spec.kernel == "row_softmax"
    assert spec.kernel_args["B"].as_int() == 1024
    assert spec.satisfies({"R": 2, "C": 1024}) and not spec.satisfies({"R": 2, "C": 1025})
    assert spec.allows({"R": 2, "C": 1025})
    attention = target_spec(example("attention"), "attention")
    assert attention.satisfies({"B": 1, "H": 1, "L": 1, "S": 1, "D": 64})
    assert attention.satisfies({"B": 1, "H": 1, "L": 1, "S": 1, "D": 16})
    for d in (8, 48, 65, 256):  # the head tile is the whole head: 16, 32, 64 or 128 wide
        assert not attention.satisfies({"B": 1, "H": 1, "L": 1, "S": 1, "D": d})


def test_candidates_cover_ragged_edges_of_the_tiles() -> None:
    spec = target_spec(example("matmul"), "matmul")
    assert {1, 15, 16, 17, 31, 32, 33, 65, 127, 128, 129, 130} <= set(spec.candidates("M", 130))
    assert max(spec.candidates("M", 130)) == 130


def test_wrapper_entry_runs_an_op_with_a_tuple_result() -> None:
    spec = target_spec(example("column_stats"), "column_stats")
    assert spec.kind == "op" and spec.entry.startswith("verify_entry_")
    x = torch.randn(5, 3)
    run, text = compiled(spec, {"R": 5, "C": 3}, "exact")
    s, m = run(x)
    torch.testing.assert_close(s, x.sum(0))
    torch.testing.assert_close(m, x.amax(0))
    assert "triton" not in text


def test_entries_are_targets_too() -> None:
    spec = target_spec(example("matmul"), "matmul_any")
    assert spec.kind == "entry" and spec.kernel is None and spec.source == spec.text


def test_unknown_names_and_program_errors(tmp_path) -> None:
    with pytest.raises(KeyError):
        target_spec(example("softmax"), "nope")
    bad = tmp_path / "bad.linnet"
    bad.write_text("module bad\nfn f(x: f32) -> f32 {\n    return y\n}\n")
    with pytest.raises(ProgramError) as info:
        target_spec(str(bad), "f")
    assert "E1201" in str(info.value)


# ---------------------------------------------------------------- strategies and inputs

@pytest.mark.parametrize("op", OPS)
def test_drawn_sizes_satisfy_both_where_clauses(op: str) -> None:
    spec = target_spec(example(EXAMPLE_OF.get(op, op)), op)

    @settings(max_examples=25, derandomize=True)
    @given(generic_values(spec, max_dim=1100))
    def check(values):
        assert spec.allows(values) and spec.satisfies(values)
        shapes = spec.shapes(values)
        assert all(n >= 1 for shape, _ in shapes for n in shape)

    check()


def test_draw_values_without_hypothesis_respects_where() -> None:
    spec = target_spec(example("softmax"), "softmax")
    rng = random.Random(0)
    drawn = [draw_values(spec, rng, max_dim=2000) for _ in range(50)]
    assert all(v is not None and v["C"] <= 1024 for v in drawn)
    assert any(v["C"] in (1023, 1024) for v in drawn) or any(v["C"] == 1 for v in drawn)


def test_max_elements_bounds_the_inputs() -> None:
    spec = target_spec(example("matmul"), "matmul")

    @settings(max_examples=20, derandomize=True)
    @given(generic_values(spec, max_dim=130, max_elements=200))
    def check(values):
        assert all(math.prod(shape) <= 200 for shape, _ in spec.shapes(values))

    check()


def test_draw_values_bounds_the_inputs_too() -> None:
    """`linnet verify` draws four dims of attention up to 130 each: without a bound on the
    elements, one input could hold 130**3 * 128 of them."""
    spec = target_spec(example("attention"), "attention")
    rng = random.Random(1)
    drawn = [draw_values(spec, rng, max_dim=130, max_elements=2**16) for _ in range(30)]
    assert all(v is not None and spec.satisfies(v) for v in drawn)
    assert all(math.prod(shape) <= 2**16 for v in drawn for shape, _ in spec.shapes(v))
    assert any(v["L"] > 64 or v["S"] > 64 for v in drawn)  # still past one block


def test_inputs_have_the_declared_shapes_and_are_reproducible() -> None:
    spec = target_spec(example("layer_norm"), "layer_norm")
    values = {"R": 3, "C": 4}
    x, w, b, eps = make_inputs(spec, values, seed=5, device="cpu")
    assert x.shape == (3, 4) and w.shape == (4,) and b.shape == (4,)
    assert x.dtype == torch.float32 and isinstance(eps, float) and 0.05 <= eps <= 1.0
    again = make_inputs(spec, values, seed=5, device="cpu")
    assert torch.equal(x, again[0]) and eps == again[3]
    assert not torch.equal(x, make_inputs(spec, values, seed=6, device="cpu")[0])
    fixed = make_inputs(spec, values, seed=5, overrides={"eps": 1e-5}, device="cpu")
    assert fixed[3] == 1e-5


@settings(max_examples=5, derandomize=True)
@given(cases(target_spec(example("softmax"), "softmax"), max_dim=20, device=DEVICE))
def test_cases_carry_inputs_for_their_values(case) -> None:
    (x,) = case.inputs
    assert x.shape == (case.values["R"], case.values["C"])


# ---------------------------------------------------------------- comparing and shrinking

def test_compare_binds_generics_from_the_inputs() -> None:
    x = torch.randn(3, 6)
    result = compare_kernel_and_body(example("softmax"), "softmax", [x], device=DEVICE)
    assert result.ok and result.values == {"R": 3, "C": 6}
    assert [e.name for e in result.outputs] == ["result"]
    assert [e.name for e in result.grads] == ["dx"]


def test_compare_floats_scalars_take_no_gradient() -> None:
    spec = target_spec(example("attention"), "attention")
    inputs = make_inputs(spec, {"B": 1, "H": 2, "L": 2, "S": 3, "D": 16}, seed=0,
                         device=DEVICE)
    result = compare_kernel_and_body(spec.path, "attention", inputs, device=DEVICE)
    assert result.ok, str(result)
    assert [e.name for e in result.grads] == ["dq", "dk", "dv"]


def test_shrink_finds_the_smallest_failing_sizes() -> None:
    spec = target_spec(example("matmul"), "matmul")
    calls = []

    def fails(values):
        calls.append(values)
        return values["K"] > 20 and values["N"] >= 3

    best = shrink(spec, {"M": 90, "N": 70, "K": 100}, fails, budget=200)
    assert best == {"M": 1, "N": 3, "K": 21}
    assert all(spec.satisfies(v) for v in calls)


def test_wrong_softmax_file_checks() -> None:
    spec = target_spec(str(HERE / "wrong_softmax.linnet"), "softmax")
    assert spec.kernel == "row_softmax"
