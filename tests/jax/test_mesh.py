"""`linnet.jax` over a device mesh: kernels per shard under `shard_map` (docs/jax.md).

The checks run in a child process (`jax_mesh_checks.py`), since the number of CPU devices
is fixed when JAX is imported: on the CPU with 4 host devices
(`XLA_FLAGS=--xla_force_host_platform_device_count=4`) and Pallas's interpreter; with
`LINNET_MESH_DEVICES=gpu` (the default where torch sees two CUDA devices or more) on the
machine's GPUs, Pallas through Triton. The batch rule, `compile_source`'s `shard=` (the
generated text) and the errors of `mesh=`/`shard=`, for entries and block models, are
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
CHILD = Path(__file__).resolve().parents[1] / "helpers" / "jax_mesh_checks.py"
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
    from linnet.check.batch_rule import batch_split
    rule = batch_split(_layer_norm("layer_norm"), "layer_norm")
    assert (rule.generic, rule.split, rule.results) == ("R", (True, False, False, False), 0)


def test_batch_rule_refuses_a_result_without_the_batch_axis() -> None:
    from linnet.check.batch_rule import batch_split
    with pytest.raises(LinnetError, match="leading axis is the same generic Dim"):
        batch_split(_layer_norm("layer_norm_backward"), "layer_norm_backward")


def test_batch_rule_refuses_the_batch_generic_on_another_axis() -> None:
    from linnet.check.batch_rule import batch_split
    text = """module m
pub op gram<R: Dim>(x: Tensor[R, R; f32]) -> Tensor[R, R; f32] {
    return x * 2.0
}
"""
    with pytest.raises(LinnetError, match=r"`R` \(the leading axis of its result\) is another "
                                          r"axis of Tensor\[R, R; f32\]"):
        batch_split(_signature(text, "gram"), "gram")


def test_shard_entry_calls_the_op_on_per_shard_types() -> None:
    from linnet.check.batch_rule import batch_split, op_binding, shard_entry
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


GPT = ROOT / "examples/gpt/gpt.linnet"
GPT_SIZES = {"B": 2, "L": 1, "NH": 2, "D": 16, "V": 32, "S": 8}


@pytest.mark.parametrize("options, message", [
    ({"shard": {"rms_norm_2d": "data"}}, "mesh= and shard= go together"),
    ({"mesh": "MESH", "shard": {"rms_norm_2d": "model"}},
     "op `rms_norm_2d` names mesh axis 'model'; the mesh's axes are data"),
    ({"mesh": "MESH", "shard": {"Linear": "data"}}, "`Linear` is not an op"),  # a block
    ({"mesh": "MESH", "shard": {"rms_norm_tiles": "data"}}, "`rms_norm_tiles` is not an op"),
    # an op of the library the program does not name: linear_2d calls it
    ({"mesh": "MESH", "shard": {"linear_product_2d": "data"}},
     "`linear_product_2d` is not an op"),
    ({"mesh": "MESH", "shard": {"rms_norm_2d": ()}}, "op `rms_norm_2d` names no mesh axis"),
    ({"mesh": "MESH", "shard": ["rms_norm_2d"]}, "shard= is a dict"),
])
def test_block_model_mesh_options_are_checked_when_loading(options: dict, message: str) -> None:
    from linnet.jax import load_source
    options = {k: _mesh() if v == "MESH" else v for k, v in options.items()}
    with pytest.raises(LinnetError, match=re.escape(message)):
        load_source(GPT, generics=GPT_SIZES, **options)


def test_block_model_takes_the_mesh_for_each_entry() -> None:
    from linnet.jax import load_source
    from linnet.jax.mesh import MeshBlockEntryFunction
    model = load_source(GPT, generics=GPT_SIZES, mesh=_mesh(),
                        shard={"rms_norm_2d": "data", "attention_causal": "data"})
    # attention_causal has no kernel: attention_causal_lse's, which it calls, runs per shard
    for entry in model.entries:
        fn = model[entry].function
        assert isinstance(fn, MeshBlockEntryFunction)
        assert set(fn.ops) == {"rms_norm_2d", "attention_causal_lse"}
        assert fn.ops["attention_causal_lse"].rule.split == (True, True, True, False)
        assert fn.ops["attention_causal_lse"].through == "attention_causal"
        assert fn.ops["rms_norm_2d"].through == ""
    # B * T = 8 rows; the embedding, its backward and the linear layers are not named
    text = model.loss.source(T=4)
    named = re.findall(r"# op (\w+), named in shard=( through\n\s*# attention_causal)?", text)
    assert [(op, bool(through)) for op, through in named] == [
        ("rms_norm_2d__R8_H32_Tf32", False),
        ("attention_causal_lse__B2_Hk2_G1_Q4_K4_D16_Tf32", True)]
    funcs = {op.split("__")[0]: f for f, op in
             re.findall(r"def (f\d+)_op_run\(.*\n\s*# op (\w+)", text)}
    slots = ", ".join(f'"{funcs[op]}_op": None' for op in ("rms_norm_2d", "attention_causal_lse"))
    assert f"_ln_per_shard = {{{slots}}}" in text
    for op in ("embedding_2d", "embedding_backward", "linear_product_2d"):
        f = funcs[op]
        run = text[text.index(f"def {f}_op_run("):text.index(f"def {f}_op_launch(")]
        assert f"# op {op}__" in run and "_ln_mesh" not in run


# ------------------------------------------------------- compile_source's shard= option

def _jax_text(path: str, entry: str, **options) -> str:
    from linnet.pipeline import compile_source
    return compile_source(path=str(ROOT / path), entry=entry, target="jax", **options).text


def test_shard_option_gives_the_named_op_a_per_shard_slot_and_shard_map() -> None:
    text = _jax_text("examples/layer_norm.linnet", "layer_norm_any", bind={"R": 8, "C": 16},
                     shard={"layer_norm": ("data", "model")})
    assert '_ln_per_shard = {"f1_op": None}' in text
    assert "def _ln_install(mesh, launches):" in text
    run = text[text.index("def f1_op_run("):text.index("def f1_op_launch(")]
    said = " ".join(line.strip()[2:] for line in run.splitlines()
                    if line.strip().startswith("# "))
    assert said.startswith("op layer_norm__R8_C16, named in shard=: its batch axis R splits "
                           "over mesh axes data, model.")
    assert "(v0 and the results split by rows, the other parameters whole on every device)" \
        in said
    assert ("return _ln_shard_map(_ln_per_shard[\"f1_op\"], (_P(('data', 'model')), _P(), "
            "_P(), _P()), _P(('data', 'model')))(v0, v1, v2, v3)") in run
    assert "_ln_ran_f1_op[0] += 1" in run and "return f1_op_body(v0, v1, v2, v3)" in run


def test_shard_option_leaves_ops_without_a_kernel_as_they_are() -> None:
    plain = _jax_text("examples/softmax.linnet", "main", numerics="exact")
    assert _jax_text("examples/softmax.linnet", "main", numerics="exact",
                     shard={"softmax": "data"}) == plain
    assert "_ln_per_shard" not in plain


def test_shard_option_prints_other_ops_as_without_it() -> None:
    plain = _jax_text("examples/layer_norm.linnet", "layer_norm_any", bind={"R": 8, "C": 16})
    sharded = _jax_text("examples/layer_norm.linnet", "layer_norm_any",
                        bind={"R": 8, "C": 16}, shard={"layer_norm": "data"})
    kept = [line for line in plain.splitlines() if line not in sharded.splitlines()]
    assert kept == ["    # op layer_norm__R8_C16: its kernel where Pallas runs, else its body "
                    "(counted in _ln_ran per trace)"]


def test_a_generated_module_without_a_mesh_runs_as_without_shard() -> None:
    import numpy as np
    from linnet.torch.runtime import import_generated
    text = _jax_text("examples/softmax.linnet", "softmax_any", bind={"R": 4, "C": 8},
                     shard={"softmax": "data"})
    module = import_generated(text, "softmax_sharded_unmeshed", "jax")
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    (y,) = module.main(x)
    assert module._ln_mesh is None
    np.testing.assert_allclose(np.asarray(y), np.asarray(jax.nn.softmax(x, axis=1)),
                               rtol=1e-6, atol=1e-6)
    assert sum(module._ln_ran["f1_op"]) == 1  # kernel (interpreter) or body, as unsharded
    with pytest.raises(KeyError, match="no sharded op function 'f9_op'"):
        module._ln_install(_mesh(), {"f9_op": None})


@pytest.mark.parametrize("options, error, message", [
    ({"shard": {"nothing": "data"}}, "UsageError", "`nothing` is not an op of"),
    ({"shard": {"row_softmax": "data"}}, "UsageError", "`row_softmax` is not an op of"),
    ({"shard": {"softmax": "data"}, "target": "torch"}, "UsageError",
     "shard= is for the jax target"),
])
def test_shard_option_errors(options: dict, error: str, message: str) -> None:
    import linnet.errors
    from linnet.pipeline import compile_source
    with pytest.raises(getattr(linnet.errors, error), match=re.escape(message)):
        compile_source(path=str(ROOT / "examples/softmax.linnet"), entry="main",
                       **{"target": "jax", **options})


def test_shard_option_refuses_an_op_without_a_batch_axis() -> None:
    from linnet.pipeline import compile_source
    with pytest.raises(LinnetError, match="leading axis is the same generic Dim"):
        compile_source(path=str(ROOT / "examples/layer_norm.linnet"), entry="main",
                       target="jax", shard={"layer_norm_backward": "data"})


# ------------------------------------------- shard= of an op without a kernel of its own

#: `sharpened` has no kernel: its body runs softmax's through a fn. `spread` has none
#: either, and calls column_stats, whose results lead with the columns (no batch axis).
WRAPPED = """module wrapped
use examples.softmax::{softmax}
use examples.column_stats::{column_stats}

fn sharper<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] {
    return softmax(x * 2.0)
}

pub op sharpened<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] {
    return sharper(x)
}

pub op spread<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[C; f32] {
    let (s, m) = column_stats(x)
    return s
}

entry main(x: Tensor[8, 16; f32]) -> Tensor[8, 16; f32] {
    return sharpened(x)
}
"""


def _wrapped(**options):
    from linnet.pipeline import compile_source
    return compile_source(WRAPPED, path=str(ROOT / "wrapped.linnet"), entry="main",
                          target="jax", **options)


def test_shard_of_an_op_without_a_kernel_splits_the_ops_its_body_calls() -> None:
    compiled = _wrapped(shard={"sharpened": "data"})
    shard = compiled.result.stages[-2].ir.state.shard
    assert [str(s) for s in shard] == [
        "softmax over data (batch axis R), named through sharpened"]
    assert shard[0].module == ("examples", "softmax")
    text = compiled.text
    assert re.findall(r"# op (\w+), named in shard= through\s+(?:# )?sharpened:", text) == \
        ["softmax__R8_C16"]
    assert text.count("named in shard=") == 1  # sharpened itself has no run of a kernel
    assert '_ln_per_shard = {"' in text


def test_shard_of_an_op_without_a_kernel_needs_a_batch_axis_in_the_ops_it_calls() -> None:
    with pytest.raises(LinnetError, match=re.escape(
            "(`spread` has no kernel of its own: its body calls `column_stats`, whose "
            "kernel would run per shard)")):
        _wrapped(shard={"spread": "data"})


def test_shard_refuses_two_names_that_split_one_kernel_over_different_axes() -> None:
    from linnet.errors import UsageError
    with pytest.raises(UsageError, match=re.escape(
            "shard: `sharpened` and `softmax` split the kernel of `softmax` over different "
            "mesh axes (data; model)")):
        _wrapped(shard={"sharpened": "data", "softmax": "model"})
    assert len(_wrapped(shard={"sharpened": "data", "softmax": "data"})
               .result.stages[-2].ir.state.shard) == 1
