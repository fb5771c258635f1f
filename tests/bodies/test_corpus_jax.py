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
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

jax = pytest.importorskip("jax")

from linnet.pipeline import compile_source  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import test_corpus_numpy as torch_corpus  # noqa: E402

refs = torch_corpus.refs
EXAMPLES = int(os.environ.get("LINNET_JAX_EXAMPLES", max(5, settings.default.max_examples // 4)))
JAX_BODIES = settings(max_examples=EXAMPLES, deadline=None, print_blob=True,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                             HealthCheck.filter_too_much])
_MODULES: dict[tuple, object] = {}


def jax_module(key: tuple[str, str], values: dict[str, object]):
    """The generated JAX module of an entry for one binding, imported from a file."""
    cache_key = (*key, tuple(sorted((k, str(v)) for k, v in values.items())))
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


def as_float64(x) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def check(key: tuple[str, str], inputs: tuple) -> None:
    reference = refs.REFERENCES[key]
    out = reference.out_types(inputs)
    expected = reference.fn(*(np.array(x.value, copy=True) for x in inputs))
    expected = expected if len(out) > 1 else (expected,)
    torch_inputs = [torch_corpus.to_torch(x) for x in inputs]
    values = torch_corpus.entry_function(key, True).binding_for(tuple(torch_inputs))
    module = jax_module(key, values)
    got = module.main(*(jax.numpy.asarray(np.array(x.value), dtype=_jnp(x.dtype))
                        for x in inputs))
    assert isinstance(got, tuple) and len(got) == len(out)
    backends = [torch_corpus._structure(torch_corpus.entry_function(key, compile)(*torch_inputs),
                                        len(out), what)
                for compile, what in ((True, "torch"), (False, "the interpreter"))]
    for k, (g, e, t, i, dtype) in enumerate(zip(got, expected, *backends, out)):
        label = f"{key[0]}::{key[1]} result {k} ({dtype})"
        assert str(g.dtype) == np.dtype(_jnp(dtype)).name, f"{label}: dtype {g.dtype}"
        assert g.shape == np.shape(e), f"{label}: shape {g.shape}, reference {np.shape(e)}"
        if dtype in refs.FLOATS:
            rtol, atol = reference.tol.get(k, torch_corpus.TOLERANCE[dtype])
            for what, want in (("reference", np.asarray(e)), ("torch", torch_corpus.to_numpy(t)),
                               ("the interpreter", torch_corpus.to_numpy(i))):
                close = np.isclose(as_float64(g), want, rtol=rtol, atol=atol, equal_nan=True)
                assert close.all(), f"{label}: differs from {what} at {np.argwhere(~close)[:5]}"
        else:
            assert np.array_equal(np.asarray(g), np.asarray(e)), f"{label}: {g} vs {e}"
            assert np.array_equal(np.asarray(g), torch_corpus.to_numpy(t)), f"{label} vs torch"
            assert np.array_equal(np.asarray(g), torch_corpus.to_numpy(i)), f"{label} vs interp."


def _jnp(dtype: str):
    """The NumPy dtype JAX uses for a Linnet dtype."""
    floats = {"f16": np.float16, "bf16": jax.numpy.bfloat16, "f32": np.float32,
              "f64": np.float64}
    return floats.get(dtype) or refs.NP_DTYPES[dtype]


@pytest.mark.parametrize("key", [torch_corpus._param(k) for k in torch_corpus.KEYS])
@JAX_BODIES
@given(data=st.data())
def test_entry_runs_through_jax(key: tuple[str, str], data) -> None:
    check(key, data.draw(refs.REFERENCES[key].inputs, label="inputs"))


@pytest.mark.parametrize("key, k", torch_corpus.EDGE_CASES)
def test_entry_edge_case_through_jax(key: tuple[str, str], k: int) -> None:
    check(key, refs.EDGES[key][k])
