"""Integer division by zero (docs/language.md, "Integer arithmetic wraps").

A divisor known to be zero at compile time is E2130, also when it is a cast, a fill or a
`select` with a constant condition, elementwise and in index notation. A divisor that is
zero only at run time gives 0, for `/` and `%`, on every target: the generated PyTorch
module and the interpreter, JAX (and Pallas kernels, through the same table), ONNX,
StableHLO, Triton kernels (tests/emit/test_triton.py) and the NumPy oracle.
"""

from __future__ import annotations

import pytest
import torch

from linnet.fuzz.backends import as_numpy, compile_entry, loader
from linnet.fuzz.oracle import evaluate_source
from programs import diagnostics_of

# ------------------------------------------------------------- compile time

@pytest.mark.parametrize("divisor", [
    "cast<i32>(0)", "cast<i32>(0.0)", "fill<i32>([4], 0)", "select(true, 0, 1)",
    "select(false, a, cast<i32>(0))", "zeros", "cast<i32>(fill<i64>([4], 0))",
])
@pytest.mark.parametrize("op", ["/", "%"])
def test_a_constant_zero_divisor_is_e2130(tmp_path, divisor, op):
    text = ("module m\n\nentry main(a: Tensor[4; i32]) -> Tensor[4; i32] {\n"
            "    let zeros = fill<i32>([4], 0)\n"
            f"    let q = a {op} {divisor}\n    return a\n}}\n")
    assert diagnostics_of(tmp_path, text) == [("E2130", divisor)]


@pytest.mark.parametrize("divisor", ["zeros[i]", "fill<i32>([4], 0)[i]", "z"])
def test_a_constant_zero_divisor_in_index_notation_is_e2130(tmp_path, divisor):
    text = ("module m\n\nentry main(a: Tensor[4; i32]) -> Tensor[4; i32] {\n"
            "    let zeros = fill<i32>([4], 0)\n    let z = cast<i32>(0)\n"
            f"    let q[i] = a[i] % {divisor}\n    return q\n}}\n")
    assert diagnostics_of(tmp_path, text) == [("E2130", divisor)]


@pytest.mark.parametrize("divisor", [
    "select(c, 0, 1)", "select(false, 0, 1)", "fill<i32>([4], 2)", "cast<i32>(1)",
    "cast<i32>(fill<f32>([4], 0.5))",
])
def test_other_divisors_check(tmp_path, divisor):
    text = ("module m\n\nentry main(a: Tensor[4; i32], c: bool) -> Tensor[4; i32] {\n"
            f"    return a / {divisor}\n}}\n")
    assert diagnostics_of(tmp_path, text) == []


# ------------------------------------------------------------------ run time

DIVIDE = """module dz

entry main(a: Tensor[4; i32], b: Tensor[4; i32], c: Tensor[4; u8], d: Tensor[4; u8],
           e: Tensor[4; i64], f: Tensor[4; i64], g: Tensor[4; u64], h: Tensor[4; u64])
    -> (Tensor[4; i32], Tensor[4; i32], Tensor[4; u8], Tensor[4; u8],
        Tensor[4; i64], Tensor[4; i64], Tensor[4; u64], Tensor[4; u64]) {
    return (a / b, a % b, c / d, c % d, e / f, e % f, g / h, g % h)
}
"""
_A, _B = [7, -7, 5, -2**31], [0, 2, 0, -1]
_C, _D = [7, 9, 5, 255], [0, 2, 0, 0]
INPUTS = (torch.tensor(_A, dtype=torch.int32), torch.tensor(_B, dtype=torch.int32),
          torch.tensor(_C, dtype=torch.uint8), torch.tensor(_D, dtype=torch.uint8),
          torch.tensor(_A), torch.tensor(_B),
          torch.tensor(_A).to(torch.uint64), torch.tensor(_B).to(torch.uint64))
U64 = [x % 2**64 for x in _A]
EXPECTED = [[0, -3, 0, -2**31], [0, -1, 0, 0], [0, 4, 0, 0], [0, 1, 0, 0],
            [0, -3, 0, 2**31], [0, -1, 0, 0],
            [0, U64[1] // 2, 0, 0], [0, 1, 0, U64[3]]]


@pytest.mark.parametrize("target", ["interpreter", "torch", "jax", "onnx", "stablehlo"])
def test_a_zero_divisor_at_run_time_gives_zero_on_every_target(target):
    compiled = compile_entry(DIVIDE, "dz.linnet", "main", {}, target)
    out = loader(target)(compiled, "main")(*INPUTS)
    assert [as_numpy(x).tolist() for x in out] == EXPECTED


def test_the_oracle_gives_zero_for_a_zero_divisor():
    out = evaluate_source(DIVIDE, "main", {}, [x.numpy() for x in INPUTS])
    assert [x.tolist() for x in out] == EXPECTED


KERNEL = """module kd

pub kernel divide_blocks<N: Dim, B: Dim>(a: Tensor[N; i32], b: Tensor[N; i32]) -> (q: Tensor[N; i32], r: Tensor[N; i32]) grid((N + B - 1) / B)
where B >= 1 {
    let offs = program_id(0) * B + iota<i32>(B)
    let mask = offs < N
    let x = load(a[offs], mask, 0)
    let y = load(b[offs], mask, 1)
    store(q[offs], x / y, mask)
    store(r[offs], x % y, mask)
}

pub op divide<N: Dim>(a: Tensor[N; i32], b: Tensor[N; i32]) -> (Tensor[N; i32], Tensor[N; i32]) kernel divide_blocks<N, 16> {
    return (a / b, a % b)
}

entry main(a: Tensor[8; i32], b: Tensor[8; i32]) -> (Tensor[8; i32], Tensor[8; i32]) {
    return divide(a, b)
}
"""


@pytest.mark.parametrize("target, guards", [
    ("jax", ["jnp.where(v6 == 0, 0, lax.div(v5, jnp.where(v6 == 0, jnp.ones_like(v6), v6)))",
             "lax.rem(v5, jnp.where(v6 == 0, jnp.ones_like(v6), v6))"]),   # Pallas kernel
    ("torch", ["_lt_sdiv(", "_lt_smod(", "z = b == 0"]),                      # Triton kernel
])
def test_kernels_guard_a_zero_divisor(target, guards):
    text = compile_entry(KERNEL, "kd.linnet", "main", {}, target, numerics="equivalent")
    kernel = text[text.index("_kernel("):text.index("def ", text.index("_kernel(") + 1)]
    for guard in guards[:2]:
        assert guard in kernel
    assert all(guard in text for guard in guards)
