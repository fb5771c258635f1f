"""emit-jax (linnet/emit/jax.py): tensor-core IR printed as a JAX module, its loops as lax
control flow, its comments naming the IR each line computes, and the module run under JAX."""

from __future__ import annotations

import numpy as np
import pytest

from linnet.emit.jax import emit_jax
from linnet.ir import tensor as ir
from linnet.pipeline import compile_source

SOURCE = """module m
entry main(x: Tensor[4, 8; f32], w: Tensor[8; f32]) -> Tensor[4; f32] {
    var acc = x
    for t in 0..3 {
        let step[i, j] = acc[i, j] * w[j]
        acc = step
    }
    let total[i] = sum[j] acc[i, j]
    return total
}
"""


def tensor_core() -> ir.Program:
    """The program as the printers get it: after the last middle pass."""
    return compile_source(SOURCE, entry="main", target="jax").stage("outline-deep-blocks")


def test_a_loop_is_a_fori_loop_and_each_line_names_its_binding():
    program = tensor_core()
    assert [type(b.expr).__name__ for b in program.func("main").body.binds] == [
        "Loop", "GetItem", "Prim"]
    text = emit_jax(program)
    assert "lax.fori_loop(0, 3, " in text
    assert "# step: f32[4, 8] = mul(acc_1, w)" in text
    assert "dtype=jnp.float32)  # total: f32[4] = reduce_sum(acc_3) {axes=(1,)}" in text
    assert "def main(*inputs):" in text and "with jax.enable_x64(True):" in text


def test_the_module_computes_what_the_program_says():
    pytest.importorskip("jax")
    namespace: dict[str, object] = {}
    exec(compile(emit_jax(tensor_core()), "<emit-jax>", "exec"), namespace)
    x = np.arange(32, dtype=np.float32).reshape(4, 8) / 8
    w = np.linspace(0.5, 1.5, 8, dtype=np.float32)
    (total,) = namespace["main"](x, w)
    np.testing.assert_allclose(np.asarray(total), (x * w ** 3).sum(axis=1), rtol=1e-6)
