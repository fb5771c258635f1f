"""Every example kernel against its op's body: forward and gradient, on sizes drawn to satisfy
both the op's and the kernel's `where` clauses (ragged edges around the tile sizes, single
rows, sizes of 1), with random inputs.

Each op is called through a generic entry that `linnet.testing` adds to the example's text,
so the fixed-size entries of the examples do not limit the sizes tried. The body runs with
`numerics="exact"`, the kernel with `"equivalent"` (and `"fast"` for tile products). Until
the compiler runs kernels these comparisons are body against body; `test_kernels_chosen.py`
says whether kernels really ran.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings

from linnet.fuzz import target_spec
from linnet.testing.strategies import cases

from kernel_cases import DEVICE, assert_agree, case_at, example as example_path, examples

SOFTMAX = target_spec(example_path("softmax"), "softmax")
MATMUL = target_spec(example_path("matmul"), "matmul")
MATMUL_BF16 = target_spec(example_path("matmul"), "matmul_bf16")
COLUMN_STATS = target_spec(example_path("column_stats"), "column_stats")
ROW_SCAN = target_spec(example_path("row_scan"), "row_scan")
ROW_PRODUCT = target_spec(example_path("row_product"), "row_product")
LAYER_NORM = target_spec(example_path("layer_norm"), "layer_norm")
LAYER_NORM_BF16 = target_spec(example_path("layer_norm"), "layer_norm_bf16")
ATTENTION = target_spec(example_path("attention"), "attention")
ATTENTION_CAUSAL = target_spec(example_path("attention"), "attention_causal")
ATTENTION_BF16 = target_spec(example_path("attention"), "attention_bf16")
ATTENTION_CAUSAL_BF16 = target_spec(example_path("attention"), "attention_causal_bf16")
HEADS = {"B": (1, 2), "H": (1, 3)}  # batch entries and heads: programs, not tile shapes
RELU = target_spec(example_path("relu"), "relu")


@settings(max_examples=examples(1.0))
@given(cases(SOFTMAX, max_dim=130, styles=("normal", "uniform", "large"), device=DEVICE))
@example(case_at(SOFTMAX, R=1, C=1))
@example(case_at(SOFTMAX, "large", R=1, C=1024))  # the whole tile, no padding
@example(case_at(SOFTMAX, R=3, C=1023))
def test_softmax(case) -> None:
    assert_agree(SOFTMAX, case)


@settings(max_examples=examples(1.0))
@given(cases(MATMUL, max_dim=130, device=DEVICE))
@example(case_at(MATMUL, M=1, N=1, K=1))
@example(case_at(MATMUL, M=129, N=17, K=33))  # one past a tile in M and K
@example(case_at(MATMUL, M=128, N=128, K=32))  # exactly one tile
def test_matmul(case) -> None:
    assert_agree(MATMUL, case)


@settings(max_examples=examples(0.5))
@given(cases(MATMUL, max_dim=100, device=DEVICE))
@example(case_at(MATMUL, M=17, N=31, K=40))
def test_matmul_fast(case) -> None:
    """`fast` lets tile products use TF32: held to 1e-2."""
    assert_agree(MATMUL, case, numerics="fast")


@settings(max_examples=examples(0.5))
@given(cases(MATMUL_BF16, max_dim=100, device=DEVICE))
@example(case_at(MATMUL_BF16, M=129, N=17, K=65))  # one past a tile in M and K
def test_matmul_bf16(case) -> None:
    """bf16 tiles on the matrix units, f32 accumulation: held to the bf16 tolerance."""
    assert_agree(MATMUL_BF16, case)


@settings(max_examples=examples(1.0))
@given(cases(COLUMN_STATS, max_dim=130, device=DEVICE))
@example(case_at(COLUMN_STATS, R=1, C=1))
@example(case_at(COLUMN_STATS, R=33, C=65))  # ragged in both tile directions
@example(case_at(COLUMN_STATS, "uniform", R=64, C=1))
def test_column_stats(case) -> None:
    assert_agree(COLUMN_STATS, case)


@settings(max_examples=examples(1.0))
@given(cases(ROW_SCAN, max_dim=130, device=DEVICE))
@example(case_at(ROW_SCAN, R=1, C=1))
@example(case_at(ROW_SCAN, R=2, C=1024))
def test_row_scan(case) -> None:
    assert_agree(ROW_SCAN, case)


# Magnitudes in [0.5, 1.5] keep products of up to 256 factors well inside f32.
@settings(max_examples=examples(1.0))
@given(cases(ROW_PRODUCT, max_dim=130, styles=("unit", "positive"), device=DEVICE))
@example(case_at(ROW_PRODUCT, "unit", R=1, C=1))
@example(case_at(ROW_PRODUCT, "unit", R=3, C=256))  # the whole tile
@example(case_at(ROW_PRODUCT, "positive", R=5, C=255))
def test_row_product(case) -> None:
    assert_agree(ROW_PRODUCT, case)


@settings(max_examples=examples(1.0))
@given(cases(LAYER_NORM, max_dim=130, device=DEVICE))
@example(case_at(LAYER_NORM, R=1, C=1))  # a single column: zero variance
@example(case_at(LAYER_NORM, R=5, C=1))  # [4096, 1] tiles
@example(case_at(LAYER_NORM, R=2, C=1024))
@example(case_at(LAYER_NORM, R=3, C=1023))
@example(case_at(LAYER_NORM, R=33, C=100))  # RB = 32 rows a program: a second, of one row
@example(case_at(LAYER_NORM, R=7, C=768))  # RB = 4
@example(case_at(LAYER_NORM, R=5, C=1000))
def test_layer_norm(case) -> None:
    """Forward and gradient: the backward is the grad clause, whose ops launch their own
    kernels (`test_layer_norm.py` checks that they do)."""
    assert_agree(LAYER_NORM, case)


@settings(max_examples=examples(0.5))
@given(cases(LAYER_NORM_BF16, max_dim=130, device=DEVICE))
@example(case_at(LAYER_NORM_BF16, R=5, C=1))
@example(case_at(LAYER_NORM_BF16, R=33, C=100))
@example(case_at(LAYER_NORM_BF16, R=7, C=768))
@example(case_at(LAYER_NORM_BF16, R=3, C=1000))
def test_layer_norm_bf16(case) -> None:
    """The same kernels at T = bf16: statistics in f32, results rounded to bf16."""
    assert_agree(LAYER_NORM_BF16, case)


@settings(max_examples=examples(1.0))
@given(cases(ATTENTION, max_dim=130, ranges=HEADS, max_elements=40_000, device=DEVICE))
@example(case_at(ATTENTION, B=1, H=1, L=1, S=1, D=16))
@example(case_at(ATTENTION, B=2, H=3, L=65, S=70, D=64))  # ragged queries and keys
@example(case_at(ATTENTION, B=1, H=2, L=17, S=130, D=128))
def test_attention(case) -> None:
    assert_agree(ATTENTION, case)


@settings(max_examples=examples(0.5))
@given(cases(ATTENTION, max_dim=80, ranges=HEADS, max_elements=20_000, device=DEVICE))
def test_attention_fast(case) -> None:
    assert_agree(ATTENTION, case, numerics="fast")


# Causal: program p reads key blocks 0 .. p * BQ / BK unmasked, then the diagonal blocks;
# sizes around the query block (64) and key block (32) hit each loop's ends.
@settings(max_examples=examples(0.5))
@given(cases(ATTENTION_CAUSAL, max_dim=140, ranges=HEADS, max_elements=40_000, device=DEVICE))
@example(case_at(ATTENTION_CAUSAL, B=1, H=1, L=1, D=16))  # one program, one diagonal block
@example(case_at(ATTENTION_CAUSAL, B=1, H=2, L=64, D=32))
@example(case_at(ATTENTION_CAUSAL, B=2, H=1, L=97, D=64))  # the last diagonal block clamped
@example(case_at(ATTENTION_CAUSAL, B=1, H=1, L=130, D=128))
def test_attention_causal(case) -> None:
    assert_agree(ATTENTION_CAUSAL, case)


@settings(max_examples=examples(0.3))
@given(cases(ATTENTION_CAUSAL, max_dim=100, ranges=HEADS, max_elements=20_000, device=DEVICE))
def test_attention_causal_fast(case) -> None:
    assert_agree(ATTENTION_CAUSAL, case, numerics="fast")


# bf16 tiles on the matrix units (the weights rounded to bf16 before p v), f32 accumulation:
# held to the bf16 tolerance. The gradient is the body's in both runs.
@settings(max_examples=examples(0.3))
@given(cases(ATTENTION_BF16, max_dim=140, ranges=HEADS, max_elements=40_000, device=DEVICE))
@example(case_at(ATTENTION_BF16, B=1, H=2, L=129, S=65, D=64))  # one past each block
def test_attention_bf16(case) -> None:
    assert_agree(ATTENTION_BF16, case)


@settings(max_examples=examples(0.3))
@given(cases(ATTENTION_CAUSAL_BF16, max_dim=200, ranges=HEADS, max_elements=40_000,
             device=DEVICE))
@example(case_at(ATTENTION_CAUSAL_BF16, B=1, H=1, L=200, D=32))  # two query blocks of 128
def test_attention_causal_bf16(case) -> None:
    assert_agree(ATTENTION_CAUSAL_BF16, case)


# relu's backward is its `grad` clause under the kernel, autograd of the body under exact.
@settings(max_examples=examples(1.0))
@given(cases(RELU, ranges={"N": (1, 3000)}, styles=("normal", "uniform", "large"),
             device=DEVICE))
@example(case_at(RELU, N=1))
@example(case_at(RELU, N=1025))  # one past a block
@example(case_at(RELU, N=2048))
def test_relu(case) -> None:
    assert_agree(RELU, case)


EDGES = str(Path(__file__).with_name("pallas_edges.linnet"))


@pytest.mark.parametrize("op, values", [
    ("col_stats", {"R": 2, "C": 0}), ("row_sums", {"R": 1, "C": 0}),
    ("row_sums", {"R": 3, "C": 0}), ("row_maxima", {"R": 2, "C": 1})])
def test_triton_edges_that_pallas_needed_care_for(op, values) -> None:
    """The kernels of `pallas_edges.linnet` through Triton too: empty tensors on a grid with
    programs (Triton takes a tensor with no storage as a null pointer; every access to it is
    masked off) and a `while` stepping past its bound in one trip (Triton's own loop)."""
    spec = target_spec(EDGES, op)
    assert_agree(spec, case_at(spec, **values))
