"""Run a `linnet onnx` model in onnxruntime's CPU provider, for tests and the fuzzer.

`load_onnx(model)` checks the model (`onnx.checker`, full check) and opens one session;
calling it with NumPy-convertible inputs returns the results as NumPy arrays. onnxruntime's
Python API has no NumPy type for bf16, so bf16 inputs and results cross the boundary as f32
(exactly: every bf16 value is an f32 value), through `Cast` nodes added at the edges.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["f32_boundary", "load_onnx"]


def f32_boundary(model: Any) -> Any:
    """A copy of `model` whose bf16 inputs and outputs are exchanged as f32."""
    import onnx
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph, bf16 = model.graph, onnx.TensorProto.BFLOAT16
    first, last = [], []
    for value, into in [(v, first) for v in graph.input] + [(v, last) for v in graph.output]:
        tensor = value.type.tensor_type
        if tensor.elem_type != bf16:
            continue
        inner, value.name = value.name, value.name + "_f32"
        tensor.elem_type = onnx.TensorProto.FLOAT
        src, dst, to = ((value.name, inner, bf16) if into is first
                        else (inner, value.name, onnx.TensorProto.FLOAT))
        into.append(onnx.helper.make_node("Cast", [src], [dst], to=to))
    nodes = first + list(graph.node) + last
    del graph.node[:]
    graph.node.extend(nodes)
    return model


def load_onnx(model: Any) -> Callable[..., list[np.ndarray]]:
    """The checked model as a function of its inputs, in order (bf16 given as floats)."""
    import onnx
    import onnxruntime as ort
    from onnx.helper import tensor_dtype_to_np_dtype

    onnx.checker.check_model(model, full_check=True)
    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only: its optimizer's notes (initializers it
    # folded away) are not about the model, and a fuzzer opens thousands of sessions
    session = ort.InferenceSession(f32_boundary(model).SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    inputs = session.get_inputs()
    dtypes = [np.float32 if v.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
              else tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type)
              for v in model.graph.input]

    def run(*values: Any) -> list[np.ndarray]:
        feeds = {i.name: np.asarray(v).astype(d) for i, v, d in zip(inputs, values, dtypes)}
        return session.run(None, feeds)

    return run
