"""`linnet.jax` over a device mesh: kernels per shard under `shard_map` (docs/jax.md).

The checks run in a child process (`jax_mesh_checks.py`), since the number of CPU devices
is fixed when JAX is imported: on the CPU with 4 host devices
(`XLA_FLAGS=--xla_force_host_platform_device_count=4`) and Pallas's interpreter; with
`LINNET_MESH_DEVICES=gpu` (the default where torch sees two CUDA devices or more) on the
machine's GPUs, Pallas through Triton. The batch rule and the errors of `mesh=`/`shard=` are
checked here, in process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from linnet.errors import LinnetError
from linnet.testing.child_env import child_env

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("jax_mesh_checks.py")
CHECKS = re.findall(r"^def check_(\w+)\(", CHILD.read_text(), re.M)

jax = pytest.importorskip("jax")


def _mode() -> str:
    """"gpu" or "cpu": `LINNET_MESH_DEVICES`, else gpu where torch sees 2 CUDA devices."""
    given = os.environ.get("LINNET_MESH_DEVICES")
    if given:
        return given
    try:
        import torch
        return "gpu" if torch.cuda.device_count() >= 2 else "cpu"
    except ImportError:
        return "cpu"


@pytest.fixture(scope="module")
def results() -> dict[str, str]:
    """The child's result per check (its devices under "devices")."""
    if _mode() == "gpu":
        # memory on demand: this process may hold its share of the GPUs already
        env = child_env(ROOT, drop=("LINNET_PALLAS_INTERPRET", "XLA_FLAGS", "JAX_PLATFORMS"),
                        XLA_PYTHON_CLIENT_PREALLOCATE="false")
    else:
        env = child_env(ROOT, XLA_FLAGS="--xla_force_host_platform_device_count=4",
                        JAX_PLATFORMS="cpu", LINNET_PALLAS_INTERPRET="1")
    done = subprocess.run([sys.executable, str(CHILD)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULTS ")]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULTS "):])


def test_the_checks_ran_on_the_devices_asked_for(results: dict[str, str]) -> None:
    count, backend = results["devices"].split()
    if _mode() == "gpu":
        assert backend == "gpu" and int(count) >= 2
    else:
        assert (count, backend) == ("4", "cpu")
    assert sorted(k for k in results if k != "devices") == sorted(CHECKS)


@pytest.mark.parametrize("check", CHECKS)
def test_over_a_mesh(results: dict[str, str], check: str) -> None:
    assert results[check] == "ok", results[check]


# ---------------------------------------------------------------- the rule and the errors

def _signature(text: str, op: str):
    from linnet.torch.loader import checked
    return checked(text, "<mesh>.linnet").root.signatures[op]


def _layer_norm(op: str):
    return _signature((ROOT / "examples/layer_norm.linnet").read_text(), op)


def test_batch_rule_splits_the_leading_generic_of_the_results() -> None:
    from linnet.jax.batch_rule import batch_split
    rule = batch_split(_layer_norm("layer_norm"), "layer_norm")
    assert (rule.generic, rule.split, rule.results) == ("R", (True, False, False, False), 0)


def test_batch_rule_refuses_a_result_without_the_batch_axis() -> None:
    from linnet.jax.batch_rule import batch_split
    with pytest.raises(LinnetError, match="leading axis is the same generic Dim"):
        batch_split(_layer_norm("layer_norm_backward"), "layer_norm_backward")


def test_batch_rule_refuses_the_batch_generic_on_another_axis() -> None:
    from linnet.jax.batch_rule import batch_split
    text = """module m
pub op gram<R: Dim>(x: Tensor[R, R; f32]) -> Tensor[R, R; f32] {
    return x * 2.0
}
"""
    with pytest.raises(LinnetError, match=r"`R` \(the leading axis of its result\) is another "
                                          r"axis of Tensor\[R, R; f32\]"):
        batch_split(_signature(text, "gram"), "gram")


def test_shard_entry_calls_the_op_on_per_shard_types() -> None:
    from linnet.jax.batch_rule import batch_split, op_binding, shard_entry
    sig = _layer_norm("layer_norm")
    b = op_binding(sig, [((8, 768), "f32"), ((768,), "f32"), ((768,), "f32"), ((), "f32")])
    text = shard_entry(sig, batch_split(sig, "layer_norm"), b, 4, "per_shard")
    assert text.strip() == (
        "entry per_shard(p0: Tensor[2, 768; f32], p1: Tensor[768; f32], p2: Tensor[768; f32], "
        "p3: f32) -> Tensor[2, 768; f32] {\n    return layer_norm(p0, p1, p2, p3)\n}")


def _mesh():
    import numpy as np
    from jax.sharding import Mesh
    return Mesh(np.array(jax.devices()[:1]), ("data",))


@pytest.mark.parametrize("options, message", [
    ({"shard": {"softmax": "data"}}, "mesh= and shard= go together"),
    ({"mesh": "MESH"}, "mesh= and shard= go together"),
    ({"mesh": "MESH", "shard": {"softmax": "model"}},
     "op `softmax` names mesh axis 'model'; the mesh's axes are data"),
    ({"mesh": "MESH", "shard": {"row_softmax": "data"}}, "`row_softmax` is not an op"),
    ({"mesh": "MESH", "shard": {"nothing": "data"}}, "`nothing` is not an op"),
])
def test_mesh_options_are_checked_when_loading(options: dict, message: str) -> None:
    from linnet.jax import load_function
    options = {k: _mesh() if v == "MESH" else v for k, v in options.items()}
    with pytest.raises(LinnetError, match=re.escape(message)):
        load_function(str(ROOT / "examples/softmax.linnet"), "softmax_any", **options)


def test_load_source_takes_the_mesh_for_an_entry_only() -> None:
    from linnet.jax import load_source
    with pytest.raises(LinnetError, match="mesh= and shard= are for an entry"):
        load_source(str(ROOT / "examples/softmax.linnet"), mesh=_mesh(), shard={"softmax": "data"})
