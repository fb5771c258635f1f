"""Every corpus entry exported as StableHLO, run by XLA, against the NumPy reference and
the PyTorch interpreter.

The same references and input strategies as `test_corpus_numpy.py` (and
`test_corpus_jax.py`): for each entry, Hypothesis draws inputs, the generics are bound from
them, and the entry is compiled with `linnet stablehlo` (numerics `exact`), then parsed,
verified, compiled and run on the CPU by `linnet.fuzz.stablehlo_run` (once per binding).
Its results must have the declared dtypes and shapes, match the reference within the
declared dtype's tolerance (integers and bools exactly), and agree with the PyTorch
interpreter to the same tolerance. Integer edge cases (`references.EDGES`) run too.
`LINNET_STABLEHLO_EXAMPLES` sets the number of examples per entry.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("jax")
ml_dtypes = pytest.importorskip("ml_dtypes")

from linnet.pipeline import compile_source  # noqa: E402
from linnet.fuzz.stablehlo_run import StableHLOFunction, load_stablehlo  # noqa: E402

from tests.bodies import test_corpus_numpy as torch_corpus  # noqa: E402
from backends import binding_key, body_settings, check_backend  # noqa: E402

refs = torch_corpus.refs
STABLEHLO_BODIES = body_settings("LINNET_STABLEHLO_EXAMPLES")

#: Entries that cannot be exported, with the reason (none today).
SKIP: dict[tuple[str, str], str] = {}

_FUNCTIONS: dict[tuple, StableHLOFunction] = {}


def stablehlo_function(key: tuple[str, str], values: dict[str, object]) -> StableHLOFunction:
    """The compiled StableHLO export of an entry for one binding."""
    cache_key = binding_key(key, values)
    if cache_key not in _FUNCTIONS:
        path = torch_corpus.PATHS[key[0]]
        text = compile_source(path.read_text(), path=str(path), target="stablehlo",
                              entry=key[1], bind=values, numerics="exact").text
        _FUNCTIONS[cache_key] = load_stablehlo(text)
    return _FUNCTIONS[cache_key]


def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype XLA's results have for a Linnet dtype."""
    floats = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
              "f64": np.float64}
    return np.dtype(floats.get(dtype) or refs.NP_DTYPES[dtype])


def run(key: tuple[str, str], inputs: tuple, values: dict[str, object]) -> tuple:
    return stablehlo_function(key, values)(*(np.array(x.value) for x in inputs))


def check(key: tuple[str, str], inputs: tuple) -> None:
    check_backend(key, inputs, run, numpy_dtype)


def _param(key: tuple[str, str]):
    marks = [pytest.mark.skip(reason=SKIP[key])] if key in SKIP else []
    return pytest.param(key, id=f"{key[0]}::{key[1]}", marks=marks)


@pytest.mark.parametrize("key", [_param(k) for k in torch_corpus.KEYS])
@STABLEHLO_BODIES
@given(data=st.data())
def test_entry_runs_through_stablehlo(key: tuple[str, str], data) -> None:
    check(key, data.draw(refs.REFERENCES[key].inputs, label="inputs"))


@pytest.mark.parametrize("key, k", torch_corpus.EDGE_CASES)
def test_entry_edge_case_through_stablehlo(key: tuple[str, str], k: int) -> None:
    check(key, refs.EDGES[key][k])
