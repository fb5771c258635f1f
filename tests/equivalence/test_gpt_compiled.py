"""The gpt example trained under `torch.compile` (`examples/gpt/train.py --compile`), in this
process: one process compiled against one eager (the script's `--check`), and the DDP and
FSDP2 wrapping paths compiled over a process group of one rank, their graphs recorded.
Every graph is whole (`fullgraph=True` makes a graph break an error) and calls the Linnet
ops as custom ops, whose kernels run (Triton's interpreter on the CPU). On the CPU the
backend is aot_eager, on CUDA inductor. The two-rank compiled DDP run is in
test_gpt_parallel.py; the GPU commands are in docs/scale.md, "Training under torch.compile".
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from kernel_cases import DEVICE, EXAMPLES
import gpt_kernels_ran  # noqa: E402

FORWARD = gpt_kernels_ran.LOSS
BACKWARD = gpt_kernels_ran.BACKWARD  # which `loss(...).backward()` runs
OPS = FORWARD | BACKWARD
# One layer, 2 rows of 8 positions: every op's kernel runs, at the least interpreter time.
SMALL = ["--steps", "3", "--layers", "1", "--batch", "2", "--length", "8",
         "--optimizer", "sgd", "--lr", "1e-3"]


def load_train() -> Any:
    """examples/gpt/train.py as a module (under a name of its own)."""
    spec = importlib.util.spec_from_file_location("gpt_train", EXAMPLES / "gpt" / "train.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


train = load_train()


def linnet_calls(graph: torch.fx.Graph) -> list[str]:
    return [str(n.target) for n in graph.nodes
            if n.op == "call_function" and str(n.target).startswith("linnet_")]


def test_single_process_compiled_matches_eager(tmp_path: Path) -> None:
    torch._dynamo.reset()
    out = tmp_path / "single.json"
    assert train.main([*SMALL, "--compile", "--check", "--json", str(out)]) == 0
    got = json.loads(out.read_text())
    backend = "inductor" if DEVICE == "cuda" else "aot_eager"
    assert got["compiled"] == {"backend": backend, "fullgraph": True, "graphs": 1,
                               "graph_breaks": 0}
    assert got["check"] is True and len(got["losses"]) == 3
    np.testing.assert_allclose(got["losses"], got["single"], rtol=1e-5)
    assert len(set(got["losses"])) == 3  # the steps moved the weights
    assert {op for op, c in got["ran"].items() if c["kernel"] > 0} == OPS
    assert all(c["body"] == 0 for c in got["ran"].values())
    assert got["steady_seconds"] == pytest.approx(np.median(got["seconds"][1:]))


def test_the_backend_named_by_compile() -> None:
    assert train.compile_backend(None, cuda=False) is None
    assert train.compile_backend("default", cuda=False) == "aot_eager"
    assert train.compile_backend("default", cuda=True) == "inductor"
    assert train.compile_backend("inductor", cuda=False) == "inductor"
    with pytest.raises(SystemExit, match="not a torch.compile backend"):
        train.compile_backend("no-such-backend", cuda=False)
    assert train.arguments(["--compile"]).compile == "default"
    assert train.arguments(["--compile", "inductor", "--steps", "2"]).compile == "inductor"
    assert train.arguments([]).compile is None


@pytest.fixture
def one_rank():
    """A process group of one rank in this process, for the wrappers: gloo on the CPU,
    nccl on CUDA."""
    import torch.distributed as dist
    backend = "nccl" if DEVICE == "cuda" else "gloo"
    dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def device() -> torch.device:
    return torch.device("cuda", 0) if DEVICE == "cuda" else torch.device("cpu")


@pytest.fixture(scope="module")
def eager_step() -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The loss of step 0's first 2 rows and the gradient of each param, from the eager
    model unwrapped: the reference of both wrappers' compiled steps, computed once."""
    args = train.arguments([*SMALL, "--mode", "single"])
    eager = train.wrapped(args, 2, device(), "single")
    tokens, targets = (t.to(device()) for t in train.batch_of(args, 0, slice(0, 2)))
    loss = eager(tokens, targets)
    loss.backward()
    return loss.detach(), [p.grad for p in eager.parameters()]


@pytest.mark.parametrize("mode", ["ddp", "fsdp2"])
def test_the_wrapped_module_compiles_to_graphs_calling_the_ops(mode: str, one_rank,
                                                                eager_step) -> None:
    """The wrapper's path of `--compile` (compiled in place after wrapping) with a backend
    that records each graph: Dynamo's graphs call the Linnet ops, and a step's loss and
    gradients are the eager model's."""
    if mode == "fsdp2":
        import torch.distributed.fsdp as fsdp
        if not hasattr(fsdp, "fully_shard"):
            pytest.skip("this torch has no torch.distributed.fsdp.fully_shard (FSDP2)")
    torch._dynamo.reset()
    graphs: list[torch.fx.Graph] = []

    def recording(gm: torch.fx.GraphModule, example_inputs: list) -> Any:
        graphs.append(gm.graph)
        return gm.forward

    args = train.arguments([*SMALL, "--mode", mode])
    module = train.wrapped(args, 2, device(), mode, recording)
    tokens, targets = (t.to(device()) for t in train.batch_of(args, 0, slice(0, 2)))
    loss = module(tokens, targets)
    loss.backward()
    want, want_grads = eager_step
    assert graphs and sum(len(linnet_calls(g)) for g in graphs) > 0
    torch.testing.assert_close(loss.detach(), want, rtol=1e-5, atol=1e-6)
    named = list(module.named_parameters())
    assert len(named) == len(want_grads)
    for (name, p), q in zip(named, want_grads):
        grad = p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad
        torch.testing.assert_close(grad, q, rtol=1e-4, atol=1e-6, msg=name)
