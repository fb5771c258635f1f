"""`--grad`: the compiler's reverse mode (the `differentiate` pass) against two references.

For each entry of the `.linnet` programs here, Hypothesis draws the generic dims, the
float dtype (where the entry is generic over it) and the inputs; the entry is compiled
with `grad=True` for PyTorch and run. Its results, (loss, gradient of each floating
input), are compared with

(a) PyTorch autograd through the module of the *original* entry (numerics "exact"; ops
    with a grad clause go through their autograd Function, whose backward is the clause),
    and autograd through the PyTorch interpreter of the original entry (which also runs
    grad clauses as backward, and differentiates the other bodies);
(b) central finite differences of the loss in float64, when every floating input is f64.

Every grad program is also checked by the IR verifier after each pass (`--verify-each`).
`LINNET_GRAD_EXAMPLES` sets the number of examples per entry; under the "ci" profile the
generic dims come from a fixed few per entry (`budget.generic_dims`), so each entry compiles
for few bindings, and the examples vary the inputs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linnet.passes.manager import Instrumentation
from linnet.pipeline import compile_source
from linnet.torch import load_function
from linnet.torch.runtime import import_generated

from budget import generic_dims

HERE = Path(__file__).parent
EXAMPLES = int(os.environ.get("LINNET_GRAD_EXAMPLES", 12))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow])
TORCH = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
         "f64": torch.float64, "i32": torch.int32, "i64": torch.int64, "bool": torch.bool}
FLOATS = ("f16", "bf16", "f32", "f64")
TOLERANCE = {"f32": dict(rtol=2e-4, atol=2e-4), "f64": dict(rtol=1e-9, atol=1e-9)}


@dataclass(frozen=True)
class Case:
    """An entry, the range of each of its Dim generics, and whether it takes `T: Float`."""
    file: str
    entry: str
    dims: dict[str, tuple[int, int]] = field(default_factory=dict)
    generic_float: bool = True
    zeros: bool = False  # sprinkle exact zeros among the inputs (products)

    def __str__(self) -> str:
        return f"{self.file}:{self.entry}"


CASES = [
    Case("elementwise", "arith", {"N": (1, 4), "M": (1, 3)}),
    Case("elementwise", "pick", {"N": (1, 5)}),
    Case("elementwise", "casts", generic_float=False),
    Case("reductions", "norms", {"R": (1, 3), "C": (1, 5)}),
    Case("reductions", "reduce", {"R": (1, 3), "C": (1, 4)}, zeros=True),
    Case("reductions", "products", generic_float=False, zeros=True),
    Case("indexing", "shapes"),
    Case("contractions", "matmul", {"M": (1, 3), "K": (1, 3), "N": (1, 3)}),
    Case("contractions", "attention", {"S": (1, 3), "D": (1, 3)}),
    Case("control", "branches", {"N": (1, 4)}),
    Case("control", "loops", {"N": (1, 4)}),
    Case("control", "scans", {"N": (1, 3)}),
    Case("control", "nested"),
    Case("control", "while_ints", {"N": (1, 3)}),
    Case("scans", "tuples", {"N": (1, 3)}),
    Case("scans", "forms", {"N": (1, 3)}),
    Case("ops", "calls", {"N": (1, 4)}),
    Case("ops", "in_loop", {"N": (1, 3)}),
]


# ------------------------------------------------------------------ compiling

_MODULES: dict[tuple, tuple] = {}


def compiled(case: Case, bind: dict[str, object], grad: bool, target: str = "torch"):
    """(generated module, entry params) for one binding, compiled once."""
    key = (case.file, case.entry, tuple(sorted(bind.items())), grad, target)
    if key not in _MODULES:
        path = HERE / f"{case.file}.linnet"
        out = compile_source(path.read_text(), path=str(path), target=target, entry=case.entry,
                             bind=bind, numerics="exact", grad=grad,
                             shown=Instrumentation(verify_each=True, emit=_no_output))
        params = out.stage("elaborate").func(out.stage("elaborate").entry).params
        name = f"grad_{case.entry}" if grad else case.entry
        _MODULES[key] = (import_generated(out.text, name, target), params)
    return _MODULES[key]


def _no_output(text: str) -> None:
    """Verification problems raise; nothing else is shown."""


# --------------------------------------------------------------------- inputs

@st.composite
def examples(draw, case: Case):
    bind = dict(zip(case.dims, draw(generic_dims(tuple(case.dims.values())))))
    if case.generic_float:
        bind["T"] = draw(st.sampled_from(["f32", "f64"]))
    seed = draw(st.integers(0, 2**32 - 1))
    zeros = case.zeros and draw(st.booleans())
    return bind, seed, zeros


def make_inputs(params, seed: int, zeros: bool = False) -> list[torch.Tensor]:
    rng = np.random.default_rng(seed)
    inputs = []
    for p in params:
        ty = p.type
        if ty.dtype in FLOATS:
            x = rng.standard_normal(ty.shape)
            if zeros:
                x = np.where(rng.random(ty.shape) < 0.3, 0.0, x)
        elif ty.dtype == "bool":
            x = rng.random(ty.shape) < 0.5
        else:
            x = rng.integers(-3, 4, ty.shape)
        inputs.append(torch.tensor(x, dtype=TORCH[ty.dtype]))
    return inputs


def float_positions(params) -> list[int]:
    return [k for k, p in enumerate(params) if p.type.dtype in FLOATS]


# ----------------------------------------------------------------- references

def autograd(module, params, inputs) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The original entry's loss and its gradients by PyTorch autograd."""
    leaves = [x.clone().requires_grad_() if p.type.dtype in FLOATS else x
              for p, x in zip(params, inputs)]
    (loss,) = module.main(*leaves)
    loss.backward()
    grads = [leaves[k].grad if leaves[k].grad is not None else torch.zeros_like(leaves[k])
             for k in float_positions(params)]
    return loss.detach(), grads


class _Interpreted:
    """The PyTorch interpreter of an entry, called as a generated module's `main` (one per
    case: `interpreted`)."""

    def __init__(self, case: Case) -> None:
        self.fn = load_function(str(HERE / f"{case.file}.linnet"), case.entry, compile=False,
                                numerics="exact")

    def main(self, *inputs):
        out = self.fn(*inputs)
        return out if isinstance(out, tuple) else (out,)


_INTERPRETERS: dict[str, _Interpreted] = {}


def interpreted(case: Case) -> _Interpreted:
    """The case's interpreter, loaded once (it elaborates each binding once, too)."""
    if str(case) not in _INTERPRETERS:
        _INTERPRETERS[str(case)] = _Interpreted(case)
    return _INTERPRETERS[str(case)]


def finite_differences(module, params, inputs, h: float = 1e-6) -> list[torch.Tensor]:
    """Central differences of the loss in float64, one input element at a time."""
    def loss(xs):
        return float(module.main(*xs)[0])
    grads = []
    for k in float_positions(params):
        g = torch.zeros_like(inputs[k])
        flat = g.view(-1)
        for j in range(flat.numel()):
            hi, lo = [x.clone() for x in inputs], [x.clone() for x in inputs]
            hi[k].view(-1)[j] += h
            lo[k].view(-1)[j] -= h
            flat[j] = (loss(hi) - loss(lo)) / (2 * h)
        grads.append(g)
    return grads


def run_grad(case: Case, bind: dict, inputs) -> tuple[torch.Tensor, list[torch.Tensor]]:
    module, params = compiled(case, bind, grad=True)
    loss, *grads = module.main(*inputs)
    assert len(grads) == len(float_positions(params))
    for g, k in zip(grads, float_positions(params)):
        assert g.dtype == inputs[k].dtype and g.shape == inputs[k].shape
    return loss, grads


def close(got, want, dtype: str) -> None:
    torch.testing.assert_close(got, want, **TOLERANCE.get(dtype, TOLERANCE["f32"]))


# ---------------------------------------------------------------------- tests

@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradient_matches_autograd_and_finite_differences(case: Case):
    @SETTINGS
    @given(examples(case))
    def check(example):
        bind, seed, zeros = example
        original, params = compiled(case, bind, grad=False)
        inputs = make_inputs(params, seed, zeros)
        loss, grads = run_grad(case, bind, inputs)
        want_loss, want = autograd(original, params, inputs)
        floats = float_positions(params)
        close(loss, want_loss, "f64" if loss.dtype == torch.float64 else "f32")
        for g, w, k in zip(grads, want, floats):
            close(g, w, params[k].type.dtype)
        _, by_interpreter = autograd(interpreted(case), params, inputs)
        for g, w, k in zip(grads, by_interpreter, floats):
            close(g, w, params[k].type.dtype)
        if all(params[k].type.dtype == "f64" for k in floats):
            for g, w in zip(grads, finite_differences(original, params, inputs)):
                scale = 1.0 + abs(float(loss))
                torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-7 * scale)
    check()
