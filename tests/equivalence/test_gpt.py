"""`examples/gpt/gpt.linnet`, a small decoder-only transformer, against its PyTorch twin
(`examples/gpt/twin.py`): the same weights (the twin's state_dict, saved with safetensors and
read back by path), prefill logits, several decode steps with the key/value cache, and the
gradient of the loss with respect to every param. The Linnet entries run with their kernels
(`numerics="equivalent"`: Triton's interpreter on the CPU, `tests/conftest.py`) and as op
bodies only (`numerics="exact"`).

`linnet_model` is the one place that builds the Linnet model: today `examples/gpt/entries.py`
(compiled entries, weights passed in manifest order, states threaded by hand); a loader that
returns a module with the entries as methods and the states inside can replace it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.testing.backends import as_numpy

from kernel_cases import DEVICE, EXAMPLES

sys.path.insert(0, str(EXAMPLES / "gpt"))
import entries  # noqa: E402
import twin  # noqa: E402

SIZES = {"B": 2, "L": 2, "NH": 2, "D": 16, "V": 64, "S": 48}
PROMPT, STEPS = 30, 4   # the decode steps cross the first key block of 32
KERNELS = {"rms_norm_rows", "linear_tiles", "attention_from_blocks"}
LAUNCHES, _COUNT_LAUNCHES = entries.launch_counter()
"""Kernel launches by kernel name, from every generated module this file imports."""


def linnet_model(path: Path, numerics: str, target: str = "torch") -> entries.LinnetGpt:
    """The Linnet model for the weights in the safetensors file at path: entries as
    methods, states kept inside."""
    return entries.load(path, SIZES, numerics=numerics, target=target, device=DEVICE,
                        on_import=_COUNT_LAUNCHES)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> tuple[twin.Gpt, Path]:
    """The twin with random f32 weights (norm weights away from 1), in float64 (exactly the
    same values), and its saved state_dict."""
    from safetensors.torch import save_file
    torch.manual_seed(0)
    reference = twin.Gpt(**SIZES)
    with torch.no_grad():
        for name, p in reference.named_parameters():
            if name.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
    reference = reference.double()
    path = tmp_path_factory.mktemp("gpt") / "model.safetensors"
    save_file({k: v.float().contiguous() for k, v in reference.state_dict().items()}, str(path))
    return reference, path


def tokens(count: int, seed: int = 1) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, SIZES["V"], (SIZES["B"], count), generator=generator)


def close(got, want, tol: float = 1e-4) -> None:
    np.testing.assert_allclose(as_numpy(got).astype(np.float64), as_numpy(want), rtol=tol,
                               atol=tol)


def test_the_parameter_paths_are_the_twins_state_dict(model) -> None:
    reference, path = model
    gpt = linnet_model(path, "exact")
    _, manifest = gpt.entry("decode")
    params = [p.path for p in manifest.parameters if p.kind == "param"]
    assert params == list(reference.state_dict())
    states = {p.path: p.shape for p in manifest.parameters if p.kind == "state"}
    assert states["layers.1.attn.k_cache"] == (2, 2, 48, 16) and states["pos"] == (1,)


@pytest.mark.parametrize("numerics", ["exact", "equivalent"])
def test_prefill_then_decode_match_the_twin(model, numerics: str) -> None:
    """Prefill a prompt, then decode STEPS tokens one at a time with the cache; each step's
    logits against the twin's full recomputation over the whole sequence so far."""
    reference, path = model
    gpt = linnet_model(path, numerics)
    sequence = tokens(PROMPT + STEPS)
    LAUNCHES.clear()
    with torch.no_grad():
        want = reference(sequence)
    close(gpt.prefill(sequence[:, :PROMPT].to(DEVICE)), want[:, :PROMPT])
    assert as_numpy(gpt.states["pos"]).tolist() == [PROMPT]
    for t in range(PROMPT, PROMPT + STEPS):
        close(gpt.decode(sequence[:, t].to(DEVICE)), want[:, t])
    assert as_numpy(gpt.states["pos"]).tolist() == [PROMPT + STEPS]
    cache = as_numpy(gpt.states["layers.0.attn.k_cache"])
    assert not cache[:, :, PROMPT + STEPS:].any() and cache[:, :, :PROMPT + STEPS].all()
    if numerics == "exact":
        assert not LAUNCHES
    else:  # every op ran its kernel, in each of the 1 + STEPS calls
        assert set(LAUNCHES) == KERNELS
        assert LAUNCHES["attention_from_blocks"] == SIZES["L"] * (1 + STEPS)


def test_a_second_prefill_starts_again(model) -> None:
    """prefill restarts from position 0, whatever the cache held."""
    reference, path = model
    gpt = linnet_model(path, "exact")
    gpt.prefill(tokens(9, seed=2).to(DEVICE))
    sequence = tokens(PROMPT + 1, seed=3)
    gpt.prefill(sequence[:, :PROMPT].to(DEVICE))
    with torch.no_grad():
        want = reference(sequence)
    close(gpt.decode(sequence[:, PROMPT].to(DEVICE)), want[:, PROMPT])


def test_the_cached_twin_agrees_with_itself(model) -> None:
    """The twin's own decode (static cache, as benchmarks/gpt.py times it) against its full
    recomputation: the reference of the benchmark's check."""
    reference, _ = model
    sequence = tokens(PROMPT + STEPS, seed=4)
    with torch.no_grad():
        want = reference(sequence)
        close(reference.prefill(sequence[:, :PROMPT]), want[:, :PROMPT], 1e-10)
        for t in range(PROMPT, PROMPT + STEPS):
            close(reference.decode(sequence[:, t]), want[:, t], 1e-10)


def test_loss_gradients_match_autograd(model) -> None:
    """`--grad` of `loss`: the loss and the gradient of every param, against autograd on the
    twin (float64)."""
    reference, path = model
    sequence = tokens(PROMPT + 1, seed=5)
    inputs, targets = sequence[:, :-1], sequence[:, 1:]
    reference.zero_grad()
    want = reference.loss(inputs, targets)
    want.backward()
    loss, grads = linnet_model(path, "exact").loss_and_grads(inputs.to(DEVICE),
                                                             targets.to(DEVICE))
    close(loss, want.detach())
    assert set(grads) == {name for name, _ in reference.named_parameters()}
    for name, p in reference.named_parameters():
        assert p.grad is not None and p.grad.abs().max() > 0, name
        close(grads[name], p.grad, 1e-4)


def test_prefill_on_jax(model) -> None:
    pytest.importorskip("jax")
    reference, path = model
    sequence = tokens(PROMPT, seed=6)
    with torch.no_grad():
        want = reference(sequence)
    gpt = linnet_model(path, "exact", target="jax")
    close(gpt.prefill(sequence), want)
