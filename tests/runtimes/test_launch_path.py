"""The per-call path of generated PyTorch and of the runtimes: cheap, with every check kept.

- The launcher prints what depends on the binding as constants: no dtype conversion where
  the kernel reads the bodies' storage dtype, outputs made like an input of their shape
  and dtype, and conversions (half dtypes, unsigned storage) only where they are needed.
- `_lt_on` enters a CUDA device only for tensors off the current one.
- `load_function` keys repeated calls by the inputs' own shape and dtype objects, keys
  only inputs it checked (a wrong dtype is still a clear TypeError at every call) and compiles each
  binding once; `linnet.jax` jits each binding's `main` where jit can take the inputs.
- fold-constants rounds bf16 without ml_dtypes, bit for bit as ml_dtypes does.
- `benchmarks/launch.py` runs on the CPU.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from linnet.passes.middle.fold_constants import round_bf16
from linnet.pipeline import compile_source
from linnet.testing.child_env import child_env
from linnet.torch import load_function
from linnet.torch.runtime import import_generated

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "examples" / "softmax.linnet"
MATMUL = ROOT / "examples" / "matmul.linnet"


def generated(path: Path, entry: str, **bind: int) -> str:
    return compile_source(path.read_text(), path=str(path), entry=entry, bind=bind).text


def launcher(text: str) -> str:
    """The text of the (one) launcher in a generated module."""
    found = re.search(r"^def f\d+_op_launch\(.*?(?=\n\n)", text, re.S | re.M)
    assert found, "no launcher"
    return found.group(0)


def test_the_softmax_launcher_does_only_what_each_call_needs():
    code = launcher(generated(SOFTMAX, "softmax_any", R=4, C=16))
    assert code.splitlines()[2:] == [
        "    a0 = v0.contiguous()  # memory",
        "    o0 = torch.empty_like(a0)",
        "    with _lt_on(a0):",
        "        f1_kernel[(4,)](a0, o0)",
        "    return o0"]


def test_half_dtypes_are_converted_only_where_the_kernel_reads_another_dtype():
    text = generated(MATMUL, "matmul_bf16_any", M=8, N=4, K=6)
    code = launcher(text)
    assert "a0 = _lt_arg(v0, _LT_BF16)" in code and "a1 = _lt_arg(v1, _LT_BF16)" in code
    assert "return _lt_result(o0, torch.bfloat16)" in code
    assert "torch.empty((8, 4), dtype=_LT_BF16, device=a0.device)" in code  # no input is 8x4
    assert "def _lt_arg(" in text and "def _lt_result(" in text
    f32 = generated(MATMUL, "matmul_any", M=8, N=8, K=8)
    assert "_lt_arg" not in f32 and "_lt_result" not in f32  # helpers only where called


def _module():
    return import_generated(generated(SOFTMAX, "softmax_any", R=4, C=16), "softmax_any")


def test_a_launch_enters_a_cuda_device_only_off_the_current_one(monkeypatch):
    module = _module()
    assert module._lt_on(torch.zeros(1)) is module._LT_HERE  # CPU: nothing to enter
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    here = SimpleNamespace(is_cuda=True, get_device=lambda: 1, device=torch.device("cuda", 1))
    assert module._lt_on(here) is module._LT_HERE
    there = SimpleNamespace(is_cuda=True, get_device=lambda: 2, device=torch.device("cuda", 2))
    entered = module._lt_on(there)
    assert isinstance(entered, torch.cuda.device) and entered.idx == 2


def test_the_kernel_runs_only_where_triton_can_run_it(monkeypatch):
    module = _module()
    monkeypatch.setattr(module, "_LT_INTERPRET", False)
    cpu = torch.device("cpu")
    assert not module._lt_kernel_ok(cpu, torch.zeros(1))
    cuda = SimpleNamespace(is_cuda=True)
    assert module._lt_kernel_ok(cpu, cuda, cuda)
    assert not module._lt_kernel_ok(cpu, cuda, torch.zeros(1))
    assert module._lt_kernel_ok(torch.device("cuda", 0)) and not module._lt_kernel_ok(cpu)
    monkeypatch.setattr(module, "_LT_TRITON", False)
    assert not module._lt_kernel_ok(cpu, cuda)


def test_repeated_calls_reuse_the_binding_and_keep_the_checks():
    fn = load_function(str(SOFTMAX), "softmax_any")
    x = torch.randn(3, 5)
    want = torch.softmax(x, dim=1)
    for _ in range(3):
        torch.testing.assert_close(fn(x), want)
    assert len(fn.cache) == 1 and len(fn.by_inputs) == 1
    for _ in range(2):  # a wrong dtype is never keyed: it is checked at every call
        with pytest.raises(TypeError, match="input 0 has dtype i64, expected f32"):
            fn(torch.ones(3, 5, dtype=torch.int64))
    assert len(fn.cache) == 1 and len(fn.by_inputs) == 1
    torch.testing.assert_close(fn(x.numpy()), want)  # an array binds like its tensor
    assert len(fn.cache) == 1


def test_a_number_for_a_scalar_input(tmp_path):
    path = tmp_path / "scale.linnet"
    path.write_text("module m\nentry main<N: Dim>(x: Tensor[N; f32], s: f32) -> Tensor[N; f32] {\n"
                    "    return x * s\n}\n")
    fn = load_function(str(path), "main")
    x = torch.arange(4.0)
    assert fn(x, 2.0).tolist() == [0.0, 2.0, 4.0, 6.0]
    assert fn(x, 3).tolist() == [0.0, 3.0, 6.0, 9.0]  # an int key binds as the float did
    assert len(fn.cache) == 1


def test_a_number_for_a_scalar_is_made_on_the_device_once(tmp_path):
    """A Python number for a scalar input is a tensor made at its first use and shared after
    (a new one per call would be a host-to-device copy, which stalls every call on a GPU); a
    result that is that input is still a tensor of its own."""
    path = tmp_path / "scale.linnet"
    path.write_text("module m\nentry main(x: Tensor[4; f32], s: f32) -> (Tensor[4; f32], f32) "
                    "{\n    return (x * s, s)\n}\n")
    module = import_generated(compile_source(path.read_text(), path=str(path)).text, "scale")
    made = module._ln_lit.__defaults__[0]
    x = torch.arange(4.0)
    scaled, same = module.main(x, 0.5)
    assert scaled.tolist() == [0.0, 0.5, 1.0, 1.5] and same.item() == 0.5
    shared = made[("0.5", torch.float32, torch.device("cpu"))]
    module.main(x, 0.5)
    assert made[("0.5", torch.float32, torch.device("cpu"))] is shared  # not made again
    assert same.data_ptr() != shared.data_ptr()  # the result is a copy
    same += 1  # and writing into it leaves the shared input alone
    assert module.main(x, 0.5)[1].item() == 0.5


def test_jax_calls_jit_each_binding_where_jit_takes_the_inputs():
    jax = pytest.importorskip("jax")
    from linnet.jax.loader import jitted
    traced = []

    def main(x):
        traced.append(type(x).__name__)
        return (jax.numpy.asarray(x, dtype=jax.numpy.float32) * 2,)

    run = jitted(main)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(run(jax.numpy.arange(3.0))[0]), [0, 2, 4])
    assert len(traced) == 1  # traced once, then the compiled call
    np.testing.assert_array_equal(np.asarray(run(torch.arange(3.0))[0]), [0, 2, 4])
    assert traced[-1] == "Tensor"  # not a JAX type: main itself, unjitted


def test_jax_load_function_runs_jitted_and_unjitted_alike():
    jax = pytest.importorskip("jax")
    from linnet.jax import load_function as jax_function
    fn = jax_function(str(SOFTMAX), "softmax_any")
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    want = np.asarray(jax.nn.softmax(x, axis=1))
    np.testing.assert_allclose(np.asarray(fn(jax.numpy.asarray(x))), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(fn(torch.from_numpy(x))), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(fn)(x)), want, rtol=1e-6, atol=1e-6)
    assert len(fn.cache) == 1


BF16_CASES = [0.0, -0.0, 1.0, 1.00390625, 1.01171875, 1.0 + 2**-8 + 2**-20, 3.0e38, 3.4e38,
              -3.4e38, 1e39, 1e-40, -1e-45, 2**-133, math.inf, -math.inf, 0.1, -1 / 3]


def test_bf16_folding_rounds_as_torch_does():
    for v in BF16_CASES:
        want = torch.tensor(v, dtype=torch.float32).to(torch.bfloat16).item()
        got = round_bf16(v)
        assert got == want and math.copysign(1, got) == math.copysign(1, want), v
    assert math.isnan(round_bf16(math.nan))


def test_bf16_folding_matches_ml_dtypes_bit_for_bit():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bits = np.random.default_rng(0).integers(0, 2**32, 20000, dtype=np.uint64)
    for v in bits.astype(np.uint32).view(np.float32).tolist() + BF16_CASES:
        with np.errstate(over="ignore"):
            want = float(ml_dtypes.bfloat16(np.float32(v)))
        got = round_bf16(v)
        assert (math.isnan(got) and math.isnan(want)) or (
            got == want and math.copysign(1, got) == math.copysign(1, want)), v


def test_the_launch_benchmark_runs_on_the_cpu(tmp_path):
    out = tmp_path / "launch.json"
    env = child_env(ROOT, drop=("TRITON_INTERPRET",))
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "launch.py"), "--cpu",
                           "--count", "20", "--repeat", "2", "--examples", "softmax",
                           "--no-jax", "--json", str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text())
    calls = results["per_call"]
    assert set(calls["no_kernel_us"]) == {"hand", "main", "load_function"}
    assert set(calls["body_us"]) == {"body", "main", "load_function", "torch_softmax"}
    assert all(t > 0 for t in calls["body_us"].values())
    first = results["first_call"]["softmax"]
    # both measured (which is faster depends on the machine's load and on what the private
    # cache already holds: not a property to test)
    assert first["first_binding"]["total_s"] > 0 and first["next_binding"]["total_s"] > 0
    assert results["fresh_processes"]["same_source"] is True
    assert "| kernels off (op body), per call |" in done.stdout


def test_the_launcher_in_the_docs_is_what_is_generated():
    """docs/torch.md shows the launcher as the output of `linnet torch ... | sed ...`, which
    tests/project/test_docs_blocks.py runs and compares; here, that the block is still there."""
    doc = (ROOT / "docs" / "torch.md").read_text()
    section = doc[doc.index("## The launch path"):]
    assert "$ linnet torch examples/softmax.linnet --entry softmax_any --bind R=8" in section
    assert "def f2_op_launch(_d, v0):" in section


def test_the_first_call_bindings_match_the_examples() -> None:
    """Every example and binding `benchmarks/launch.py` times as a first call compiles: the
    script names entries of the examples, which change under it."""
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import launch
    finally:
        sys.path.remove(str(ROOT))
    for example, (file, extra, entry, binds) in launch.EXAMPLES.items():
        text = (ROOT / "examples" / file).read_text() + extra
        for bind in binds:
            compiled = compile_source(text, path=file, entry=entry, bind=bind)
            assert "def main(" in compiled.text, (example, bind)
