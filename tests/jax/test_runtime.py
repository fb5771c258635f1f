"""The generated JAX module under `jax.jit` and `jax.grad`, and `linnet.jax`.

- Gradients of generated JAX (through `lax.fori_loop`, `lax.scan`, `lax.cond`, matrix
  products) equal torch autograd's on the generated PyTorch module of the same entry.
- An op's `grad` clause is its derivative in JAX too (a clause that differs from the true
  derivative shows it is used).
- `load_function` / `load_source` bind generics from shapes at each call, work under
  `jax.jit`, and report program errors as diagnostics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from linnet.jax import load_function, load_source  # noqa: E402
from linnet.pipeline import compile_source  # noqa: E402
from linnet.torch import LinnetError  # noqa: E402
from linnet.torch import load_function as torch_function  # noqa: E402
from programs import SCALED  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CASES = [("examples/softmax.linnet", "main"), ("examples/layer_norm.linnet", "main"),
         ("examples/attention.linnet", "main"), ("examples/matmul.linnet", "main"),
         ("tests/spec/valid/14_for_carry.linnet", "main"),
         ("tests/spec/valid/58_scan_with_carry.linnet", "main"),
         ("tests/spec/valid/51_grad_multi.linnet", "main")]


def inputs_for(fn, seed: int = 0) -> list[np.ndarray]:
    """Random inputs of the entry's parameter types (floats normal, bools alternating)."""
    rng = np.random.default_rng(seed)
    sig = fn._signature()
    out = []
    for p in sig.params:
        shape = tuple(d.as_int() for d in p.dims)
        if p.dtype == "bool":
            out.append(np.arange(int(np.prod(shape))).reshape(shape) % 2 == 0)
        else:
            out.append(rng.standard_normal(shape).astype(np.float32))
    return out


def float_outputs_sum(outputs, lib):
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    total = 0.0
    for k, y in enumerate(outputs):
        if "float" in str(y.dtype):
            total = total + lib.sum(y * (k + 1))
    return total


@pytest.mark.parametrize("path, entry", CASES, ids=lambda c: Path(c).stem if "/" in c else c)
def test_jax_gradients_match_torch_autograd(path, entry):
    jfn = load_function(str(ROOT / path), entry, numerics="exact")
    tfn = torch_function(str(ROOT / path), entry, numerics="exact")
    xs = inputs_for(jfn)
    floats = [k for k, x in enumerate(xs) if x.dtype == np.float32]

    def loss(*fl):
        args = list(xs)
        for k, v in zip(floats, fl):
            args[k] = v
        return float_outputs_sum(jfn(*args), jnp)

    jgrads = jax.jit(jax.grad(loss, argnums=tuple(range(len(floats)))))(
        *(jnp.asarray(xs[k]) for k in floats))
    targs = [torch.from_numpy(x).clone().requires_grad_(x.dtype == np.float32) for x in xs]
    float_outputs_sum(tfn(*targs), torch).backward()
    for g, k in zip(jgrads, floats):
        np.testing.assert_allclose(np.asarray(g), targs[k].grad.numpy(), rtol=2e-4, atol=2e-4)


def test_a_grad_clause_is_the_derivative():
    """The clause says 3 * dy; the body's true derivative is 2."""
    fn = load_source(SCALED, "main")
    x = jnp.arange(5.0, dtype=jnp.float32)
    np.testing.assert_array_equal(np.asarray(fn(x)), np.arange(5.0) * 2)
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda x: fn(x).sum())(x)), 3.0)
    text = compile_source(SCALED, entry="main", target="jax", bind={"N": 5}).text
    assert "@jax.custom_vjp" in text and "f1_op_grad(" in text


PICKED = """module picked

// w[ids[n]] for each n: the rows an i64 id picks (0 where no row has it), with a grad clause.
op pick<N: Dim, V: Dim>(ids: Tensor[N; i64], w: Tensor[V; f32]) -> Tensor[N; f32] {
    let rows = iota<i64>(V)
    let y[n] = sum[v] select(ids[n] == rows[v], w[v], 0.0)
    return y
} grad(y, dy) {
    let rows = iota<i64>(V)
    let dw[v] = sum[n] select(ids[n] == rows[v], dy[n], 0.0)
    return dw
}

entry main(ids: Tensor[3; i64], w: Tensor[4; f32]) -> Tensor[3; f32] {
    return pick(ids, w)
}
"""


def test_a_backward_runs_with_64_bit_types_outside_main():
    """jax.vjp pulls the cotangent back after `main` has returned, with the caller's x64
    off: the op's backward enters 64-bit types itself, so the id 2**32 + 1 is no row (in
    32 bits it would wrap to row 1)."""
    assert not jax.config.jax_enable_x64
    fn = load_source(PICKED, "main")
    ids = np.array([2, 2**32 + 1, 3], dtype=np.int64)
    w = jnp.asarray([1.0, 2.0, 3.0, 4.0], dtype=jnp.float32)
    y, vjp = jax.vjp(lambda w: fn(ids, w), w)
    np.testing.assert_array_equal(np.asarray(y), [3.0, 0.0, 4.0])
    (dw,) = vjp(jnp.asarray([1.0, 10.0, 100.0], dtype=jnp.float32))
    np.testing.assert_array_equal(np.asarray(dw), [0.0, 0.0, 1.0, 100.0])
    text = compile_source(PICKED, entry="main", target="jax").text
    assert "def f1_op_bwd(saved, dy):" in text
    assert text.split("def f1_op_bwd(saved, dy):")[1].count("with jax.enable_x64(True):") >= 1

def test_generics_are_bound_per_call_and_jit_works():
    fn = load_function(str(ROOT / "examples" / "softmax.linnet"), "softmax_any")
    for shape in ((2, 3), (4, 7)):
        x = jnp.asarray(np.random.default_rng(1).standard_normal(shape), dtype=jnp.float32)
        np.testing.assert_allclose(np.asarray(jax.jit(fn)(x)), np.asarray(jax.nn.softmax(x, 1)),
                                   rtol=1e-6, atol=1e-6)
    assert len(fn.cache) == 2


def test_program_errors_are_diagnostics():
    with pytest.raises(LinnetError, match="E[0-9]{4}"):
        load_source("module m\nentry main(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
                    "    return undefined_name\n}\n", "main")(jnp.ones(4))


def test_fast_numerics_leave_xla_its_default_precision():
    path = ROOT / "examples" / "matmul.linnet"
    exact = compile_source(path.read_text(), path=str(path), entry="main", target="jax").text
    fast = compile_source(path.read_text(), path=str(path), entry="main", target="jax",
                          numerics="fast").text
    assert "precision=lax.Precision.HIGHEST" in exact and "HIGHEST" not in fast.split("import")[1]
    assert "jnp.matmul(" in exact  # the e-graph's matrix product


def test_min_and_max_of_64_bit_integers_start_from_typed_extremes():
    """`jnp.min(..., initial=18446744073709551615)` overflowed jit's argument parsing (a bare
    Python int past i64): the extremes are typed literals now. Empty axes give them back."""
    text = """module m
entry main<N: Dim>(a: Tensor[N; u64], b: Tensor[N; i64]) -> (u64, u64, i64, i64) {
    let lo = min[i] a[i]
    let hi = max[i] a[i]
    return (lo, hi, min[i] b[i], max[i] b[i])
}
"""
    for n, want in ((3, (2, 2 ** 64 - 1, -7, 9)), (0, (2 ** 64 - 1, 0, 2 ** 63 - 1, -2 ** 63))):
        main = load_source(text, "main")
        a = np.array([2 ** 64 - 1, 2, 5][:n], dtype=np.uint64)
        b = np.array([-7, 9, 0][:n], dtype=np.int64)
        got = tuple(int(np.asarray(x)) for x in main(a, b))
        assert got == want, (n, got)


STEP_PAST = """module m
entry main(x: f32) -> (f32, f32) {
    var i = 0
    var a = x
    while i < 1 {
        a = a + 1.0
        i = i + 2
    }
    var j = 1
    var b = x
    while j <= 0 {
        b = b + 1.0
        j = j + 2
    }
    return (a, b)
}
"""


def test_while_loops_whose_step_passes_the_bound_keep_their_trips_under_jit():
    """XLA counts the trips of a `while` over constants and got these wrong (none for the
    first, one for the second) until the loop's first values went behind a barrier."""
    main = load_source(STEP_PAST, "main")  # called through jax.jit
    assert [float(y) for y in main(np.float32(3.0))] == [4.0, 3.0]
    text = compile_source(STEP_PAST, path="step_past.linnet", entry="main", target="jax").text
    assert text.count("lax.while_loop(") == text.count("lax.optimization_barrier((") == 2
