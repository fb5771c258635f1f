"""What the corpus tests of the other backends share (generated JAX, ONNX, StableHLO).

Each of them runs every corpus entry on inputs drawn from `references.py`, through its own
backend, and hands the results to `check_backend`, which compares them with the NumPy
reference and with the PyTorch interpreter (and, on request, generated PyTorch): declared
dtype and shape, floats within the declared dtype's tolerance, integers and bools exactly.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from hypothesis import HealthCheck, settings

from tests.bodies import test_corpus_numpy as torch_corpus

refs = torch_corpus.refs

#: runs an entry: (key, inputs as `references.In`, binding of its generics) -> results
Runner = Callable[[tuple[str, str], tuple, dict[str, object]], Sequence[Any]]


def body_settings(env_var: str) -> settings:
    """Hypothesis settings for a backend's corpus test: 3 examples per entry under "ci"
    (each new binding of the generics compiles and loads the entry anew), a quarter of the
    profile's count (at least 5) under one with more; `env_var` sets the count."""
    examples = torch_corpus.examples(env_var, ci=3, floor=5, share=4)
    return settings(max_examples=examples, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def binding_key(key: tuple[str, str], values: dict[str, object]) -> tuple:
    """A cache key for an entry compiled for one binding of its generics."""
    return (*key, tuple(sorted((k, str(v)) for k, v in values.items())))


def check_backend(key: tuple[str, str], inputs: tuple, run: Runner,
                  numpy_dtype: Callable[[str], np.dtype], with_torch: bool = False) -> None:
    """Run the entry through `run` and compare each result with the reference and the
    PyTorch interpreter (and generated PyTorch when `with_torch`)."""
    reference = refs.REFERENCES[key]
    out = reference.out_types(inputs)
    expected = reference.fn(*(np.array(x.value, copy=True) for x in inputs))
    expected = expected if len(out) > 1 else (expected,)
    torch_inputs = [torch_corpus.to_torch(x) for x in inputs]
    interpreter = torch_corpus.entry_function(key, False)
    got = run(key, inputs, interpreter.binding_for(tuple(torch_inputs)))
    assert len(got) == len(out), f"{len(got)} results, expected {len(out)}"
    others = [("the interpreter", interpreter)] + (
        [("torch", torch_corpus.entry_function(key, True))] if with_torch else [])
    results = [(what, torch_corpus._structure(fn(*torch_inputs), len(out), what))
               for what, fn in others]
    for k, (g, e, dtype) in enumerate(zip(got, expected, out)):
        label = f"{key[0]}::{key[1]} result {k} ({dtype})"
        g = np.asarray(g)
        assert g.dtype == numpy_dtype(dtype), f"{label}: dtype {g.dtype}"
        assert g.shape == np.shape(e), f"{label}: shape {g.shape}, reference {np.shape(e)}"
        wanted = [("reference", np.asarray(e))] + [
            (what, torch_corpus.to_numpy(values[k])) for what, values in results]
        for what, want in wanted:
            if dtype in refs.FLOATS:
                rtol, atol = reference.tol.get(k, torch_corpus.TOLERANCE[dtype])
                close = np.isclose(g.astype(np.float64), want, rtol=rtol, atol=atol,
                                   equal_nan=True)
                assert close.all(), f"{label}: differs from {what} at {np.argwhere(~close)[:5]}"
            else:
                assert np.array_equal(g, want), f"{label}: {g} vs {what} {want}"
