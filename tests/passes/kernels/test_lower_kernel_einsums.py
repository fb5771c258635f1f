"""lower-kernel-einsums: contractions in kernels become broadcast products and sums."""

from __future__ import annotations

import pytest
import torch

from linnet.ir import tensor as ir
from linnet.ir.walk import all_binds
from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated

from pass_runs import func, prims, run
from egraph_frees import free_egraphs, older_objects_frozen  # noqa: F401 (autouse)


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
