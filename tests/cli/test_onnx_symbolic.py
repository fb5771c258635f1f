"""ONNX as users deploy it: inputs and outputs named after the entry's parameters and
results, and a `Dim` generic left unbound by `--bind` exported as a symbolic `dim_param`,
so that one model runs at every size (linnet/cli/onnx_symbolic.py, linnet/emit/onnx_names.py).
Each model runs in onnxruntime and is compared with the PyTorch interpreter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from linnet.cli.main import main as cli_main  # noqa: E402
from linnet.pipeline import compile_source  # noqa: E402

GENERIC = """module generic

op centred<A: Dim, B: Dim>(v: Tensor[A, B; f32]) -> Tensor[A, B; f32] {
    let mean[a] = sum[b] v[a, b] / 4.0
    let out[a, b] = tanh(v[a, b] - mean[a])
    return out
}

entry main<N: Dim, M: Dim>(x: Tensor[N, M; f32], w: Tensor[M; f32], s: f32)
where M % 4 == 0 {
    let y[n, m] = x[n, m] * w[m] + s
    let t[n] = sum[m] y[n, m]
    return (centred(y), t)
}

entry counts<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return x + cast<f32>(iota<i32>(N))
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("symbolic") / "generic.linnet"
    path.write_text(GENERIC)
    return path


@pytest.fixture(scope="module")
def model(program: Path, tmp_path_factory):
    out = tmp_path_factory.mktemp("symbolic_out") / "main.onnx"
    assert cli_main(["onnx", str(program), "--entry", "main", "-o", str(out)]) == 0
    return onnx.load(str(out))


def _dims(value) -> list:
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def test_the_model_names_its_inputs_outputs_and_symbolic_sizes(model) -> None:
    graph = model.graph
    assert [(i.name, _dims(i)) for i in graph.input] == [
        ("x", ["N", "M"]), ("w", ["M"]), ("s", [])]
    assert [(o.name, _dims(o)) for o in graph.output] == [
        ("result_0", ["N", "M"]), ("result_1", ["N"])]
    assert graph.input[0].doc_string == "parameter x: float[N, M]"


@pytest.mark.parametrize("n, m", [(3, 8), (17, 4)])
def test_one_model_runs_at_two_sizes_as_pytorch_does(program: Path, model, n: int,
                                                     m: int) -> None:
    import linnet.torch
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, m)).astype(np.float32)
    w = rng.standard_normal(m).astype(np.float32)
    s = np.array(0.5, dtype=np.float32)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x, "w": w, "s": s})
    want = linnet.torch.load_function(str(program), "main", compile=False)(
        torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(s))
    for a, b in zip(got, want):
        assert a.shape == tuple(b.shape)
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-5, atol=1e-6)


def test_a_size_used_as_a_value_is_e2190_with_the_generic_s_span(program: Path,
                                                                   capsys) -> None:
    assert cli_main(["onnx", str(program), "--entry", "counts"]) == 1
    err = capsys.readouterr().err
    assert "error[E2190]: not implemented yet: ONNX export with `N` symbolic" in err
    assert "generic.linnet:16:14" in err and "--bind N=7" in err
    assert cli_main(["onnx", str(program), "--entry", "counts", "--bind", "N=5"]) == 0


def test_a_bound_generic_stays_a_number_and_an_unbound_dtype_is_a_usage_error(
        program: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "half.onnx"
    assert cli_main(["onnx", str(program), "--entry", "main", "--bind", "M=8", "-o",
                     str(out)]) == 0
    assert _dims(onnx.load(str(out)).graph.input[0]) == ["N", 8]
    typed = tmp_path / "typed.linnet"
    typed.write_text("module typed\nentry main<T: Float>(x: Tensor[4; T]) -> Tensor[4; T] {\n"
                     "    return x\n}\n")
    assert cli_main(["onnx", str(typed)]) == 2
    assert "--bind T=" in capsys.readouterr().err


STRUCTS = """module named

struct Pair<N: Dim> { a: Tensor[N; f32], b: f32 }

entry pair<N: Dim>(x: Tensor[N; f32], p: Pair<N>) -> Pair<N> {
    return Pair(a = x * p.b + p.a, b = p.b)
}

entry loss(result: Tensor[3; f32], w: Tensor[3; f32]) -> f32 {
    return sum[i] result[i] * w[i]
}
"""


def test_struct_fields_grad_outputs_and_a_taken_name() -> None:
    graph = compile_source(STRUCTS, path="named.linnet", target="onnx", entry="pair",
                           bind={"N": 3}).text.graph
    assert [i.name for i in graph.input] == ["x", "p.a", "p.b"]
    assert [o.name for o in graph.output] == ["a", "b"]
    graph = compile_source(STRUCTS, path="named.linnet", target="onnx", entry="loss",
                           grad=True).text.graph
    assert [i.name for i in graph.input] == ["result", "w"]
    assert [o.name for o in graph.output] == ["loss", "grad.result", "grad.w"]
    graph = compile_source(STRUCTS, path="named.linnet", target="onnx",
                           entry="loss").text.graph
    assert [o.name for o in graph.output] == ["out0"]  # `result` is an input's name


def test_a_block_entry_names_its_next_states_by_path() -> None:
    path = Path(__file__).resolve().parents[2] / "tests" / "spec" / "valid" / \
        "175_block_fn_inferred_result.linnet"
    graph = compile_source(path.read_text(), path=str(path), target="onnx", entry="run",
                           bind={"H": 3, "B": 2}).text.graph
    assert [i.name for i in graph.input][:3] == ["x", "first.w", "first.calls"]
    assert [o.name for o in graph.output] == [
        "result_0", "result_1", "first.calls.next", "rest.0.calls.next",
        "rest.1.calls.next"]
