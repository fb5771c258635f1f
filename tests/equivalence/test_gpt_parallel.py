"""The gpt example trained data-parallel (`examples/gpt/train.py`, `train_jax.py`), each in a
subprocess: `torchrun` with 2 ranks on the CPU (gloo) under DDP, DDP compiled (`--compile`:
each rank's loss module under `torch.compile`) and FSDP2, the ops' kernels running in
Triton's interpreter, then the JAX step with the batch split over 2 host devices, the ops'
kernels running per shard in Pallas's interpreter. The DDP run's `--check` trains one eager
process (one device) over the same global batches; every run's losses are compared here,
from the runs' JSON, with that one process's (the same weights, batches and SGD updates), so
one reference serves all four runs. Small sizes (one layer, a global batch of 2 rows of 8
positions: a row per rank), 2 steps, on the CPU on any machine: the GPU runs are the
commands of docs/scale.md, "Training across devices" and "Training under torch.compile"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from linnet.testing.child_env import child_env

from kernel_cases import EXAMPLES, ROOT
import gpt_kernels_ran  # noqa: E402

TRAIN = EXAMPLES / "gpt" / "train.py"
STEPS = 2
# One layer, a row of 8 positions per rank: the smallest model that runs every op's kernel
# (the training step's cost in Triton's and Pallas's interpreters grows with each).
COMMON = ["--steps", str(STEPS), "--layers", "1", "--batch", "2", "--length", "8",
          "--optimizer", "sgd", "--lr", "1e-3"]
FORWARD = gpt_kernels_ran.LOSS
BACKWARD = gpt_kernels_ran.BACKWARD  # which `loss(...).backward()` runs
OPS = FORWARD | BACKWARD
# The ops train_jax.py splits over the mesh by rows: the forward ops but linear_product_2d
# and linear_token_log_probs_stats, which the library calls inside linear_2d and
# linear_token_log_probs, ops train_jax.py does not name (attention_causal_lse's kernel is
# split through attention_causal, which it does name).
SHARDED = FORWARD - {"linear_product_2d", "linear_token_log_probs_stats"}


def run(command: list[str], out: Path, **env: str) -> dict[str, Any]:
    """Run a training script with `--json out`; its JSON, after it exits 0."""
    done = subprocess.run([*command, "--json", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=240, env=child_env(ROOT, **env))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text())


def torchrun(mode: str, out: Path, *options: str) -> dict[str, Any]:
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc_per_node", "2"]
    return run([*launcher, str(TRAIN), "--mode", mode, "--device", "cpu", *COMMON, *options],
               out)


@pytest.fixture(scope="module")
def ddp(tmp_path_factory) -> dict[str, Any]:
    """The DDP run, with `--check`: its "single" losses are one eager process's."""
    got = torchrun("ddp", tmp_path_factory.mktemp("ddp") / "ddp.json", "--check")
    assert got["check"] is True and len(got["single"]) == STEPS
    return got


def assert_matches_one_process(got: dict[str, Any], single: list[float]) -> None:
    """The ranks' mean loss of each step is the single process's over the global batch
    (`single`), and every op with a kernel ran it (none its body) on rank 0."""
    assert got["world"] == 2 and got["device"] == "cpu" and len(got["losses"]) == STEPS
    np.testing.assert_allclose(got["losses"], single, rtol=1e-5)
    assert len(set(got["losses"])) == STEPS  # the steps moved the weights: not one loss again
    assert_kernels_ran(got["ran"])


def assert_kernels_ran(ran: dict[str, dict[str, int]]) -> None:
    """Every op of OPS ran its kernel, and no op its body."""
    assert {op for op, c in ran.items() if c["kernel"] > 0} == OPS
    assert all(c["body"] == 0 for c in ran.values())


def test_ddp_on_two_ranks_matches_one_process(ddp) -> None:
    assert_matches_one_process(ddp, ddp["single"])
    assert ddp["sharded"] == 0 and ddp["params"] == 10  # replicated: 1 layer * 8 + 2


def test_ddp_compiled_on_two_ranks_matches_one_eager_process(ddp, tmp_path) -> None:
    """`--compile`: each rank's loss module compiled (aot_eager, fullgraph) after DDP wraps
    it, one graph and no break; the losses are one eager process's over the global batch."""
    got = torchrun("ddp", tmp_path / "ddp_compiled.json", "--compile")
    assert got["compiled"] == {"backend": "aot_eager", "fullgraph": True, "graphs": 1,
                               "graph_breaks": 0}
    assert_matches_one_process(got, ddp["single"])


def test_fsdp2_on_two_ranks_matches_one_process(ddp, tmp_path) -> None:
    import torch.distributed.fsdp as fsdp
    if not hasattr(fsdp, "fully_shard"):
        pytest.skip("this torch has no torch.distributed.fsdp.fully_shard (FSDP2)")
    got = torchrun("fsdp2", tmp_path / "fsdp2.json")
    assert_matches_one_process(got, ddp["single"])
    assert got["sharded"] == got["params"] == 10  # every param a DTensor, split over ranks


def halved(instance: str) -> str:
    """An op instance's name with its leading generic (the batch axis) halved:
    `rms_norm_2d__R64_H32_Tf32` -> `rms_norm_2d__R32_H32_Tf32`."""
    op, generics = instance.split("__")
    first, *rest = generics.split("_")
    name = first.rstrip("0123456789")
    return f"{op}__{'_'.join([f'{name}{int(first[len(name):]) // 2}', *rest])}"


def test_jax_split_over_two_devices_matches_one_device_and_torch(ddp, tmp_path) -> None:
    """The batch split over a ("data",) mesh of 2 CPU devices, params replicated, each op's
    kernel run per shard (Pallas's interpreter): the same losses as one (torch) process over
    the whole batch, and as torch's DDP run, with the same SGD steps."""
    pytest.importorskip("jax")
    got = run([sys.executable, str(EXAMPLES / "gpt" / "train_jax.py"), "--devices", "2",
               *(a for a in COMMON if a not in ("--optimizer", "sgd"))],
              tmp_path / "jax.json", JAX_PLATFORMS="cpu", LINNET_PALLAS_INTERPRET="1",
              XLA_FLAGS="--xla_force_host_platform_device_count=2")
    assert got["devices"] == 2 and got["input_sharding"] == ["data"]
    assert got["params_replicated"]
    assert got["numerics"] == "equivalent"
    assert_kernels_ran(got["ran"])
    # every instance of the named ops ran the kernel of its instance for a shard's rows
    assert {i.split("__")[0] for i in got["per_shard"]} == SHARDED
    assert all(per == halved(full) for full, per in got["per_shard"].items()), got["per_shard"]
    np.testing.assert_allclose(got["losses"], ddp["single"], rtol=1e-5)
    np.testing.assert_allclose(got["losses"], ddp["losses"], rtol=1e-5)
