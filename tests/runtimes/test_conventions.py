"""The runtimes behave as torch and JAX users expect.

- `linnet.jax` and generated JAX modules never change the process's `jax_enable_x64`:
  64-bit types are on inside `main` only, and 64-bit results still come back.
- Both runtimes apply one rule to an input's dtype: an input with a dtype of its own must
  have the parameter's (a clear error, never a conversion); a number or a list takes it.
- `torch.func.grad`, `torch.func.vmap` and `torch.compile` work over loaded functions,
  generated (autograd Functions with `setup_context`) and interpreted alike.
- `ran()` says whether each call of an op ran its kernel or its body.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.func

from linnet.errors import InputError
from linnet.pipeline import compile_source
from linnet.torch import import_generated
from linnet.torch import load_function as torch_function

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from linnet.jax import load_function as jax_function  # noqa: E402
from linnet.jax import load_source  # noqa: E402
from programs import SCALED  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = str(ROOT / "examples" / "softmax.linnet")
FOR_CARRY = str(ROOT / "tests" / "spec" / "valid" / "14_for_carry.linnet")
SCALED_TIMES_X = SCALED.replace("return scaled(x)\n", "return scaled(x) * x\n")
WIDE = """module m
entry main(x: Tensor[3; f64], n: i64) -> (Tensor[3; f64], i64) {
    return (x * 2.0, n * 4294967296)
}
"""


def x64() -> bool:
    return bool(jax.config.jax_enable_x64)


# ------------------------------------------------------------------ JAX's x64 setting

def test_calling_a_loaded_jax_function_leaves_x64_as_it_was():
    with jax.enable_x64(False):
        fn = jax_function(FOR_CARRY, "main")
        x, xs = np.arange(4, dtype=np.float32), np.ones((6, 4), np.float32)
        steps = fn(x, xs)[-1]
        assert not x64()
        assert steps.dtype == np.int64 and int(steps) == 6  # a 64-bit result still
        assert int(jax.jit(fn)(x, xs)[-1]) == 6 and not x64()
        g = jax.grad(lambda x: fn(x, xs)[1].sum())(x)
        np.testing.assert_allclose(np.asarray(g), [0.0, 4.0, 32.0, 108.0])  # 4 x^3
        assert not x64()
    before = x64()
    fn = jax_function(FOR_CARRY, "main")
    fn(np.arange(4, dtype=np.float32), np.ones((6, 4), np.float32))
    assert x64() == before


def test_importing_and_running_a_generated_jax_module_leaves_x64_as_it_was(tmp_path):
    source = compile_source(WIDE, path=str(tmp_path / "wide.linnet"), target="jax").text
    assert "jax.config" not in source and "with jax.enable_x64(True):" in source
    with jax.enable_x64(False):
        module = import_generated(source, "wide", "jax")
        assert not x64()
        y, n = module.main(np.ones(3), 3)
        assert (y.dtype, n.dtype, int(n)) == (np.float64, np.int64, 3 * 4294967296)
        with pytest.raises(TypeError, match="input 0 has dtype float32, expected float64"):
            jax.jit(module.main)(np.ones(3), 3)  # the caller's jit made the f64 input f32
        assert not x64()
    with jax.enable_x64(True):  # and a process that turned it on keeps it on
        module.main(np.ones(3), 3)
        assert x64()


# ------------------------------------------------------------------ dtypes of inputs

def test_both_runtimes_reject_an_input_of_another_dtype_alike():
    for load in (torch_function, jax_function):
        fn = load(SOFTMAX, "softmax_any", tuning=False)
        for wrong in (np.ones((2, 3), np.float64), np.ones((2, 3), np.int32)):
            with pytest.raises(InputError, match="input 0 has dtype (f64|i32), expected f32 "
                                                 r"\(Tensor\[R, C; f32\]\); the language "
                                                 "converts no dtype implicitly"):
                fn(wrong)
        assert fn([[1.0, 2.0], [3.0, 4.0]]).shape == (2, 2)  # a list takes f32
    with pytest.raises(InputError, match="has dtype f64"):
        torch_function(SOFTMAX, "softmax_any", tuning=False)(torch.ones(2, 3).double())
    with pytest.raises(InputError, match="has dtype bf16"):
        jax_function(SOFTMAX, "softmax_any", tuning=False)(jnp.ones((2, 3), jnp.bfloat16))


def test_generated_modules_reject_an_array_of_another_dtype_alike(tmp_path):
    path = str(tmp_path / "wide.linnet")
    torch_main = import_generated(compile_source(WIDE, path=path).text, "wide").main
    jax_main = import_generated(compile_source(WIDE, path=path, target="jax").text, "wide",
                                "jax").main
    wrong = np.ones(3, np.float32)  # the parameter is f64
    with pytest.raises(TypeError, match="expected a torch.float64 tensor, got torch.float32"):
        torch_main(wrong, 1)
    with pytest.raises(TypeError, match="input 0 has dtype float32, expected float64"):
        jax_main(wrong, 1)
    for main in (torch_main, jax_main):  # numbers and lists take the parameter's dtype
        y, n = main([1.0, 2.0, 3.0], 2)
        assert str(y.dtype).endswith("float64") and str(n.dtype).endswith("int64")
        assert int(n) == 2 * 4294967296


# ------------------------------------------------------------------ torch.func, torch.compile

def _softmax_loss(w):
    return lambda f: (lambda x: (f(x) * w).sum())


@pytest.mark.parametrize("compiled", [True, False], ids=["generated", "interpreter"])
def test_torch_func_grad_and_vmap_over_a_loaded_function(compiled):
    fn = torch_function(SOFTMAX, "softmax_any", compile=compiled, tuning=False)
    ref = lambda x: torch.softmax(x, dim=-1)  # noqa: E731
    torch.manual_seed(0)
    x, w, xs = torch.randn(3, 5), torch.randn(3, 5), torch.randn(4, 3, 5)
    loss = _softmax_loss(w)
    torch.testing.assert_close(torch.func.grad(loss(fn))(x), torch.func.grad(loss(ref))(x))
    torch.testing.assert_close(torch.func.vmap(fn)(xs), ref(xs))
    torch.testing.assert_close(torch.func.vmap(torch.func.grad(loss(fn)))(xs),
                               torch.func.vmap(torch.func.grad(loss(ref)))(xs))


@pytest.mark.parametrize("compiled", [True, False], ids=["generated", "interpreter"])
def test_torch_func_grad_goes_through_an_ops_grad_clause(tmp_path, compiled):
    path = tmp_path / "scaled.linnet"
    path.write_text(SCALED_TIMES_X)
    fn = torch_function(str(path), "main", compile=compiled)
    x = torch.arange(4.0)
    # d/dx scaled(x) * x = 3 x (the clause, not the body's 2 x) + 2 x
    assert torch.func.grad(lambda x: fn(x).sum())(x).tolist() == [0.0, 5.0, 10.0, 15.0]
    assert torch.func.vmap(fn)(torch.ones(2, 4)).tolist() == [[2.0] * 4] * 2


@pytest.mark.parametrize("compiled", [True, False], ids=["generated", "interpreter"])
def test_torch_compile_over_a_loaded_function(compiled):
    fn = torch_function(SOFTMAX, "softmax_any", compile=compiled, tuning=False)
    torch.manual_seed(1)
    x, w = torch.randn(3, 5), torch.randn(3, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dynamo's notes on what it cannot trace
        fast = torch.compile(fn, fullgraph=False, backend="eager")
        torch.testing.assert_close(fast(x), torch.softmax(x, dim=-1))
        xr = x.clone().requires_grad_()
        (fast(xr) * w).sum().backward()
    xt = x.clone().requires_grad_()
    (torch.softmax(xt, dim=-1) * w).sum().backward()
    torch.testing.assert_close(xr.grad, xt.grad)


# ------------------------------------------------------------------ kernel or body

def test_ran_counts_the_calls_that_ran_the_kernel_and_the_body():
    fn = torch_function(SOFTMAX, "softmax_any", tuning=False)
    x = torch.randn(4, 16)
    assert fn.ran() == {}
    fn(x)
    fn(x)
    kernel_runs = os.environ.get("TRITON_INTERPRET") == "1"  # x is on the CPU, even with CUDA
    want = {"kernel": 2, "body": 0} if kernel_runs else {"kernel": 0, "body": 2}
    assert fn.ran() == {"softmax__R4_C16": want}
    torch.func.vmap(fn)(x.unsqueeze(0))  # batched tensors: the body
    assert fn.ran()["softmax__R4_C16"]["body"] == want["body"] + 1
    torch.func.grad(lambda x: fn(x).sum())(x)  # its Function's forward gets plain tensors
    assert fn.ran()["softmax__R4_C16"]["kernel"] == want["kernel"] + kernel_runs
    want["kernel" if kernel_runs else "body"] += 1
    xr = x.clone().requires_grad_()
    fn(xr).sum().backward()  # once through the autograd Function: counted once
    assert sum(fn.ran()["softmax__R4_C16"].values()) == 5
    fn(torch.randn(2, 16))  # another binding, another op instance
    assert set(fn.ran()) == {"softmax__R4_C16", "softmax__R2_C16"}


def test_ran_counts_only_the_calls_of_its_own_function():
    """Two loads of one program import one generated module (same text): each function's
    counts start when it first runs the module; once both run it, the module's counters
    are shared (the documented limit: no per-call bookkeeping on the launch path)."""
    first = torch_function(SOFTMAX, "softmax_any", tuning=False)
    x = torch.randn(4, 16)
    first(x)
    first(x)
    assert sum(first.ran()["softmax__R4_C16"].values()) == 2
    second = torch_function(SOFTMAX, "softmax_any", tuning=False)
    second(x)
    assert sum(second.ran()["softmax__R4_C16"].values()) == 1
    assert sum(first.ran()["softmax__R4_C16"].values()) == 3


def test_ran_lists_no_op_without_a_kernel_and_nothing_for_the_interpreter():
    exact = torch_function(SOFTMAX, "softmax_any", numerics="exact", tuning=False)
    exact(torch.randn(2, 8))
    assert exact.ran() == {}
    interpreted = torch_function(SOFTMAX, "softmax_any", compile=False, tuning=False)
    interpreted(torch.randn(2, 8))
    assert interpreted.ran() == {}


def test_ran_counts_jax_traces():
    fn = jax_function(SOFTMAX, "softmax_any", tuning=False)
    x = jnp.ones((2, 8))
    fn(x)
    fn(x)  # jitted: the same trace, not counted again
    kernel = os.environ.get("LINNET_PALLAS_INTERPRET") == "1" or jax.default_backend() == "gpu"
    assert fn.ran() == {"softmax__R2_C8": {"kernel": int(kernel), "body": int(not kernel)}}
    plain = load_source("module m\nentry main(x: f32) -> f32 {\n    return x\n}\n", "main")
    plain(1.0)
    assert plain.ran() == {}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_the_kernel_runs_eagerly_and_compiled_and_the_body_under_vmap():
    fn = torch_function(SOFTMAX, "softmax_any", tuning=False)
    torch.manual_seed(2)
    x, w = torch.randn(64, 1000, device="cuda"), torch.randn(64, 1000, device="cuda")
    ref = lambda x: torch.softmax(x, dim=-1)  # noqa: E731
    torch.testing.assert_close(fn(x), ref(x))
    assert fn.ran() == {"softmax__R64_C1000": {"kernel": 1, "body": 0}}
    loss = _softmax_loss(w)
    torch.testing.assert_close(torch.func.grad(loss(fn))(x), torch.func.grad(loss(ref))(x))
    xs = torch.randn(3, 64, 1000, device="cuda")
    torch.testing.assert_close(torch.func.vmap(fn)(xs), ref(xs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.testing.assert_close(torch.compile(fn, fullgraph=False)(x), ref(x))
    # grad's forward gets plain tensors, and the compiled graph calls the op's custom op:
    # the kernel both times; vmap's batched tensors run the body
    counts = fn.ran()["softmax__R64_C1000"]
    assert counts["kernel"] == 3 and counts["body"] >= 1


# The docs' examples of these conventions (docs/torch.md, docs/jax.md) run, with their shown
# output, in tests/project/test_docs_blocks.py.

IDENTITY = """module m
op same<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return x
} grad(y, dy) {
    return dy * 2.0
}
entry main<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return same(x)
}
"""


def test_an_op_with_a_grad_clause_may_return_its_parameter(tmp_path):
    """Its autograd Function saves the result for the clause; autograd refuses to save an
    input returned as it is, so the result is a view of the input (found by `linnet fuzz`)."""
    path = tmp_path / "same.linnet"
    path.write_text(IDENTITY)
    fn = torch_function(str(path), "main")
    x = torch.arange(3.0, requires_grad=True)
    y = fn(x)
    assert y.tolist() == [0.0, 1.0, 2.0]
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]  # the clause's gradient, not the body's
    assert torch.func.grad(lambda v: fn(v).sum())(torch.ones(3)).tolist() == [2.0, 2.0, 2.0]
