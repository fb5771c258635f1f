"""`--grad` through every backend: the same differentiated entry exported as a JAX module,
an ONNX model (run by onnxruntime) and StableHLO text (run by XLA) gives the loss and
gradients of the generated PyTorch module, which `test_grad.py` checks against autograd and
finite differences. `LINNET_GRAD_BACKEND_EXAMPLES` sets the number of examples per case.

Each example is a binding compiled anew for every backend (and, for JAX and StableHLO, by
XLA), so under the "ci" profile a case runs two: its middle dims in f64 and its low dims in
f32 (`paired_examples`), both dtypes and two shapes; other profiles draw three at random.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.grad.test_grad import (CASES, HERE, TOLERANCE, Case, compiled, examples, make_inputs,
                                  run_grad)

from linnet.pipeline import compile_source

from budget import generic_sizes, under_ci

EXAMPLES = int(os.environ.get("LINNET_GRAD_BACKEND_EXAMPLES", 2 if under_ci() else 3))
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
    from linnet.jax.loader import jitted
    from linnet.torch.runtime import import_generated
    module = import_generated(out, f"grad_{case.entry}", "jax")
    main = jitted(module.main)  # as the JAX runtime calls it: one compile, not one per op
    return lambda *xs: [np.asarray(r) for r in main(*xs)]


def paired_examples(case: Case) -> st.SearchStrategy:
    """(binding, seed, zeros) like `examples`, the binding one of `paired_bindings`: the
    first example takes the first, the second the other, so two examples give both dtypes
    and two shapes (where `examples`' first two are mostly f32 only)."""
    return st.tuples(st.sampled_from(paired_bindings(case)), st.integers(0, 2**32 - 1),
                     st.booleans() if case.zeros else st.just(False))


def paired_bindings(case: Case) -> list[dict[str, object]]:
    """The first two of the case's `generic_sizes` (its middle dims, then every dim at its
    low end, where `examples` draws most), the first in f64 and the second in f32 (the only
    one in both, when there is one)."""
    sizes = [dict(zip(case.dims, dims)) for dims in generic_sizes(tuple(case.dims.values()))]
    if not case.generic_float:
        return sizes[:2]
    first, second = (sizes * 2)[:2]
    return [{**first, "T": "f64"}, {**second, "T": "f32"}]


@pytest.mark.parametrize("target", ["jax", "onnx", "stablehlo"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_backend_exports_the_same_gradient(case: Case, target: str) -> None:
    @SETTINGS
    @given(paired_examples(case) if under_ci() else examples(case))
    def check(example):
        bind, seed, zeros = example
        _, params = compiled(case, bind, grad=True)  # the entry's own params (elaborate stage)
        inputs = make_inputs(params, seed, zeros)
        loss, grads = run_grad(case, bind, inputs)
        got = runner(target, case, bind)(*(x.numpy() for x in inputs))
        assert len(got) == 1 + len(grads)
        for g, want in zip(got, [loss, *grads]):
            tol = TOLERANCE["f64" if want.dtype == torch.float64 else "f32"]
            assert np.asarray(g).dtype == want.numpy().dtype
            np.testing.assert_allclose(np.asarray(g), want.numpy(), **tol)
    check()


def test_paired_bindings_give_both_dtypes_and_two_shapes() -> None:
    arith, casts, shapes = (next(c for c in CASES if c.entry == name)
                            for name in ("arith", "casts", "shapes"))
    assert paired_bindings(arith) == [{"N": 2, "M": 2, "T": "f64"}, {"N": 1, "M": 1, "T": "f32"}]
    assert paired_bindings(casts) == [{}]
    assert paired_bindings(shapes) == [{"T": "f64"}, {"T": "f32"}]
