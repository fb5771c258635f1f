"""The tile-products rules (`linnet/rules/tile_products.py`) and the pass `egraph-products`.

- Every rule preserves meaning: random terms over square matrices (products, transposes,
  sums, widened half values, math) evaluate in float64 to the same values after extraction.
- Each written form of a tile product becomes exactly one `tl.dot` (operands swapped, an
  operand transposed, a scalar factor, the product added into an accumulator on either
  side, bf16 tiles through casts) and computes the right values in the interpreter;
  smaller tiles stay broadcast sums; bodies print `torch.matmul`.
- `rules=` replaces the rule sets: without `tile-products` no dot is chosen, and a user's
  rule (`exp(log(x)) -> x` for nonnegative x) fires and shows in the dump.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from egglog import (EGraph, back_off, get_callable_args, get_callable_fn, get_literal_value,
                    rewrite, ruleset, run, unstable_combine_rulesets, vars_)
from hypothesis import given, settings
from hypothesis import strategies as st

from linnet.pipeline import compile_source
from linnet.rules import RULE_SETS, tile_products
from linnet.rules.terms import (Tile, dot, dot_acc, exp, log, nonnegative, plus, product, sqrt,
                                 trans, widen)
from linnet.torch.runtime import import_generated

from budget import scaled
from egraph_frees import free_egraphs, older_objects_frozen  # noqa: F401 (autouse)


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # else tests/conftest.py interprets


# ---------------------------------------------------------------- meaning

N = 3
SYMS = ("A", "B", "C")


def evaluate(term, env: dict[str, np.ndarray]) -> np.ndarray:
    fn, args = get_callable_fn(term), get_callable_args(term)
    if fn == Tile.sym:
        return env[get_literal_value(args[0])]
    if fn == widen:
        return evaluate(args[0], env)  # the symbols hold values exact in bf16
    vals = [evaluate(a, env) for a in args]
    ops = {trans: lambda x: x.T, product: lambda a, b: a @ b, dot: lambda a, b: a @ b,
           dot_acc: lambda a, b, c: c + a @ b, plus: lambda a, b: a + b,
           exp: np.exp, log: np.log, sqrt: np.sqrt}
    return ops[fn](*vals)


leaves = st.sampled_from(SYMS).map(Tile.sym)
tiles = st.recursive(leaves, lambda sub: st.one_of(
    sub.map(trans),
    sub.map(lambda x: widen(x, "bf16")),
    st.tuples(sub, sub).map(lambda p: product(*p)),
    st.tuples(sub, sub).map(lambda p: plus(*p)),
    sub.map(exp), sub.map(log), sub.map(sqrt)), max_leaves=6)
matrices = st.lists(st.integers(-64, 64), min_size=N * N, max_size=N * N).map(
    lambda xs: np.array(xs, dtype=np.float64).reshape(N, N) / 16)


def saturate(*terms, sets=RULE_SETS):
    eg = EGraph()
    for term in terms:
        eg.register(term)
    eg.run(run(unstable_combine_rulesets(*sets),
               scheduler=back_off(match_limit=1000, ban_length=5)) * 8)
    return eg


@settings(max_examples=scaled(25), deadline=None)
@given(tiles, st.tuples(matrices, matrices, matrices))
def test_tile_rules_preserve_meaning(term, values):
    out = saturate(term).extract(term)
    env = dict(zip(SYMS, values))
    with np.errstate(all="ignore"):
        want, got = evaluate(term, env), evaluate(out, env)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, equal_nan=True,
                               err_msg=f"{term} -> {out}")


def test_swapped_operands_need_no_transpose():
    a, b = Tile.sym("a"), Tile.sym("b")
    term = trans(product(trans(b), trans(a)))  # sum[k] b[k, j] * a[i, k], as translated
    assert str(saturate(term).extract(term)) == str(dot(a, b))


def test_half_products_and_accumulators():
    a, b, c = Tile.sym("a"), Tile.sym("b"), Tile.sym("c")
    term = plus(c, product(widen(a, "bf16"), widen(trans(b), "bf16")))
    assert str(saturate(term).extract(term)) == str(dot_acc(a, trans(b), c))


# ---------------------------------------------------------------- kernels

KERNEL = """module m
pub kernel mm<M: Dim, N: Dim, K: Dim>(a: Tensor[M, K; {T}], b: Tensor[{BSHAPE}; {T}]) -> c: Tensor[M, N; f32] grid(1) {{
    let rows = iota<i32>(M)
    let cols = iota<i32>(N)
    let ks = iota<i32>(K)
    let a_tile = load(a[rows, ks])
    let b_tile = load(b[{BIDX}])
    var acc = fill<f32>([M, N], 1.0)
    {BODY}
    store(c[rows, cols], acc)
}}
pub op mm_op<M: Dim, N: Dim, K: Dim>(a: Tensor[M, K; {T}], b: Tensor[{BSHAPE}; {T}]) -> Tensor[M, N; f32] kernel mm<M, N, K> {{
    let c[i, j] = 1.0 + sum<f32>[k] cast<f32>(a[i, k]) * cast<f32>(b[{BIDX2}]) * {SCALE}
    return c
}}
entry main(a: Tensor[{MM}, {KK}; {T}], b: Tensor[{BMAIN}; {T}]) -> Tensor[{MM}, {NN}; f32] {{
    return mm_op(a, b)
}}
"""

FORMS = {  # name: (product statement(s), b stored transposed?, scale)
    "plain": ("let p[i, j] = sum<f32>[k] cast<f32>(a_tile[i, k]) * cast<f32>(b_tile[k, j])\n"
              "    acc = acc + p", False, "1.0"),
    "swapped": ("let p[i, j] = sum<f32>[k] cast<f32>(b_tile[k, j]) * cast<f32>(a_tile[i, k])\n"
                "    acc = p + acc", False, "1.0"),
    "b_transposed": ("let p[i, j] = sum<f32>[k] cast<f32>(a_tile[i, k]) * "
                     "cast<f32>(b_tile[j, k])\n    acc = acc + p", True, "1.0"),
    "scaled": ("let p[i, j] = sum<f32>[k] 0.5 * cast<f32>(a_tile[i, k]) * "
               "cast<f32>(b_tile[k, j])\n    acc = acc + p", False, "0.5"),
}


def kernel_source(form: str, dtype: str = "f32", m: int = 32, n: int = 16, k: int = 32) -> str:
    body, b_t, scale = FORMS[form]
    return KERNEL.format(T=dtype, BODY=body, SCALE=scale, MM=m, NN=n, KK=k,
                         BSHAPE="N, K" if b_t else "K, N", BIDX="cols, ks" if b_t else "ks, cols",
                         BIDX2="j, k" if b_t else "k, j", BMAIN=f"{n}, {k}" if b_t else f"{k}, {n}")


def kernel_of(text: str) -> str:
    """The one @triton.jit function of a generated module."""
    return text.split("@triton.jit\n")[1].split("\ndef ")[0]


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_written_form_is_one_dot(form, dtype, tmp_path):
    compiled = compile_source(kernel_source(form, dtype), entry="main")
    text = compiled.text
    kernel = kernel_of(text)
    assert kernel.count("tl.dot(") == 1 and "tl.sum(" not in kernel, kernel
    assert "tl.trans(" in kernel if form == "b_transposed" else "tl.trans(" not in kernel
    assert ('input_precision="ieee"' in kernel) == (dtype == "f32")
    torch.manual_seed(0)
    torch_dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]
    _, b_t, scale = FORMS[form]
    a = torch.randn(32, 32).to(torch_dtype)
    b = torch.randn(*((16, 32) if b_t else (32, 16))).to(torch_dtype)
    module = import_generated(text, f"form_{form}_{dtype}")
    (c,) = module.main(a.to(DEVICE), b.to(DEVICE))
    c = c.cpu()
    bb = b.double().T if b_t else b.double()
    want = 1.0 + float(scale) * (a.double() @ bb)
    torch.testing.assert_close(c.double(), want, rtol=1e-5, atol=1e-4)
    assert module._LT_TRITON and (module._LT_INTERPRET or DEVICE == "cuda")  # a kernel ran


def test_small_tiles_stay_broadcast_sums():
    text = compile_source(kernel_source("plain", m=8, n=16, k=32), entry="main").text
    kernel = kernel_of(text)
    assert "tl.dot(" not in kernel and "tl.sum(" in kernel


def test_fast_numerics_use_tf32():
    text = compile_source(kernel_source("plain"), entry="main", numerics="fast").text
    assert 'input_precision="tf32"' in text and "ieee" not in text


def test_bodies_print_matrix_products():
    text = compile_source(kernel_source("swapped"), entry="main", numerics="exact").text
    assert "torch.matmul(" in text and "einsum" not in text and "triton" not in text


def test_the_dump_shows_the_rules_that_fired():
    compiled = compile_source(kernel_source("swapped"), entry="main")
    report = compiled.stage("egraph-products").state.egraph_report
    assert "// egraph-products mm__M32_N16_K32" in report
    assert "[tile_products] rewrite(product(a, b)).to(dot(a, b))" in report
    assert "dot_acc(" in report


# ---------------------------------------------------------------- rules=

def test_without_tile_products_no_dot_is_chosen():
    sets = [s for s in RULE_SETS if s is not tile_products.RULE_SET]
    text = compile_source(kernel_source("plain"), entry="main", rules=sets).text
    kernel = kernel_of(text)
    assert "tl.dot(" not in kernel and "tl.sum(" in kernel


EXP_LOG = """module m
entry main(x: Tensor[4, 8; f32]) -> Tensor[4, 8; f32] {
    let e[i, j] = exp(x[i, j])
    let back[i, j] = exp(log(e[i, j]))
    return back
}
"""


def test_a_users_rule_fires_and_shows_in_the_dump():
    (x,) = vars_("x", Tile)
    mine = ruleset(rewrite(exp(log(x))).to(x, nonnegative(x)), name="mine")
    plain = compile_source(EXP_LOG, entry="main").stage("egraph-products")
    assert "log(" in _ir(plain)
    compiled = compile_source(EXP_LOG, entry="main", rules=[*RULE_SETS, mine])
    stage = compiled.stage("egraph-products")
    assert "log(" not in _ir(stage) and _ir(stage).count("exp(") == 1
    assert "rewrite(exp(log(x))).to(x, nonnegative(x))" in stage.state.egraph_report
    module = import_generated(compiled.text, "exp_log")
    x = torch.randn(4, 8)
    (y,) = module.main(x)
    torch.testing.assert_close(y, torch.exp(x))


def _ir(program) -> str:
    from linnet.ir.printer import print_program
    return print_program(program).split("// egraph")[0]
