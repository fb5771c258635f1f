"""The ONNX export folds lossless cast round trips (`cast<bool>(cast<f32>(x))` is `x`).

onnxruntime's optimizer removes such a round trip in the main graph but leaves a `Loop` body
that reads its result asking for the removed value ("Missing Input"), though the model is
valid and onnx's reference evaluator runs it. The export therefore never writes one: each
case below runs inside a loop through onnxruntime and must equal the reference evaluator
and the language's meaning; `lossless` is checked against NumPy on every dtype pair.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx.reference import ReferenceEvaluator  # noqa: E402

from linnet.emit.onnx_ops import lossless  # noqa: E402
from linnet.pipeline import compile_source  # noqa: E402

VALUES = {"bool": np.array([True, False, True, False]),
          "i8": np.array([1, -2, 127, -128], np.int8),
          "u8": np.array([0, 1, 200, 255], np.uint8),
          "i16": np.array([-32768, 32767, 5, -5], np.int16),
          "i32": np.array([1, -2, 2**30 + 1, -2**31], np.int32),
          "f32": np.array([1.5, -2.25, 3e9, np.float32(0.1)], np.float32)}


def _loop_program(src: str, mid: str, op: str) -> str:
    return f"""module round_trip
entry main(x: Tensor[4; {src}], y: Tensor[4; {src}]) -> Tensor[4; {src}] {{
    var v = y
    for i in 0..3 {{
        v = cast<{src}>(cast<{mid}>(x)) {op} v
    }}
    return v
}}
"""


@pytest.mark.parametrize("src, mid, op", [
    ("bool", "f32", "|"), ("bool", "i32", "^"), ("bool", "f16", "|"),
    ("i8", "i32", "+"), ("u8", "i16", "+"), ("i16", "f32", "+"), ("f32", "f64", "+"),
    # lossy round trips stay as they are: onnxruntime leaves them alone too
    ("i32", "i8", "+"), ("f32", "f16", "+"), ("i32", "f32", "+"), ("f32", "i32", "+")])
def test_a_round_trip_inside_a_loop_runs_in_onnxruntime(src, mid, op):
    model = compile_source(_loop_program(src, mid, op), path="round_trip.linnet",
                           target="onnx").text
    made = {n.output[0] for n in model.graph.node if n.op_type == "Cast"}
    chained = [n for n in model.graph.node if n.op_type == "Cast" and n.input[0] in made]
    assert (chained == []) == lossless(src, mid)  # a cast of a cast only where it loses
    x, y = VALUES[src], VALUES[src][::-1].copy()
    feeds = {"x": x, "y": y}
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    got = session.run(None, feeds)[0]
    np.testing.assert_array_equal(got, want)
    if lossless(src, mid):  # three trips of x op v
        expected = y
        for _ in range(3):
            expected = (x | expected) if op == "|" else (x ^ expected) if op == "^" else x + expected
        np.testing.assert_array_equal(got, expected)


NUMPY = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
         "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
         "f16": np.float16, "f32": np.float32, "f64": np.float64}


def _samples(dtype: str) -> np.ndarray:
    """The values most likely to be lost: the limits, and odd values near them."""
    t = NUMPY[dtype]
    if dtype == "bool":
        return np.array([False, True])
    info = np.finfo(t) if dtype.startswith("f") else np.iinfo(t)
    if dtype[0] in "iu":  # the limits, and a pattern of alternating bits
        return np.array([info.max, info.min, info.max - 1, info.min + 1, info.max // 3, 0, 1],
                        dtype=t)
    return np.array([info.max, -info.max, info.tiny, 1 + info.eps, 1 / 3, 0, 1], dtype=t)


@pytest.mark.parametrize("src, dst", [(a, b) for a, b in itertools.permutations(NUMPY, 2)])
def test_lossless_means_every_value_comes_back(src, dst):
    """Where `lossless` says yes, NumPy's round trip keeps the limits; where it says no,
    some value is lost (bool's round trip is `!= 0`, not a conversion)."""
    x = _samples(src)
    with np.errstate(all="ignore"):
        there = x.astype(NUMPY[dst]) if dst != "bool" else x != 0
        back = there.astype(NUMPY[src])
    same = bool(np.array_equal(back, x))
    assert lossless(src, dst) == same, (src, dst, x, back)
