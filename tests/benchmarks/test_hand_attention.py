"""The hand-written Triton attention of `benchmarks/hand/attention.py`, which the benchmark
measures the generated kernels against: it computes attention (on CUDA, or in Triton's
interpreter, which `tests/conftest.py` turns on without a GPU), it runs at the example's
tiles and launch hints, and it compiles for an sm_90 GPU."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from linnet.pipeline import compile_source

ROOT = Path(__file__).resolve().parents[2]
HAND = ROOT / "benchmarks" / "hand" / "attention.py"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
pytestmark = pytest.mark.skipif(
    DEVICE == "cpu" and os.environ.get("TRITON_INTERPRET") != "1",
    reason="no GPU, and Triton's interpreter is not on (tests/conftest.py sets it)")


def _hand():
    spec = importlib.util.spec_from_file_location("hand_attention", HAND)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reference(q, k, v, scale: float, causal: bool) -> torch.Tensor:
    scores = torch.einsum("bhld,bhsd->bhls", q.double(), k.double()) * scale
    if causal:
        n = q.shape[2]
        keep = torch.tril(torch.ones(n, n, dtype=torch.bool, device=q.device))
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.einsum("bhls,bhsd->bhld", torch.softmax(scores, -1), v.double())


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("length, keys, width", [(1, 1, 16), (100, 130, 64), (130, 70, 128)])
def test_hand_attention_computes_attention(causal, length, keys, width):
    """Ragged sequences (masks compiled in), one query, and blocks past the diagonal."""
    hand = _hand()
    keys = length if causal else keys
    g = torch.Generator().manual_seed(length)
    q, k, v = (torch.randn(2, 2, n, width, generator=g).to(DEVICE)
               for n in (length, keys, keys))
    got = hand.forward(q, k, v, 0.2, causal)
    assert got.dtype == torch.float32 and got.shape == q.shape
    torch.testing.assert_close(got.double(), _reference(q, k, v, 0.2, causal),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_hand_attention_in_bf16(causal):
    """bf16 in and out (in the interpreter, computed from f32 copies)."""
    hand = _hand()
    g = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 2, 150, 64, generator=g).to(torch.bfloat16).to(DEVICE)
               for _ in range(3))
    got = hand.forward(q, k, v, 0.125, causal)
    assert got.dtype == torch.bfloat16 and got.shape == q.shape
    torch.testing.assert_close(got.double(), _reference(q, k, v, 0.125, causal),
                               rtol=2e-2, atol=2e-2)


def test_hand_attention_refuses_what_it_cannot_run():
    hand = _hand()
    x = torch.randn(1, 1, 4, 48, device=DEVICE)
    with pytest.raises(ValueError, match="D in"):
        hand.forward(x, x, x, 1.0, False)
    y = torch.randn(1, 1, 5, 16, device=DEVICE)
    with pytest.raises(ValueError, match="S == L"):
        hand.forward(y, torch.randn(1, 1, 6, 16, device=DEVICE), torch.randn(1, 1, 6, 16,
                                                                            device=DEVICE),
                     1.0, True)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_hand_tiles_are_the_examples(dtype, causal):
    """The tiles and hints the hand kernel reads from the example are those the compiler
    launches the example's kernel with."""
    entry = {(False, "f32"): "attention_any", (True, "f32"): "attention_causal_any",
             (False, "bf16"): "attention_bf16_any",
             (True, "bf16"): "attention_causal_bf16_any"}[causal, dtype]
    bind = {"B": 1, "H": 1, "L": 256, "D": 64} | ({} if causal else {"S": 256})
    program = compile_source(path=str(ROOT / "examples" / "attention.linnet"), entry=entry,
                             bind=bind).stage("choose-kernels")
    (op,) = [f for f in program.funcs if f.kind == "op" and f.kernel is not None]
    generics = dict(op.kernel.generics)
    bq, bk, warps, stages = _hand().tiles(dtype, causal)
    assert (generics["BQ"], generics["BK"]) == (bq, bk)
    launched = compile_source(path=str(ROOT / "examples" / "attention.linnet"), entry=entry,
                              bind=bind).stage("instantiate-kernels")
    (kernel,) = [f for f in launched.funcs if f.kind == "kernel"]
    assert (kernel.launch.warps, kernel.launch.stages) == (warps, stages)


def test_hand_attention_compiles_for_a_gpu(tmp_path):
    """Triton's compiler, not only its interpreter, takes the kernel: each dtype, causal or
    not, at D = 64 and 128, to sm_90."""
    pytest.importorskip("triton.backends.nvidia")
    script = textwrap.dedent(f'''
        import importlib.util, os
        spec = importlib.util.spec_from_file_location("hand_attention", {str(HAND)!r})
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        names = ("D", "BQ", "BK", "CAUSAL", "EVEN_L", "EVEN_S", "PRECISION")
        for ptr, dtype, precision in (("bf16", "bf16", None), ("fp32", "f32", "ieee")):
            for causal in (False, True):
                for d in (64, 128):
                    bq, bk, warps, stages = m.tiles(dtype, causal)
                    sig = dict(q_ptr="*" + ptr, k_ptr="*" + ptr, v_ptr="*" + ptr,
                               o_ptr="*" + ptr, scale="fp32", L="i32", S="i32")
                    sig.update({{n: "constexpr" for n in names}})
                    values = dict(D=d, BQ=bq, BK=bk, CAUSAL=causal, EVEN_L=True, EVEN_S=True,
                                  PRECISION=precision)
                    triton.compile(ASTSource(fn=m._attention_kernel, signature=sig,
                                             constexprs=values),
                                   target=GPUTarget("cuda", 90, 32),
                                   options={{"num_warps": warps, "num_stages": stages}})
                    print(dtype, causal, d, flush=True)
        os._exit(0)
    ''')
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(TRITON_DEFAULT_FP_FUSION="1", TRITON_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == 8
