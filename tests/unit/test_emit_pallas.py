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
