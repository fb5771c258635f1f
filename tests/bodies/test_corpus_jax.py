"""Every corpus entry through generated JAX, against the NumPy reference, generated PyTorch
and the PyTorch interpreter.

The same references and input strategies as `test_corpus_numpy.py`: for each entry,
Hypothesis draws inputs, the generics are bound from them, and the entry is compiled with
`linnet jax` (numerics `exact`: op bodies), imported from a file and run on the CPU. Its
results must have the declared dtypes and shapes, match the reference within the declared
dtype's tolerance (integers and bools exactly), and agree with the generated PyTorch module
and the PyTorch interpreter to the same tolerance. Integer edge cases (`references.EDGES`) run too.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

jax = pytest.importorskip("jax")

from linnet.pipeline import compile_source  # noqa: E402

from tests.bodies import test_corpus_numpy as torch_corpus  # noqa: E402
from backends import binding_key, body_settings, check_backend  # noqa: E402

refs = torch_corpus.refs
JAX_BODIES = body_settings("LINNET_JAX_EXAMPLES")
_MODULES: dict[tuple, object] = {}


def jax_module(key: tuple[str, str], values: dict[str, object]):
    """The generated JAX module of an entry for one binding, imported from a file."""
    cache_key = binding_key(key, values)
    if cache_key not in _MODULES:
        path = torch_corpus.PATHS[key[0]]
        text = compile_source(path.read_text(), path=str(path), target="jax", entry=key[1],
                              bind=values, numerics="exact").text
        file = Path(tempfile.mkdtemp()) / f"linnet_jax_{len(_MODULES)}.py"
        file.write_text(text)
        spec = importlib.util.spec_from_file_location(file.stem, file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[cache_key] = module
    return _MODULES[cache_key]


def _jnp(dtype: str):
    """The NumPy dtype JAX uses for a Linnet dtype."""
    floats = {"f16": np.float16, "bf16": jax.numpy.bfloat16, "f32": np.float32,
              "f64": np.float64}
    return floats.get(dtype) or refs.NP_DTYPES[dtype]


def run(key: tuple[str, str], inputs: tuple, values: dict[str, object]) -> tuple:
    module = jax_module(key, values)
    with jax.enable_x64(True):  # arrays of i64, u64, f64 are 64-bit only with it on
        got = module.main(*(jax.numpy.asarray(np.array(x.value), dtype=_jnp(x.dtype))
                            for x in inputs))
    assert isinstance(got, tuple)
    return got


def check(key: tuple[str, str], inputs: tuple) -> None:
    check_backend(key, inputs, run, lambda dtype: np.dtype(_jnp(dtype)), with_torch=True)


@pytest.mark.parametrize("key", [torch_corpus._param(k) for k in torch_corpus.KEYS])
@JAX_BODIES
@given(data=st.data())
def test_entry_runs_through_jax(key: tuple[str, str], data) -> None:
    check(key, data.draw(refs.REFERENCES[key].inputs, label="inputs"))


@pytest.mark.parametrize("key, k", torch_corpus.EDGE_CASES)
def test_entry_edge_case_through_jax(key: tuple[str, str], k: int) -> None:
    check(key, refs.EDGES[key][k])
