"""The GPU benchmark suite (`benchmarks/kernels.py`, `benchmarks/gpu/`, `benchmarks/hand/`)
where no GPU is needed: the report rendered from a fixed JSON, the script's answer without
CUDA, the hand-written Triton kernels in Triton's interpreter on tiny inputs, and a dry run
of every case on the CPU at tiny sizes (torch.compile replaced by the eager function, a
wall-clock timer for do_bench), which drives the whole loop: checks, missing entries,
errors recorded as rows, ratios, the JSON and its tables.

On a GPU machine (no interpreter) the hand kernels run on CUDA tensors and the dry run is
skipped: the script itself is the GPU check.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = "cpu" if INTERPRETED or not torch.cuda.is_available() else "cuda"
needs_triton = pytest.mark.skipif(DEVICE == "cpu" and not INTERPRETED,
                                  reason="no CUDA device and Triton's interpreter is off")

RESULTS = {
    "environment": {"date": "2026-12-04 10:00 UTC", "device": "NVIDIA H200", "capability": "9.0",
                    "cuda": "12.8", "torch": "2.11.0", "triton": "3.6.0", "jax": "0.11.2",
                    "jaxlib": "0.11.2", "python": "3.12.3", "linnet_commit": "abc123def456"},
    "settings": {"warmup_ms": 25, "rep_ms": 100, "jax_rounds": 5, "quick": False},
    "cases": {"softmax": {"seconds": 12.0, "about": "Row softmax, f32."},
              "layer_norm": {"seconds": 30.0, "about": ""}},
    "rows": [
        {"case": "softmax", "config": "8192x1000", "dtype": "f32", "step": "", "key": "linnet",
         "impl": "Linnet", "family": "torch", "unit": "GB/s", "status": "ok", "ms": 0.022,
         "throughput": 2978.9, "max_error": 3e-8, "vs_linnet": 1.0, "vs_pallas": None,
         "note": "", "error": ""},
        {"case": "softmax", "config": "8192x1000", "dtype": "f32", "step": "", "key": "hand",
         "impl": "hand Triton", "family": "torch", "unit": "GB/s", "status": "ok", "ms": 0.021,
         "throughput": 3120.0, "max_error": 3e-8, "vs_linnet": 0.9545, "vs_pallas": None,
         "note": "", "error": ""},
        {"case": "softmax", "config": "8192x1000", "dtype": "f32", "step": "",
         "key": "linnet_pallas", "impl": "Linnet Pallas", "family": "jax", "unit": "GB/s",
         "status": "ok", "ms": 0.0284, "throughput": 2306.0, "max_error": 3e-8,
         "vs_linnet": 1.2909, "vs_pallas": 1.0, "note": "", "error": ""},
        {"case": "softmax", "config": "8192x1000", "dtype": "f32", "step": "", "key": "jax_nn",
         "impl": "jax.nn.softmax (jit)", "family": "jax", "unit": "GB/s", "status": "ok",
         "ms": 0.0357, "throughput": 1835.0, "max_error": 3e-8, "vs_linnet": 1.6227,
         "vs_pallas": 1.2570, "note": "", "error": ""},
        {"case": "layer_norm", "config": "32768x768", "dtype": "bf16", "step": "backward",
         "key": "hand", "impl": "hand Triton", "family": "torch", "unit": "GB/s",
         "status": "missing", "ms": None, "throughput": None, "max_error": None,
         "vs_linnet": None, "vs_pallas": None, "note": "",
         "error": "benchmarks/hand/layer_norm.py is not there"},
        {"case": "layer_norm", "config": "32768x768", "dtype": "bf16", "step": "backward",
         "key": "torch", "impl": "F.layer_norm", "family": "torch", "unit": "GB/s",
         "status": "error", "ms": None, "throughput": None, "max_error": None,
         "vs_linnet": None, "vs_pallas": None, "note": "",
         "error": "RuntimeError: a | b\nsecond line"},
    ],
}


def test_the_suite_modules_import_and_name_their_cases():
    import importlib
    from benchmarks import kernels
    for case in kernels.CASES:
        module = importlib.import_module(f"benchmarks.gpu.{case}")
        assert module.CASE == case and callable(module.run) and module.__doc__
    for name in ("softmax", "matmul", "attention", "layer_norm"):
        assert callable(importlib.import_module(f"benchmarks.hand.{name}").forward)
    assert callable(importlib.import_module("benchmarks.hand.layer_norm").backward)


def test_report_renders_the_tables_from_the_json(tmp_path):
    path = tmp_path / "kernels.json"
    path.write_text(json.dumps(RESULTS))
    done = subprocess.run([sys.executable, "benchmarks/report.py", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("## Kernels on the GPU (NVIDIA H200, 2026-12-04)\n")
    assert ("torch 2.11.0, Triton 3.6.0, JAX 0.11.2 (jaxlib 0.11.2), Python 3.12.3, "
            "Linnet abc123def456") in text
    assert "### Softmax\n\nRow softmax, f32.\n" in text
    assert ("| config | dtype | implementation | ms | GB/s | time / Linnet | "
            "time / Linnet Pallas | max error | note |") in text
    assert "| 8192x1000 | f32 | Linnet | 0.0220 | 2,979 | 1.00 |  | 3.0e-08 |  |" in text
    assert "| 8192x1000 | f32 | hand Triton | 0.0210 | 3,120 | 0.95 |  | 3.0e-08 |  |" in text
    assert "| jax.nn.softmax (jit) | 0.0357 | 1,835 | 1.62 | 1.26 |" in text
    # layer norm: a pass column, no Pallas column, failures in the ms column with their text
    assert ("| config | dtype | pass | implementation | ms | GB/s | time / Linnet | max error "
            "| note |") in text
    assert ("| 32768x768 | bf16 | backward | hand Triton | missing |  |  |  | "
            "benchmarks/hand/layer_norm.py is not there |") in text
    assert "| F.layer_norm | error |  |  |  | RuntimeError: a \\| b |" in text
    assert "(4 rows, 12 s.)" in text and "(2 rows, 30 s.)" in text


def _split_run(tmp_path, commit: str = "abc123def456") -> list[str]:
    """RESULTS as two calls of one run: softmax in the first, layer norm in the second."""
    paths = []
    for case in ("softmax", "layer_norm"):
        part = dict(RESULTS, cases={case: RESULTS["cases"][case]},
                    rows=[r for r in RESULTS["rows"] if r["case"] == case], seconds=10.0)
        if case == "layer_norm":
            part["environment"] = dict(RESULTS["environment"], linnet_commit=commit)
        paths.append(str(tmp_path / f"{case}.json"))
        Path(paths[-1]).write_text(json.dumps(part))
    return paths


def test_report_joins_the_calls_of_one_run(tmp_path):
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps(RESULTS))
    report = [sys.executable, "benchmarks/report.py"]
    one = subprocess.run(report + [str(whole)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    split = subprocess.run(report + _split_run(tmp_path), cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert split.returncode == 0, split.stderr
    assert split.stdout == one.stdout


def test_report_joins_a_case_split_over_calls():
    """The std case run with --ops in two calls: one section, the seconds added up."""
    from benchmarks.report import merge
    rows = [dict(r, case="std") for r in RESULTS["rows"][:2]]
    parts = [dict(RESULTS, cases={"std": {"seconds": s, "about": "ops", "bandwidth": {}}},
                  rows=[row]) for s, row in ((10.0, rows[0]), (5.0, rows[1]))]
    merged = merge(parts)
    assert merged["cases"] == {"std": {"seconds": 15.0, "about": "ops", "bandwidth": {}}}
    assert merged["rows"] == rows


def test_report_refuses_calls_at_different_commits(tmp_path):
    done = subprocess.run([sys.executable, "benchmarks/report.py", *_split_run(tmp_path, "fff")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "differ in linnet_commit" in done.stderr and "Traceback" not in done.stderr


def test_report_says_when_the_json_cannot_be_read(tmp_path):
    done = subprocess.run([sys.executable, "benchmarks/report.py", str(tmp_path / "none.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "cannot read" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_script_without_cuda_says_so_and_exits():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "benchmarks/kernels.py", "--only", "softmax"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 1
    assert "benchmarks/kernels.py needs a CUDA device" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_the_script_refuses_an_unknown_case():
    done = subprocess.run([sys.executable, "benchmarks/kernels.py", "--only", "softmax,conv"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "unknown case conv" in done.stderr


# ---------------------------------------------------------------- the hand-written kernels

def attention_reference(q, k, v, scale: float, causal: bool) -> torch.Tensor:
    s = (q.double() @ k.double().transpose(-1, -2)) * scale
    if causal:
        n_q, n_k = s.shape[-2:]
        s = s.masked_fill(torch.ones(n_q, n_k, dtype=torch.bool, device=s.device).triu(1),
                          float("-inf"))
    return torch.softmax(s, -1) @ v.double()


@needs_triton
@pytest.mark.parametrize("shape", [(5, 37), (3, 16), (2, 1000)])
def test_hand_softmax(shape):
    from benchmarks.hand import softmax
    x = torch.randn(*shape, device=DEVICE)
    torch.testing.assert_close(softmax.forward(x), torch.softmax(x, 1), atol=1e-6, rtol=1e-5)


@needs_triton
@pytest.mark.parametrize("m, n, k", [(40, 24, 50), (32, 16, 48)])  # ragged; multiples of 16
@pytest.mark.parametrize("precision", ["ieee", "tf32"])
def test_hand_matmul(m, n, k, precision):
    from benchmarks.hand import matmul
    a, b = torch.randn(m, k, device=DEVICE), torch.randn(k, n, device=DEVICE)
    c = matmul.forward(a, b, precision, tiles=(16, 16, 16, 4, 1))
    tol = 1e-4 if precision == "ieee" else 2e-2
    torch.testing.assert_close(c, a @ b, atol=tol * math.sqrt(k), rtol=tol)


@needs_triton
@pytest.mark.parametrize("n_q, n_k, causal", [(40, 24, False), (37, 37, True), (32, 32, True),
                                              (64, 64, False)])
def test_hand_attention(n_q, n_k, causal):
    from benchmarks.hand import attention
    gen = torch.Generator(device=DEVICE).manual_seed(n_q + n_k)
    q, k, v = (torch.randn(2, 3, n, 16, device=DEVICE, generator=gen) for n in (n_q, n_k, n_k))
    o = attention.forward(q, k, v, 0.25, causal)
    ref = attention_reference(q, k, v, 0.25, causal)
    assert (o.double() - ref).abs().max().item() < 1e-5
    if causal:  # the first query sees only the first key
        torch.testing.assert_close(o[:, :, 0], v[:, :, 0])


def layer_norm_reference(x, w, b, dy, eps: float) -> list[torch.Tensor]:
    """y, dx, dw, db of F.layer_norm in float64, from the same (rounded) inputs."""
    leaves = [t.double().requires_grad_() for t in (x, w, b)]
    y = torch.nn.functional.layer_norm(leaves[0], x.shape[-1:], leaves[1], leaves[2], eps)
    y.backward(dy.double())
    return [y.detach()] + [t.grad for t in leaves]


@needs_triton
@pytest.mark.parametrize("rows, cols, dtype", [
    (5, 1, torch.float32), (33, 100, torch.float32), (7, 768, torch.float32),
    (37, 1500, torch.float32), (5, 1, torch.bfloat16), (33, 100, torch.bfloat16),
    (7, 768, torch.bfloat16)])
def test_hand_layer_norm(rows, cols, dtype, monkeypatch):
    """Forward and backward against F.layer_norm: one program of several rows, R past a
    multiple of the rows a program takes, and (37 x 1500) backward programs of several tiles
    with a ragged last one. The backward aims at 4 programs, not 256, so that a few rows give
    programs of several tiles (37 rows of RB = 2: 4 tiles a program, 5 programs, the last
    short): in Triton's interpreter 1100 rows would show nothing more, slowly."""
    from benchmarks.hand import layer_norm
    assert layer_norm.tiles(cols) == (max(1, 4096 // 2 ** math.ceil(math.log2(cols))),
                                      2 ** math.ceil(math.log2(cols)))
    assert layer_norm.steps(1100, 2) == 2
    monkeypatch.setattr(layer_norm, "BACKWARD_PROGRAMS", 4)
    assert layer_norm.steps(37, 2) == 4
    gen = torch.Generator(device=DEVICE).manual_seed(rows + cols)
    x, dy = (torch.randn(rows, cols, device=DEVICE, generator=gen).to(dtype) for _ in "ab")
    w, b = (torch.randn(cols, device=DEVICE, generator=gen).to(dtype) for _ in "ab")
    y = layer_norm.forward(x, w, b, 1e-5)
    dx, dw, db = layer_norm.backward(x, w, b, 1e-5, dy)
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    for got, want in zip((y, dx, dw, db), layer_norm_reference(x, w, b, dy, 1e-5)):
        assert got.dtype == dtype and got.shape == want.shape
        assert (got.double() - want).abs().max().item() <= tol * (1 + want.abs().max().item())
    leaves = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    layer_norm.layer_norm(*leaves, 1e-5).backward(dy)  # the same kernels under autograd
    for leaf, want in zip(leaves, (dx, dw, db)):
        torch.testing.assert_close(leaf.grad, want, rtol=0, atol=0)


# ---------------------------------------------------------------- a dry run on the CPU

@pytest.mark.skipif(not INTERPRETED, reason="the dry run uses Triton's interpreter")
def test_a_dry_run_of_every_case_on_the_cpu(monkeypatch, tmp_path, capsys):
    from benchmarks import kernels
    from benchmarks.gpu import attention, layer_norm, matmul, softmax
    from benchmarks.gpu.harness import Settings, Suite
    from benchmarks.gpu.jax_side import JaxSide
    monkeypatch.setattr(torch, "compile", lambda fn, **_: fn)
    monkeypatch.setattr(softmax, "SHAPES", ((6, 10),))
    monkeypatch.setattr(layer_norm, "ROWS", 8)
    monkeypatch.setattr(layer_norm, "WIDTHS", (12,))
    for name, value in (("B", 1), ("H", 2), ("L", 32), ("WIDTHS", (16,))):
        monkeypatch.setattr(attention, name, value)
    monkeypatch.setattr(matmul, "SHAPES", ((40, 24, 48),))

    def timer(run, grad_to_none):
        start = time.perf_counter()
        run()
        return 1e3 * (time.perf_counter() - start)

    suite = Suite(Settings(warmup_ms=1, rep_ms=2, jax_rounds=1), JaxSide(gpu_only=False),
                  device="cpu", torch_timer=timer)
    path = tmp_path / "dry.json"
    cases = [c for c in kernels.CASES if c != "std"]  # the std case's dry run is below
    results = kernels.measure(suite, cases, {"device": "cpu"}, str(path))
    assert json.loads(path.read_text())["rows"] == results["rows"]
    rows = {(r["case"], r["config"], r["dtype"], r["step"], r["key"]): r for r in results["rows"]}
    assert all(r["status"] in ("ok", "missing", "error", "wrong") for r in rows.values())

    def ok(*key):
        row = rows[key]
        assert row["status"] == "ok", row
        assert row["ms"] > 0 and row["max_error"] <= row["tolerance"]
        return row

    for impl in ("linnet", "hand", "torch", "compile", "eager"):
        ok("softmax", "6x10", "f32", "", impl)
    assert ok("softmax", "6x10", "f32", "", "linnet")["vs_linnet"] == 1.0
    for dtype in ("f32", "bf16"):
        for step in ("forward", "backward"):
            for impl in ("linnet", "hand", "torch", "compile"):
                ok("layer_norm", "8x12", dtype, step, impl)
    for mode in ("f32", "tf32"):
        for impl in ("linnet", "hand", "cublas"):
            ok("matmul", "40x24x48", mode, "", impl)
    ok("matmul", "40x24x48", "bf16", "", "linnet")
    ok("attention", "B1 H2 L=S=32 D16", "f32", "", "hand")
    ok("attention", "B1 H2 L=S=32 D16 causal", "f32", "", "hand")
    # no flash attention on the CPU: an error row with torch's message, and the run went on
    flash = rows[("attention", "B1 H2 L=S=32 D16", "bf16", "", "sdpa_flash")]
    assert flash["status"] in ("error", "ok")
    for key, row in rows.items():  # what is absent is reported as missing, with the reason
        if row["status"] == "missing":
            assert "has no entry" in row["error"] or "is not there" in row["error"] or \
                "jax" in row["error"].lower(), row
    if rows[("softmax", "6x10", "f32", "", "jax_body")]["status"] != "missing":
        ok("softmax", "6x10", "f32", "", "jax_body")
        ok("layer_norm", "8x12", "f32", "backward", "jax_body")
        assert rows[("softmax", "6x10", "f32", "", "jax_body")]["vs_pallas"] is not None
    printed = capsys.readouterr().out
    assert "### Softmax" in printed and "### Matmul" in printed and "rows," in printed


def dry_suite():
    """A suite on the CPU whose torch calls are timed once by the wall clock."""
    from benchmarks.gpu.harness import Settings, Suite
    from benchmarks.gpu.jax_side import JaxSide

    def timer(run, grad_to_none):
        start = time.perf_counter()
        run()
        return 1e3 * (time.perf_counter() - start)
    return Suite(Settings(warmup_ms=1, rep_ms=2, jax_rounds=1), JaxSide(gpu_only=False),
                 device="cpu", torch_timer=timer)


@pytest.mark.skipif(not INTERPRETED, reason="the dry run uses Triton's interpreter")
def test_a_dry_run_of_the_std_case_goes_on_past_a_failing_op(monkeypatch, tmp_path):
    """rms_norm_2d at 3x40 in f32 through its kernels, forward and forward+backward, with an
    op whose program cannot be written before it and an item the std does not have after it:
    the failure is a row, the run goes on, and the tables say what ran and against what."""
    import dataclasses
    from benchmarks import kernels
    from benchmarks.gpu import std
    from benchmarks.gpu.std_ops import OPS, Shape
    from benchmarks.gpu.tables import render
    monkeypatch.setattr(torch, "compile", lambda fn, **_: fn)
    monkeypatch.setattr(std, "COPY_BYTES", 1024)
    monkeypatch.setattr(std, "DTYPES", {"f32": torch.float32})
    rms = next(op for op in OPS if op.item == "rms_norm_2d")
    tiny = (Shape("3x40", {"R": 3, "H": 40}),)

    ops = [dataclasses.replace(rms, label="broken", also=None),  # () + None: TypeError
           dataclasses.replace(rms, shapes=tiny),
           dataclasses.replace(rms, item="rms_norm_9d", shapes=tiny)]
    monkeypatch.setattr(std, "OPS", ops)
    path = tmp_path / "std.json"
    results = kernels.measure(dry_suite(), ["std"], {"device": "cpu"}, str(path))
    rows = {(r["config"], r["step"], r["key"]): r for r in results["rows"]}
    assert rows[("broken", "", "(setup)")]["error"].startswith("TypeError: can only concatenate")
    assert rows[("copy 0 MiB", "forward", "copy")]["status"] == "ok"
    for step, ran in (("forward", "kernels: rms_norm_2d 1"),
                      ("forward+backward", "kernels: rms_norm_2d 1, rms_norm_backward 1")):
        for key in ("linnet", "compile"):
            row = rows[("rms_norm_2d 3x40", step, key)]
            assert row["status"] == "ok" and row["max_error"] <= row["tolerance"], row
        assert rows[("rms_norm_2d 3x40", step, "linnet")]["note"] == ran
        liger = rows[("rms_norm_2d 3x40", step, "liger")]
        assert liger["status"] == "ok" or liger["error"] == "liger-kernel not installed"
        assert rows[("rms_norm_9d 3x40", step, "linnet")]["error"] == \
            "std.nn.norm in this tree has no rms_norm_9d (not written yet)"
    assert results["cases"]["std"]["bandwidth"] == {
        "device": "cpu", "published_gbs": None,
        "measured_gbs": rows[("copy 0 MiB", "forward", "copy")]["throughput"]}
    text = render(json.loads(path.read_text()))
    assert "### The standard library's ops" in text
    assert "measured in this run by the device-to-device copy row" in text
    assert "| rms_norm_2d 3x40 | f32 | forward+backward |" in text
    assert "| GB/s |" in text and "| peak GiB |" not in text  # no CUDA: no peak memory


TINY_WINDOW = {"B": 1, "H": 2, "Hk": 2, "L": 16, "D": 16, "window": 4}
TINY_NEW_OPS = {  # masked and sink attention ops and a conv2d op at sizes the interpreter runs fast
    "grouped_attention_rows padding": {"B": 2, "H": 2, "Hk": 1, "L": 16, "D": 16},
    "sink_attention padding": {"B": 2, "H": 2, "Hk": 1, "L": 16, "D": 16},
    "conv2d stride 2": {"B": 2, "Cin": 3, "Cout": 4, "H": 7, "W": 7, "K": 3, "stride": 2,
                        "pad": 1}}


@pytest.mark.skipif(not INTERPRETED, reason="the dry run uses Triton's interpreter")
def test_a_dry_run_of_the_masked_attention_and_conv_ops(monkeypatch, tmp_path):
    """A padding mask per batch row [B, L, S] under grouped heads, with and without sinks,
    and a stride-2 convolution, in f32, forward and forward+backward: the masked, sink and
    conv2d kernels ran, and the peers that take these inputs on the CPU (SDPA's math
    backend, F.conv2d, the sink softmax's torch expression) agree with the reference (the
    sinks' gradient included), so the mask reaches SDPA as Linnet reads it. (The window op differs
    only in its entry, which test_every_std_op_program_checks_or_names_what_is_missing
    checks, and in its mask, counted below.)"""
    import dataclasses
    from benchmarks import kernels
    from benchmarks.gpu import std
    from benchmarks.gpu.std_ops import OPS, Shape
    monkeypatch.setattr(torch, "compile", lambda fn, **_: fn)
    monkeypatch.setattr(std, "COPY_BYTES", 1024)
    monkeypatch.setattr(std, "DTYPES", {"f32": torch.float32})
    monkeypatch.setattr(std, "OPS", [dataclasses.replace(op, shapes=(Shape("tiny", sizes),))
                                     for name, sizes in TINY_NEW_OPS.items()
                                     for op in OPS if op.name == name])
    results = kernels.measure(dry_suite(), ["std"], {"device": "cpu"}, str(tmp_path / "s.json"))
    rows = {(r["config"], r["step"], r["key"]): r for r in results["rows"]}
    masked = "attention_delta 1, attention_masked_dkv 1, attention_masked_dq 1, " \
             "attention_masked_rows_lse 1"
    for op, peers, forward, backward in (
            ("grouped_attention_rows padding", ("compile", "sdpa_math"),
             "attention_masked_rows_lse 1", masked),
            ("sink_attention padding", ("compile",), "attention_sink_rows 1",
             "attention_masked_dkv 1, attention_masked_dq 1, attention_sink_rows 1, "
             "attention_sink_stats 1"),
            ("conv2d stride 2", ("compile", "eager"), "conv2d_gemm 1",
             "conv2d_gemm 1, conv2d_input_grad 1, conv2d_weight_grad 1")):
        for step, ran in (("forward", forward), ("forward+backward", backward)):
            for key in ("linnet",) + peers:
                row = rows[(f"{op} tiny", step, key)]
                assert row["status"] == "ok" and row["max_error"] <= row["tolerance"], row
            assert rows[(f"{op} tiny", step, "linnet")]["note"] == f"kernels: {ran}"
    assert rows[("conv2d stride 2 tiny", "forward", "eager")]["impl"] == "F.conv2d (cuDNN)"
    assert rows[("grouped_attention_rows padding tiny", "forward", "sdpa_efficient")][
        "impl"] == "SDPA efficient (k, v repeated)"


def test_the_masked_attention_and_conv_ops_count_their_flops():
    """Masked attention counts 4·H·D per kept (query, key) pair: a window of 4 over 16
    positions keeps 1 + 2 + 3 + 13·4 pairs; padding rows of 16 and 8 keys keep 16·16 + 16·8
    (a query of a padded position still sees its row's keys). conv2d: 2·B·Cout·Ho·Wo·Cin·K²
    forward, the backward twice that again."""
    from benchmarks.gpu.std_ops import OPS
    work = {op.name: op.work for op in OPS}
    window, padding = TINY_WINDOW, TINY_NEW_OPS["grouped_attention_rows padding"]
    assert work["attention window"](window, 4, "forward") == 4 * 2 * 16 * 58
    assert work["attention window"](window, 4, "forward+backward") == 3.5 * 4 * 2 * 16 * 58
    assert work["grouped_attention_rows padding"](padding, 4, "forward") == \
        4 * 2 * 16 * (16 * 16 + 16 * 8)
    conv = TINY_NEW_OPS["conv2d stride 2"]
    assert work["conv2d stride 2"](conv, 4, "forward") == 2 * 2 * 4 * 4 * 4 * 3 * 9
    assert work["conv2d stride 2"](conv, 4, "forward+backward") == 3 * 2 * 2 * 4 * 4 * 4 * 3 * 9


def test_every_std_op_program_checks_or_names_what_is_missing(tmp_path):
    """Each op's tiny program checks against the tree's std, so that a typo shows here and
    not on the GPU; an op whose item is not written yet says so instead."""
    from benchmarks.gpu.std import OPS, missing_item
    from linnet.check.frontend import check_program
    from linnet.diagnostics import render
    for op in OPS:
        why = missing_item(op)
        if why:
            assert why.endswith(f"has no {op.item} (not written yet)"), why
            continue
        path = tmp_path / f"{op.name.replace(' ', '_')}.linnet"
        path.write_text(op.program())
        result = check_program(str(path))
        assert result.ok, "\n".join(render(d, result.sources) for d in result.diagnostics)
        assert {i.name for i in result.program.root_module.items
                if getattr(i, "kind", None) == "entry"} == {"run"}


def test_the_script_refuses_an_unknown_std_op(capsys):
    from benchmarks import kernels
    with pytest.raises(SystemExit) as exit:
        kernels.parse(["--only", "std", "--ops", "rms_norm_2d,conv9d"])
    assert exit.value.code == 2 and "unknown op conv9d" in capsys.readouterr().err
    assert kernels.parse(["--ops", "attention causal, rope"]).ops == ["attention causal", "rope"]


def test_the_goal_table_takes_the_fastest_peer_and_the_measured_bandwidth():
    from benchmarks.gpu.tables import goal_table
    base = {"config": "rms_norm_2d 4096x4096", "dtype": "bf16", "step": "forward",
            "unit": "GB/s", "note": "", "error": "", "status": "ok"}
    rows = [dict(base, key="linnet", impl="Linnet", ms=0.025, throughput=2684.4,
                 peak_bytes=None),
            dict(base, key="compile", impl="torch.compile(torch expression)", ms=0.030,
                 throughput=2237.0),
            dict(base, key="liger", impl="Liger-Kernel", ms=0.0275, throughput=2440.4),
            dict(base, step="forward+backward", key="linnet", impl="Linnet", ms=0.1,
                 throughput=1677.7, peak_bytes=2 ** 30),
            dict(base, step="forward+backward", key="liger", impl="Liger-Kernel", ms=0.08,
                 throughput=2097.2, peak_bytes=2 ** 29),
            dict(base, step="forward+backward", key="compile", impl="torch.compile", ms=None,
                 status="error", throughput=None)]
    lines = goal_table(rows, {"device": "NVIDIA H200", "measured_gbs": 4000.0,
                              "published_gbs": 4800.0})
    assert "of 4.00 TB/s, measured in this run" in lines[0] and "H200: 4.80 TB/s" in lines[0]
    assert lines[4] == ("| rms_norm_2d 4096x4096 | bf16 | forward | 0.0250 | 2.68 TB/s | 67% "
                        "| Liger-Kernel | 0.0275 | 1.10 |  |  |")
    assert lines[5] == ("| rms_norm_2d 4096x4096 | bf16 | forward+backward | 0.1000 | 1.68 TB/s "
                        "| 42% | Liger-Kernel | 0.0800 | 0.80 | 1.00 / 0.50 |  |")
    published = goal_table(rows, {"device": "NVIDIA H200", "published_gbs": 4800.0})
    assert "the published peak of NVIDIA H200, 4.80 TB/s (the copy was not measured)" \
        in published[0] and "| 56% |" in published[4]


def test_the_sweep_rewrites_both_matmul_ops_and_the_launch_hints():
    from benchmarks.gpu.harness import entry_names
    from benchmarks.gpu.sweep import variant
    path = variant(64, 256, 32, 4, 5)
    text = path.read_text()
    assert text.count("matmul_tiles<M, N, K, f32, 64, 256, 32, 8>") == 1
    assert text.count("matmul_tiles<M, N, K, bf16, 64, 256, 32, 8>") == 1
    assert "warps(4) stages(5)" in text
    assert {"matmul_any", "matmul_bf16_any"} <= entry_names(path)  # and it still checks
