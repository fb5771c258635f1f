"""`--grad` through every backend: the same differentiated entry exported as a JAX module,
an ONNX model (run by onnxruntime) and StableHLO text (run by XLA) gives the loss and
gradients of the generated PyTorch module, which `test_grad.py` checks against autograd and
finite differences. `LINNET_GRAD_BACKEND_EXAMPLES` sets the number of examples per case.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings

from tests.grad.test_grad import (CASES, HERE, TOLERANCE, Case, compiled, examples, make_inputs,
                                  run_grad)

from linnet.pipeline import compile_source

EXAMPLES = int(os.environ.get("LINNET_GRAD_BACKEND_EXAMPLES", 3))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow])
_RUNNERS: dict[tuple, object] = {}


def runner(target: str, case: Case, bind: dict):
    """A function of NumPy inputs returning the export's outputs as NumPy arrays."""
    key = (target, case.file, case.entry, tuple(sorted(bind.items())))
    if key not in _RUNNERS:
        path = HERE / f"{case.file}.linnet"
        out = compile_source(path.read_text(), path=str(path), target=target,
                             entry=case.entry, bind=bind, numerics="exact", grad=True).text
        _RUNNERS[key] = _load(target, out, case)
    return _RUNNERS[key]


def _load(target: str, out, case: Case):
    if target == "onnx":
        pytest.importorskip("onnxruntime")
        from linnet.fuzz.onnx_run import load_onnx
        return load_onnx(out)
    if target == "stablehlo":
        from linnet.fuzz.stablehlo_run import run_stablehlo
        return lambda *xs: run_stablehlo(out, *xs)
    from linnet.torch.runtime import import_generated
    module = import_generated(out, f"grad_{case.entry}", "jax")
    return lambda *xs: [np.asarray(r) for r in module.main(*xs)]


@pytest.mark.parametrize("target", ["jax", "onnx", "stablehlo"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_backend_exports_the_same_gradient(case: Case, target: str) -> None:
    @SETTINGS
    @given(examples(case))
    def check(example):
        bind, seed, zeros = example
        _, params = compiled(case, bind, grad=False)
        inputs = make_inputs(params, seed, zeros)
        loss, grads = run_grad(case, bind, inputs)
        got = runner(target, case, bind)(*(x.numpy() for x in inputs))
        assert len(got) == 1 + len(grads)
        for g, want in zip(got, [loss, *grads]):
            tol = TOLERANCE["f64" if want.dtype == torch.float64 else "f32"]
            assert np.asarray(g).dtype == want.numpy().dtype
            np.testing.assert_allclose(np.asarray(g), want.numpy(), **tol)
    check()
