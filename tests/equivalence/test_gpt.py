"""`examples/gpt/gpt.linnet`, a small decoder-only transformer, loaded with `linnet.torch.load`
against its PyTorch twin (`examples/gpt/twin.py`): the twin's random weights saved with
safetensors and loaded by path, prefill logits, several decode steps with the key/value cache
(kept in the module's buffers), and a training step's gradient of every param through
autograd. The Linnet model runs with its kernels (`numerics="equivalent"`: Triton's
interpreter on the CPU, `tests/conftest.py`) and as op bodies only (`numerics="exact"`);
`ran()` of each entry says which ran. JAX runs prefill, a decode step and `jax.grad` of the
loss through `linnet.jax.load_source`.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.fuzz.backends import as_numpy
from linnet.torch import load

from kernel_cases import DEVICE, EXAMPLES
import gpt_kernels_ran  # noqa: E402

sys.path.insert(0, str(EXAMPLES / "gpt"))
import twin  # noqa: E402

GPT = EXAMPLES / "gpt" / "gpt.linnet"
SIZES = {"B": 2, "L": 2, "NH": 2, "D": 16, "V": 64, "S": 48}
PROMPT, STEPS = 30, 4   # the decode steps cross the first key block of 32
# The ops with a kernel that the entries call: the library's forms over rows (std.nn) and
# gpt_ops' decode attention (attention_causal's kernel is attention_causal_lse's, which it
# calls). ran() lists besides them the ops their grad clauses and bodies call
# (embedding_backward, linear_input_grad, softmax_2d, ...), which a forward pass runs
# neither as kernel nor as body.
PREFILL = {"rms_norm_2d", "linear_product_2d", "attention_causal_lse", "embedding_2d"}
DECODE = {"rms_norm_2d", "linear_product_2d", "attention_from", "embedding_2d"}
LOSS = gpt_kernels_ran.LOSS
BACKWARD = gpt_kernels_ran.BACKWARD  # which `loss(...).backward()` runs


def linnet_model(path: Path, numerics: str):
    """The Linnet model (a `torch.nn.Module`) for the weights in the safetensors file."""
    return load(GPT, generics=SIZES, weights=path, numerics=numerics, device=DEVICE)


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


@pytest.fixture(scope="module")
def exact_gpt(model):
    """One Linnet model of op bodies only, shared by the tests that run its prefill and
    decode: each binding (prefill of a prompt length, decode) is compiled once. Each test
    starts with `prefill`, which restarts the position and rewrites the whole cache (zeros
    past the prompt), so no test sees another's state."""
    return linnet_model(model[1], "exact")


def tokens(count: int, seed: int = 1) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, SIZES["V"], (SIZES["B"], count), generator=generator)


def close(got, want, tol: float = 1e-4) -> None:
    np.testing.assert_allclose(as_numpy(got).astype(np.float64), as_numpy(want), rtol=tol,
                               atol=tol)


def ran_by_op(*entries) -> dict[str, Counter]:
    """`ran()` of the entries summed per op (over its bindings): {op: {kernel, body}}."""
    found: dict[str, Counter] = {}
    for entry in entries:
        for instance, counts in entry.ran().items():
            found.setdefault(instance.split("__")[0], Counter()).update(counts)
    return found


def test_the_parameter_paths_are_the_twins_state_dict(model) -> None:
    reference, path = model
    gpt = linnet_model(path, "exact")
    assert list(gpt.state_dict()) == list(reference.state_dict())
    assert [n for n, _ in gpt.named_parameters()] == [n for n, _ in reference.named_parameters()]
    buffers, twins = dict(gpt.named_buffers()), dict(reference.named_buffers())
    assert set(buffers) == set(twins)  # the caches and pos: states, in no state_dict
    assert buffers["layers.1.attn.k_cache"].shape == (2, 2, 48, 16)
    assert buffers["pos"].dtype == torch.int64 and buffers["pos"].tolist() == [0]
    states = {p.path for p in gpt.manifest.parameters if p.kind == "state"}
    assert states == set(twins)


@pytest.mark.parametrize("numerics", ["exact", "equivalent"])
def test_prefill_then_decode_match_the_twin(model, numerics: str, request) -> None:
    """Prefill a prompt, then decode STEPS tokens one at a time with the cache; each step's
    logits against the twin's full recomputation over the whole sequence so far."""
    reference, path = model
    gpt = (request.getfixturevalue("exact_gpt") if numerics == "exact"
           else linnet_model(path, numerics))
    sequence = tokens(PROMPT + STEPS)
    with torch.no_grad():
        want = reference(sequence)
        close(gpt.prefill(sequence[:, :PROMPT].to(DEVICE)), want[:, :PROMPT])
        assert gpt.pos.tolist() == [PROMPT]
        for t in range(PROMPT, PROMPT + STEPS):
            close(gpt.decode(sequence[:, t].to(DEVICE)), want[:, t])
    buffers = dict(gpt.named_buffers())
    assert buffers["pos"].tolist() == [PROMPT + STEPS]
    cache = as_numpy(buffers["layers.0.attn.k_cache"])
    assert not cache[:, :, PROMPT + STEPS:].any() and cache[:, :, :PROMPT + STEPS].all()
    prefill, decode = ran_by_op(gpt.prefill), ran_by_op(gpt.decode)
    if numerics == "exact":  # no op has a kernel in the binding: none is listed
        assert prefill == {} and decode == {}
        return
    assert all(c["body"] == 0 for ran in (prefill, decode) for c in ran.values())
    assert {op for op, c in prefill.items() if c["kernel"] > 0} == PREFILL
    assert {op for op, c in decode.items() if c["kernel"] > 0} == DECODE
    assert prefill["embedding_backward"] == decode["embedding_backward"] == {"kernel": 0,
                                                                             "body": 0}
    L = SIZES["L"]  # every layer's attention ran a kernel: the causal one, then the decode's
    assert prefill["attention_causal_lse"]["kernel"] == L
    assert decode["attention_from"]["kernel"] == L * STEPS
    assert prefill["rms_norm_2d"]["kernel"] == 2 * L + 1
    # one gather a call; the linear layers: 6 a layer and the tied head
    assert prefill["embedding_2d"]["kernel"] == 1 and decode["embedding_2d"]["kernel"] == STEPS
    assert prefill["linear_product_2d"]["kernel"] == 6 * L + 1


def test_a_second_prefill_starts_again(model, exact_gpt) -> None:
    """prefill restarts from position 0, whatever the cache held."""
    reference, gpt = model[0], exact_gpt
    sequence = tokens(PROMPT + 1, seed=3)
    with torch.no_grad():
        gpt.prefill(tokens(9, seed=2).to(DEVICE))
        gpt.prefill(sequence[:, :PROMPT].to(DEVICE))
        want = reference(sequence)
        close(gpt.decode(sequence[:, PROMPT].to(DEVICE)), want[:, PROMPT])


def test_decode_restarts_where_pos_is_set(model, exact_gpt) -> None:
    """Writing the `pos` buffer in place (as benchmarks/gpt.py does between rounds) makes
    the next decode step run at that position, over the cache as it is."""
    reference, gpt = model[0], exact_gpt
    sequence = tokens(PROMPT + 2, seed=7)
    with torch.no_grad():
        want = reference(sequence)
        gpt.prefill(sequence[:, :PROMPT].to(DEVICE))
        first = gpt.decode(sequence[:, PROMPT].to(DEVICE))
        gpt.decode(sequence[:, PROMPT + 1].to(DEVICE))
        gpt.pos.fill_(PROMPT)
        again = gpt.decode(sequence[:, PROMPT].to(DEVICE))
    close(again, want[:, PROMPT])
    assert torch.equal(again, first) and gpt.pos.tolist() == [PROMPT + 1]


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


def twin_loss_and_grads(reference: twin.Gpt, inputs: torch.Tensor, targets: torch.Tensor
                        ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The twin's loss (float64) and autograd's gradient of every param, by name."""
    reference.zero_grad()
    loss = reference.loss(inputs, targets)
    loss.backward()
    grads = {name: p.grad.clone() for name, p in reference.named_parameters()}
    assert all(g.abs().max() > 0 for g in grads.values())
    return loss.detach(), grads


def loss_case(seed: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    sequence = tokens(PROMPT + 1, seed=seed)
    return sequence[:, :-1], sequence[:, 1:]


@pytest.mark.parametrize("numerics", ["exact", "equivalent"])
def test_a_training_steps_gradients_match_autograd(model, numerics: str) -> None:
    """`model.loss(...).backward()`: the loss and every `nn.Parameter`'s gradient against
    autograd on the twin; with kernels, each op's autograd function runs its kernel forward
    and its `grad` clause or body backward."""
    reference, path = model
    inputs, targets = loss_case()
    assert len(set(inputs.flatten().tolist())) < inputs.numel()  # repeated ids: rows added
    want, grads = twin_loss_and_grads(reference, inputs, targets)
    gpt = linnet_model(path, numerics)
    loss = gpt.loss(inputs.to(DEVICE), targets.to(DEVICE))
    loss.backward()
    close(loss.detach(), want)
    assert {name for name, _ in gpt.named_parameters()} == set(grads)
    assert "embed" in grads  # its gradient: the embedding's scatter-add plus the tied head's
    for name, p in gpt.named_parameters():
        assert p.grad is not None, name
        close(p.grad, grads[name], 1e-4)
    ran = ran_by_op(gpt.loss)
    if numerics == "equivalent":
        assert all(c["body"] == 0 for c in ran.values())
        assert {op for op, c in ran.items() if c["kernel"] > 0} == LOSS | BACKWARD
        assert ran["embedding_2d"]["kernel"] == ran["embedding_backward"]["kernel"] == 1
        # the tied head and the loss in chunks of the vocabulary: one chunk at V = 64
        assert ran["linear_token_log_probs_stats"]["kernel"] == 1
        assert ran["linear_product_2d"]["kernel"] == 6 * SIZES["L"]
    else:
        assert ran == {}


def test_the_compiled_gradient_of_loss_matches_autograd(model) -> None:
    """`--grad` of `loss` (Linnet's own differentiation of the whole model, not autograd):
    the compiled entry takes the loaded model's tensors in manifest order and gives the loss
    and the gradient of every param."""
    from linnet.pipeline import compile_source
    from linnet.torch.runtime import import_generated
    reference, path = model
    inputs, targets = loss_case(seed=6)
    want, grads = twin_loss_and_grads(reference, inputs, targets)
    gpt = linnet_model(path, "exact")
    compiled = compile_source(GPT.read_text(), path=str(GPT), entry="loss", target="torch",
                              bind={**SIZES, "T": PROMPT}, numerics="exact", grad=True)
    main = import_generated(compiled.text, "gpt_loss_grad", "torch").main
    params = compiled.parameters.inputs
    with torch.no_grad():
        loss, *got = main(inputs.to(DEVICE), targets.to(DEVICE),
                          *(gpt.tensor(p) for p in params))
    close(loss, want)
    trained = [p.path for p in params if p.kind == "param"]
    assert trained == list(grads) and len(got) == len(trained)
    for name, g in zip(trained, got):
        close(g, grads[name], 1e-4)


def test_prefill_decode_and_grad_on_jax(model) -> None:
    """`linnet.jax.load_source`: prefill and a decode step with the state threaded by the
    caller, and `jax.grad` of the loss entry with respect to the params."""
    jax = pytest.importorskip("jax")
    from linnet.jax import load_source
    reference, path = model
    gpt = load_source(GPT, generics=SIZES, weights=path, numerics="exact")
    sequence = tokens(PROMPT + 1, seed=8)
    with torch.no_grad():
        want = reference(sequence)
    params, state = gpt.parameters, gpt.initial_state()
    logits, state = gpt.prefill(params, state, sequence[:, :PROMPT].numpy())
    close(logits, want[:, :PROMPT])
    assert as_numpy(state["pos"]).tolist() == [PROMPT]
    logits, state = gpt.decode(params, state, sequence[:, PROMPT].numpy())
    close(logits, want[:, PROMPT])
    assert as_numpy(state["pos"]).tolist() == [PROMPT + 1]
    inputs, targets = loss_case()
    want_loss, grads = twin_loss_and_grads(reference, inputs, targets)
    loss, got = jax.value_and_grad(
        lambda p: gpt.loss(p, state, inputs.numpy(), targets.numpy())[0])(params)
    close(loss, want_loss)
    assert set(got) == set(grads)
    for name, g in grads.items():
        close(got[name], g, 1e-4)
