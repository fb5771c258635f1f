"""Every corpus entry exported to ONNX and run by onnxruntime, against the NumPy reference
and the PyTorch interpreter.

The same references and input strategies as `test_corpus_numpy.py`: for each entry,
Hypothesis draws inputs, the generics are bound from them, and the entry is exported with
`linnet onnx` (numerics `exact`: op bodies), checked by `onnx.checker` (full check) and run
by onnxruntime's CPU provider (one session per binding). Its results must have the
declared dtypes and shapes, match the reference within the declared dtype's tolerance
(integers and bools exactly), and agree with the PyTorch interpreter to the same
tolerance. Integer edge cases (`references.EDGES`) run too.
`LINNET_ONNX_EXAMPLES` sets the number of examples per entry.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from linnet.pipeline import compile_source  # noqa: E402
from linnet.fuzz.onnx_run import f32_boundary  # noqa: E402

from tests.bodies import test_corpus_numpy as torch_corpus  # noqa: E402
from backends import binding_key, body_settings, check_backend  # noqa: E402

refs = torch_corpus.refs
ONNX_BODIES = body_settings("LINNET_ONNX_EXAMPLES")

#: Entries that cannot be exported, with the reason.
SKIP: dict[tuple[str, str], str] = {}

#: The NumPy dtype of each Linnet dtype at the session's boundary (bf16: f32, see
#: `f32_boundary`).
NP = {**refs.NP_DTYPES, "f16": np.float16, "bf16": np.float32, "f32": np.float32,
      "f64": np.float64}

_SESSIONS: dict[tuple, object] = {}


def session(key: tuple[str, str], values: dict[str, object]):
    """The onnxruntime session of an entry's model for one binding (checked first)."""
    cache_key = binding_key(key, values)
    if cache_key not in _SESSIONS:
        path = torch_corpus.PATHS[key[0]]
        model = compile_source(path.read_text(), path=str(path), target="onnx", entry=key[1],
                               bind=values, numerics="exact").text
        onnx.checker.check_model(model, full_check=True)
        _SESSIONS[cache_key] = ort.InferenceSession(f32_boundary(model).SerializeToString(),
                                                    providers=["CPUExecutionProvider"])
    return _SESSIONS[cache_key]


def run(key: tuple[str, str], inputs: tuple, values: dict[str, object]) -> list:
    sess = session(key, values)
    feeds = {i.name: np.array(x.value, copy=True).astype(NP[x.dtype])
             for i, x in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feeds)


def check(key: tuple[str, str], inputs: tuple) -> None:
    if key in SKIP:
        pytest.skip(SKIP[key])
    check_backend(key, inputs, run, lambda dtype: np.dtype(NP[dtype]))


@pytest.mark.parametrize("key", [torch_corpus._param(k) for k in torch_corpus.KEYS])
@ONNX_BODIES
@given(data=st.data())
def test_entry_runs_through_onnx(key: tuple[str, str], data) -> None:
    check(key, data.draw(refs.REFERENCES[key].inputs, label="inputs"))


@pytest.mark.parametrize("key, k", torch_corpus.EDGE_CASES)
def test_entry_edge_case_through_onnx(key: tuple[str, str], k: int) -> None:
    check(key, refs.EDGES[key][k])
