"""Gradients of root blocks' entries in the fuzzer: the `--grad` export of every target
(the loss, the gradients of the entry's floating inputs and of the tree's floating params,
then the next states) and autograd through the models `linnet.torch` and `linnet.jax`
load, held to the oracle's finite differences; a wrong gradient of a param is found; and
a few generated programs (`--block-grad`) agree on every backend (three under the default
"ci" Hypothesis profile, more under the others: `tests/cases/budget.py`)."""

from __future__ import annotations

import numpy as np
import pytest

from linnet.fuzz.case import Case
from linnet.fuzz import fuzz
from linnet.fuzz import autograd, execute
from linnet.fuzz.execute import Plan
from linnet.fuzz.programs import GeneratorConfig

from budget import scaled, under_ci

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

GENERATED = 3 if under_ci() else scaled(5)
"""Generated programs of `test_generated_block_losses_agree_on_every_backend`: each costs
every target's compilation of its forward pass and gradient."""

NET = """module blk

op wave(a: Tensor[3; f32]) -> f32 {
    return sum[i] sin(a[i]) * a[i]
} grad(y, dy) {
    return dy * (cos(a) * a + sin(a))
}

block Cell {
    param v: Tensor[3; f32]
    param bias: Tensor[3; f32]? = none
    state reads: Tensor[1; i64]

    pub fn term(x: Tensor[3; f32]) -> f32 {
        reads = reads + 1
        return match bias {
            some(b) => wave(b * x)
            none => sum[i] v[i] * x[i]
        }
    }
}

block Net {
    param w: Tensor[3; f32]
    buffer scale: Tensor[3; f32]
    sub cells: [Cell; 2]
    state steps: Tensor[1; i64]

    pub entry loss(x: Tensor[3; f32]) -> f32 {
        steps = steps + 1
        var total = sum[i] w[i] * scale[i] * x[i]
        static for c in cells {
            total = total + c.term(x * w)
        }
        return total
    }
}
"""


def f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def net_case() -> Case:
    """`cells.1.bias` present: inputs x, w, scale, cells.0.v, cells.0.reads, cells.1.v,
    cells.1.bias, cells.1.reads, steps."""
    x, w, scale = f32(0.5, -1.0, 2.0), f32(1.5, 0.25, -0.5), f32(1.0, 2.0, 3.0)
    v0, v1, bias = f32(1.0, -2.0, 0.5), f32(3.0, 1.0, -1.0), f32(0.75, -0.5, 1.25)
    ints = [np.array([k], np.int64) for k in (4, 7, 9)]
    return Case(NET, "loss", {}, (x, w, scale, v0, ints[0], v1, bias, ints[1], ints[2]),
                frozenset({"cells.1.bias"}))


def test_every_target_differentiates_a_block_entry_as_the_oracle_does():
    """The loss and five gradients (x, w, cells.0.v, cells.1.v, cells.1.bias: the buffer
    and the states take none) from every `--grad` export, with the next states after them,
    and from autograd through both runtimes' models, all agreeing with the oracle."""
    result = execute.run_case(net_case(), Plan(grad=True))
    assert result.findings == []
    assert result.runs == 12  # 5 forward, 5 --grad, 2 autograd
    x, w = f32(0.5, -1.0, 2.0), f32(1.5, 0.25, -0.5)
    fd = result.outputs["oracle gradient"]
    assert len(fd) == 5
    np.testing.assert_allclose(fd[2], x * w, rtol=1e-5)  # cells.0.v: its `none` arm
    assert not np.asarray(fd[3]).any()  # cells.1.v: unread where the bias is present
    for label in ("torch --grad", "jax --grad", "onnx --grad", "stablehlo --grad",
                  "interpreter --grad"):
        out = result.outputs[label]
        assert len(out) == 1 + 5 + 3, label
        assert [int(s[0]) for s in out[6:]] == [5, 8, 10], label  # each state counted once
    for label in ("torch autograd", "jax autograd"):
        out = result.outputs[label]
        assert len(out) == 6, label
        np.testing.assert_allclose(out[3], x * w, rtol=1e-5)  # cells.0.v's gradient


def test_a_block_case_splits_as_the_runtime_manifest_says():
    split = autograd.block_case(net_case(), "fuzz.linnet")
    assert split is not None and split.own_floats == [0]
    assert list(split.weights) == ["w", "scale", "cells.0.v", "cells.1.v", "cells.1.bias"]
    assert list(split.states) == ["cells.0.reads", "cells.1.reads", "steps"]
    assert split.trainable == ["w", "cells.0.v", "cells.1.v", "cells.1.bias"]
    plain = Case("module m\nentry main(x: f32) -> f32 {\n    return x * x\n}\n", "main", {},
                 (np.float32(2.0),))
    assert autograd.block_case(plain, "fuzz.linnet") is None


def test_a_wrong_gradient_of_a_param_is_a_finding(monkeypatch):
    """A runtime whose gradient of the last param (`cells.1.bias`) is off by one: found as
    a disagreement of that gradient, and of nothing else."""
    real = autograd.load_block

    def off_by_one(target, *args):
        job = real(target, *args)
        if target != "torch":
            return job

        def wrong():
            loss, grads = job()
            return loss, grads[:-1] + [grads[-1] + 1]
        return wrong
    monkeypatch.setattr(autograd, "load_block", off_by_one)
    result = execute.run_case(net_case(), Plan(grad=True))
    assert [f.key for f in result.findings] == [
        "disagree | torch autograd | compare | gradient float"]
    assert "gradient 4" in result.findings[0].detail


def test_a_wrong_next_state_of_a_grad_export_is_a_finding(monkeypatch):
    from linnet.fuzz import backends
    real = backends.loader

    def stale_state(target: str):
        def load(compiled, name):
            main = real(target)(compiled, name)
            return lambda *xs: [*main(*xs)[:-1], xs[-1]]  # `steps` not counted
        return load if target == "jax" else real(target)
    monkeypatch.setattr(backends, "loader", stale_state)
    result = execute.run_case(net_case(), Plan(targets=("jax",), grad=True))
    keys = {f.key for f in result.findings}
    assert keys == {"disagree | jax | compare | value integer",
                    "disagree | jax --grad | compare | value integer"}
    assert any("state 3" in f.detail for f in result.findings)


def test_generated_block_losses_agree_on_every_backend():
    """Generated programs (`--block-grad`, sizes up to 4), each a root block's entry whose
    loss every target differentiates with respect to its inputs and params: the forward
    pass, the `--grad` exports and both runtimes' autograd agree with the oracle."""
    config = GeneratorConfig(grad=True, block_grad=True, max_dim=4)
    report = fuzz(seed=3, count=GENERATED, config=config, grad=True, isolate=False)
    found = [f"{f.key}: {f.program}: {f.detail}" for f in report.findings]
    assert not found, "\n".join(found)
    assert report.programs == GENERATED and report.skipped == 0
    assert report.runs >= 12 * GENERATED  # each program's block entry ran its gradients
