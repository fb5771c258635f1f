"""Which kernels the generated JAX module launches through Pallas on a GPU.

Pallas's Triton lowering (JAX 0.11) cannot compile some kernels correctly; their ops run the
kernel only in Pallas's interpreter and their bodies on a GPU. Read off the chooser each op
gets: `_lp_kernel_ok()` (kernel on a GPU) or `_lp_kernel_ok(gpu=False)` (interpreter only).
"""

from __future__ import annotations

import re
from pathlib import Path

from linnet.pipeline import compile_source

ROOT = Path(__file__).resolve().parents[2]


def _choosers(path: str, entry: str = "main") -> dict[str, bool]:
    """Op name -> does its kernel run on a GPU, from the generated module's choosers."""
    text = compile_source(path=str(ROOT / path), target="jax", entry=entry).text
    found = re.findall(r"# op (\w+?)__\w*: its kernel .*\n\s+if _lp_kernel_ok\((.*?)\):", text)
    return {name: args == "" for name, args in found}


def test_integer_atomics_over_tiles_run_their_body_on_a_gpu() -> None:
    # JAX 0.11 adds an i32 tile as floats and fails an assertion on its max/min.
    chosen = _choosers("tests/spec/valid/46_kernel_atomics.linnet")
    assert chosen == {"column_reduce": False, "grand_total": True, "half_grand_total": True}


def test_float_atomics_over_tiles_run_on_a_gpu() -> None:
    assert _choosers("examples/column_stats.linnet") == {"column_stats": True}


def test_product_reductions_run_their_body_on_a_gpu() -> None:
    assert _choosers("examples/row_product.linnet") == {"row_product": False}


def test_loops_with_run_time_bounds_are_fori_loops_over_traced_bounds() -> None:
    """`for c in 0..r`, `for t in first..last` and `for c in r..R` of the spec's kernels:
    `lax.fori_loop` takes the traced bounds (JAX makes it a while loop), and every op keeps
    its kernel on a GPU."""
    path = "tests/spec/valid/96_kernel_runtime_loops.linnet"
    text = compile_source(path=str(ROOT / path), target="jax", entry="main").text
    loops = re.findall(r"lax\.fori_loop\((\w+), (\w+),", text)
    assert [(lo.isdigit(), hi.isdigit()) for lo, hi in loops] == [
        (True, False), (False, False), (True, False), (False, True)]
    assert _choosers(path) == {"strict_lower_sums": True, "band_sums": True,
                               "lower_doubled": True}


EDGES = "tests/equivalence/pallas_edges.linnet"


def _module(entry: str, bind: dict[str, int]) -> str:
    return compile_source(path=str(ROOT / EDGES), target="jax", entry=entry, bind=bind).text


def _function(text: str, name: str) -> str:
    """The source of the generated function `name`, up to the next top-level line."""
    return re.search(rf"^def {name}\(.*?(?=^\S)", text, re.S | re.M).group(0)


def test_empty_tensors_reach_a_kernel_as_one_element() -> None:
    """Pallas takes no ref of size 0 (its interpreter divides by the block's size, and a
    gather from an empty ref fails): an empty input is one zero, an empty result one
    element that the launcher drops; tensors with elements are passed flat as before."""
    text = _module("main", {"R": 2, "C": 0})
    launch = _function(text, r"f\d+_op_launch")
    assert "jax.ShapeDtypeStruct((0,)" not in launch and "jnp.full((0,)" not in launch
    assert "jnp.zeros((1,), dtype=jnp.float32)" in launch
    assert "jnp.reshape(outs[0][:0], (0,))" in launch and "outs[2][:0]" not in launch
    full = _module("main", {"R": 2, "C": 3})
    assert "jnp.zeros((1,)" not in full and "[:0]" not in full
    assert "jnp.reshape(v0, (-1,))" in full


def test_while_loops_start_behind_a_barrier_only_in_the_interpreter() -> None:
    """XLA miscounts the trips of a constant `while` whose step passes its bound, which
    Pallas's interpreter compiles through; the Triton lowering has no optimization_barrier
    (and no such trip counts), so the kernel calls `_lp_opaque`, a barrier only there."""
    text = _module("maxima", {"R": 2, "C": 1})
    kernel = _function(text, r"k\d+_kernel")
    assert re.search(r"lax\.while_loop\(\w+, \w+, _lp_opaque\(\(", kernel)
    assert "optimization_barrier" not in kernel
    opaque = _function(text, "_lp_opaque")
    assert "lax.optimization_barrier(values) if _LP_INTERPRET else values" in opaque


def test_half_division_and_math_in_kernels_are_computed_in_f32() -> None:
    """Pallas's Triton lowering has no bf16 division (found by `linnet fuzz` on the GPU):
    a kernel divides, and takes math functions of, f16/bf16 tiles in f32 and rounds once;
    the op's body (plain JAX) keeps the half dtype."""
    path = ROOT / "tests" / "fuzz" / "pallas_bf16_division.linnet"
    text = compile_source(path=str(path), target="jax", entry="main",
                          bind={"N0": 1, "N1": 8}).text
    kernel = _function(text, re.search(r"def (\w+_kernel)\(", text).group(1))
    divisions = [line for line in kernel.splitlines() if "= div(" in line]
    assert len(divisions) == 2
    for line in divisions:  # both operands widened, the f32 quotient rounded to bf16
        assert line.count("jnp.float32)") == 2 and "/" in line
        assert re.search(r"= lax\.convert_element_type\(\(.*\), jnp\.bfloat16\)  #", line)
    body = _function(text, re.search(r"def (\w+_op_body)\(", text).group(1))
    assert "float32" not in body
