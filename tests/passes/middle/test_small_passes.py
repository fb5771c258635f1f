"""The small tensor-core passes: hoist-loop-invariants, fold-proved-masks,
lower-kernel-einsums. Each is checked on the IR it leaves and on the values the
generated module computes (kernels in the interpreter, against the op's body)."""

from __future__ import annotations

import gc

import numpy as np

import pytest
import torch

from linnet.ir import tensor as ir
from linnet.ir.walk import all_binds
from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # else tests/conftest.py interprets


def run(module, *xs):
    """The module's results for inputs on the test device, back on the CPU."""
    return tuple(y.cpu() for y in module.main(*(x.to(DEVICE) for x in xs)))


@pytest.fixture(autouse=True)
def _free_egraphs():
    yield
    gc.collect()


def prims(f: ir.Func, op: str) -> list[ir.Prim]:
    return [b.expr for b in all_binds(f.body) if isinstance(b.expr, ir.Prim) and b.expr.op == op]


def func(program: ir.Program, kind: str) -> ir.Func:
    return next(f for f in program.funcs if f.kind == kind)


# ------------------------------------------------------------ hoist-loop-invariants

LOOP = """module m
entry main(x: Tensor[4, 8; f32], w: Tensor[8; f32]) -> Tensor[4, 8; f32] {
    var acc = x
    for t in 0..3 {
        let scaled[i, j] = x[i, j] * w[j] * 2.0
        let step[i, j] = acc[i, j] + scaled[i, j]
        acc = step
    }
    return acc
}
"""


def test_invariant_work_leaves_the_loop():
    before = compile_source(LOOP, entry="main").stage("fold-constants")
    after = compile_source(LOOP, entry="main").stage("hoist-loop-invariants")

    def inside(program):
        loop = next(b.expr for b in func(program, "entry").body.binds
                    if isinstance(b.expr, ir.Loop))
        return [b.expr.op for b in loop.body.binds if isinstance(b.expr, ir.Prim)]

    assert inside(before).count("mul") == 2
    assert inside(after) == ["add"]  # only the carried sum stays


def test_hoisted_loop_computes_the_same():
    module = import_generated(compile_source(LOOP, entry="main").text, "hoisted")
    x, w = torch.randn(4, 8), torch.randn(8)
    (y,) = run(module, x, w)
    torch.testing.assert_close(y, x + 3 * (x * w * 2.0))


# ------------------------------------------------------------ fold-proved-masks

MASKS = """module m
pub kernel k<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(1) where B >= 1 {
    let offs = iota<i32>(B)
    let never = (offs >= N) & (offs < N)
    let v = load(x[offs], never, 7.0)
    let w = load(x[offs], offs < N, 0.0)
    store(y[offs], select(offs < N, w * 2.0, v), offs < N)
    store(y[offs], v, never)
}
pub op twice<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel k<N, 16> {
    return x * 2.0
}
entry main(x: Tensor[16; f32]) -> Tensor[16; f32] {
    return twice(x)
}
"""


def test_proved_masks_fold_selects_and_remove_accesses():
    compiled = compile_source(MASKS, entry="main")
    before = func(compiled.stage("egraph-tiles"), "kernel")
    after = func(compiled.stage("fold-proved-masks"), "kernel")
    assert len(prims(before, "select")) == 1 and len(prims(before, "store")) == 2
    assert prims(after, "select") == []
    assert len(prims(after, "store")) == 1 and len(prims(after, "load")) == 1
    module = import_generated(compiled.text, "folded_masks")
    x = torch.randn(16)
    (y,) = run(module, x)
    assert module._LT_TRITON and (module._LT_INTERPRET or DEVICE == "cuda")
    torch.testing.assert_close(y, x * 2.0)


# ------------------------------------------------------------ lower-kernel-einsums

SMALL_PRODUCT = """module m
pub kernel k<M: Dim, N: Dim, K: Dim>(a: Tensor[M, K; {T}], b: Tensor[K, N; {T}]) -> c: Tensor[M, N; {T}] grid(1) {{
    let rows = iota<i32>(M)
    let cols = iota<i32>(N)
    let ks = iota<i32>(K)
    let a_tile = load(a[rows, ks])
    let b_tile = load(b[ks, cols])
    let p[i, j] = sum[k] a_tile[i, k] * b_tile[k, j] * a_tile[i, k]
    store(c[rows, cols], p)
}}
pub op f<M: Dim, N: Dim, K: Dim>(a: Tensor[M, K; {T}], b: Tensor[K, N; {T}]) -> Tensor[M, N; {T}] kernel k<M, N, K> {{
    let p[i, j] = sum[k] a[i, k] * b[k, j] * a[i, k]
    return p
}}
entry main(a: Tensor[8, 4; {T}], b: Tensor[4, 16; {T}]) -> Tensor[8, 16; {T}] {{
    return f(a, b)
}}
"""


@pytest.mark.parametrize("dtype", ["f32", "bf16", "i32"])
def test_kernel_contractions_become_products_and_sums(dtype):
    compiled = compile_source(SMALL_PRODUCT.format(T=dtype), entry="main")
    kernel = func(compiled.stage("lower-kernel-einsums"), "kernel")
    assert not [b for b in all_binds(kernel.body) if isinstance(b.expr, ir.Einsum)]
    (total,) = prims(kernel, "reduce_sum")
    assert total.type.dtype == ("f32" if dtype == "bf16" else dtype)  # half sums in f32
    op = next(f for f in compiled.stage("lower-kernel-einsums").funcs if f.kind == "op")
    assert [b for b in all_binds(op.body) if isinstance(b.expr, ir.Einsum)]  # bodies keep theirs
    torch_dtype = {"f32": torch.float32, "bf16": torch.bfloat16, "i32": torch.int32}[dtype]
    a = torch.randint(-3, 4, (8, 4)).to(torch_dtype)
    b = torch.randint(-3, 4, (4, 16)).to(torch_dtype)
    module = import_generated(compiled.text, f"small_product_{dtype}")
    (c,) = run(module, a, b)
    want = torch.einsum("ik,kj,ik->ij", a.double(), b.double(), a.double())
    torch.testing.assert_close(c.double(), want)  # small integers: exact in every dtype


# ------------------------------------------------------------ fast-math

SOFTMAX = "examples/softmax.linnet"


def test_fast_math_divides_through_reciprocals_only_under_fast():
    from pathlib import Path
    path = str(Path(__file__).resolve().parents[3] / SOFTMAX)
    for numerics, expect in (("equivalent", 0), ("fast", 1)):
        compiled = compile_source(path=path, entry="main", numerics=numerics)
        kernel = func(compiled.stage("fast-math"), "kernel")
        recips = [d for d in prims(kernel, "div") if d.type.shape == ()]
        assert len(recips) == expect
        assert len([d for d in prims(kernel, "div") if d.type.shape]) == 1 - expect
        op = next(f for f in compiled.stage("fast-math").funcs if f.kind == "op")
        assert prims(op, "div")  # the body keeps its division
    module = import_generated(compiled.text, "fast_softmax")
    x = torch.randn(64, 1000)
    (y,) = run(module, x)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------ drop-dead-carries

CARRIES = """module m
entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    var acc = x
    var count = x
    var unused = x
    for t in 0..3 {
        acc = acc + count
        count = count * 2.0
        unused = unused + acc
    }
    return acc
}
"""


def test_dead_carries_leave_the_loop():
    compiled = compile_source(CARRIES, entry="main")

    def carried(stage):
        loop = next(b.expr for b in func(compiled.stage(stage), "entry").body.binds
                    if isinstance(b.expr, ir.Loop))
        return [v.name for v in loop.carried]

    assert len(carried("dce")) == 3
    assert len(carried("drop-dead-carries")) == 2  # count feeds acc; unused feeds nothing
    module = import_generated(compiled.text, "carries")
    x = torch.randn(4)
    (y,) = run(module, x)
    torch.testing.assert_close(y, x + x + 2 * x + 4 * x)


# ------------------------------------------------------------ exact-division

def test_reciprocal_power_of_two_is_exact_and_normal_only():
    from linnet.passes.kernels.exact_division import reciprocal_power_of_two as recip
    assert recip(4096.0, "f32") == 2.0 ** -12
    assert recip(-0.5, "f32") == -2.0
    assert recip(768.0, "f32") is None and recip(0.0, "f32") is None
    assert recip(float("inf"), "f32") is None and recip(3.0, "f64") is None
    assert recip(2.0 ** 126, "f32") == 2.0 ** -126  # the smallest normal f32
    assert recip(2.0 ** 127, "f32") is None  # its reciprocal would be subnormal
    assert recip(2.0 ** -127, "f32") is None  # and its reciprocal is not finite
    assert recip(2.0 ** 15, "f16") is None and recip(2.0 ** 14, "f16") == 2.0 ** -14


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dividing_by_a_power_of_two_is_multiplying_by_its_reciprocal_bit_for_bit(dtype):
    from linnet.passes.kernels.exact_division import reciprocal_power_of_two as recip
    name = {np.float16: "f16", np.float32: "f32", np.float64: "f64"}[dtype]
    rng = np.random.default_rng(0)
    info = np.finfo(dtype)
    with np.errstate(over="ignore"):  # f16 overflows to inf from 1e5 up: also a case
        x = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-6, 6, 2000),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.tiny),
                             float(info.tiny) * 3, float(info.max)]]).astype(dtype)
    for k in (1, 3, 12, -5):
        d = dtype(2.0 ** k)
        r = dtype(recip(float(d), name))
        with np.errstate(all="ignore"):
            assert np.array_equal((x / d).view(np.uint8), (x * r).view(np.uint8))


def test_exact_division_rewrites_kernels_by_powers_of_two_only():
    from pathlib import Path
    path = str(Path(__file__).resolve().parents[3] / "examples/layer_norm.linnet")
    for width, divisions in ((4096, 0), (768, 0)):
        compiled = compile_source(path=path, entry="layer_norm_any", bind={"R": 8, "C": width})
        kernel = next(f for f in compiled.stage("exact-division").funcs if f.kind == "kernel")
        assert len(prims(kernel, "div")) == divisions
    body = """module m
pub kernel k<N: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(1) {
    let i = iota<i32>(N)
    store(y[i], load(x[i]) / 8.0 + load(x[i]) / 3.0)
}
pub op o<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel k<N> {
    let y[i] = x[i] / 8.0 + x[i] / 3.0
    return y
}
entry main(x: Tensor[16; f32]) -> Tensor[16; f32] { return o(x) }
"""
    compiled = compile_source(body, entry="main")
    stage = compiled.stage("exact-division")
    kernel = next(f for f in stage.funcs if f.kind == "kernel")
    assert [d.args[1].value for d in prims(kernel, "div")] == [3.0]
    assert [m.args[1].value for m in prims(kernel, "mul") if isinstance(m.args[1], ir.Lit)] \
        == [0.125]
    op = next(f for f in stage.funcs if f.kind == "op")
    assert len(prims(op, "div")) == 2  # bodies print as written
