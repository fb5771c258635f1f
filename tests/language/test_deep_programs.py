"""What `check` accepts, every stage compiles: long sums, long else-if chains, deep unary
minus chains and deep dimension expressions, through every backend, the interpreter and the
runtimes, at Python's default recursion limit.

The pipeline runs on a deep stack (`linnet.deepstack`), and `outline-deep-blocks` keeps the
generated Python within CPython's 100 indentation levels.
"""

from __future__ import annotations

import ast
import sys

import pytest

from linnet.diagnostics import CompileError
from linnet.check.frontend import check_program
from linnet.pipeline import compile_source

from default_recursion import default_limit  # noqa: F401 (autouse)

torch = pytest.importorskip("torch")

TERMS = 1000


def sum_program(n: int = TERMS) -> str:
    terms = " + ".join(f"x * {i}.0" for i in range(n))
    return f"module deep\nentry main(x: f32) -> f32 {{\n    return {terms}\n}}\n"


def chain_program(n: int = 500) -> str:
    chain = "if x < 0.0 { 0.0 }" + "".join(f" else if x < {i}.0 {{ {i}.0 }}"
                                            for i in range(1, n)) + " else { x }"
    return f"module deep\nentry main(x: f32) -> f32 {{\n    return {chain}\n}}\n"


def minus_program(n: int = 1000) -> str:
    return f"module deep\nentry main(x: f32) -> f32 {{\n    return {'-' * n}x\n}}\n"


def dim_program(n: int = 500) -> str:
    dim = " + ".join(["N"] * n)
    return ("module deep\nentry main<N: Dim>(x: Tensor[N; f32]) -> "
            f"Tensor[{dim}; f32] {{\n"
            f"    return reshape(broadcast_to(reshape(x, [1, N]), [{n}, N]), [{dim}])\n}}\n")


def kernel_program(n: int = TERMS) -> str:
    terms = " + ".join(f"v * {i}.0" for i in range(n))
    return f"""module deep
pub kernel scale_k<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(1)
where B >= N {{
    let i = iota<i32>(B)
    let m = i < N
    let v = load(x[i], m)
    store(y[i], {terms}, m)
}}

pub op scale<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel scale_k<N, 16> {{
    let y[i] = {terms.replace('v', 'x[i]')}
    return y
}}

entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {{
    return scale(x)
}}
"""


CASES = {  # program, binding, input, expected output
    "sum": (sum_program(), {}, 2.0, [2.0 * sum(range(TERMS))]),
    "else-if": (chain_program(), {}, 2.5, [3.0]),
    "minus": (minus_program(), {}, 2.0, [2.0]),
    "dim": (dim_program(), {"N": 3}, [0.0, 1.0, 2.0], [0.0, 1.0, 2.0] * 500),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_accepts(case):
    text = CASES[case][0]
    assert check_program("deep.linnet", text).ok


@pytest.mark.parametrize("target", ["torch", "jax"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_python_backends_print_code_python_compiles(case, target):
    text, bind, _, _ = CASES[case]
    out = compile_source(text, path="deep.linnet", target=target, bind=bind).text
    compile(out, "generated.py", "exec")  # no "too many levels of indentation"
    depth = max(len(line) - len(line.lstrip(" ")) for line in out.splitlines()) // 4
    assert depth < 60


@pytest.mark.parametrize("case", sorted(CASES))
def test_stablehlo_prints(case):
    text, bind, _, _ = CASES[case]
    out = compile_source(text, path="deep.linnet", target="stablehlo", bind=bind).text
    assert "func.func public @main" in out


@pytest.mark.parametrize("case", ["sum", "minus", "dim"])
def test_onnx_builds_a_checked_model(case):
    pytest.importorskip("onnx")
    text, bind, _, _ = CASES[case]
    model = compile_source(text, path="deep.linnet", target="onnx", bind=bind).text
    assert len(model.graph.output) == 1


def test_onnx_refuses_subgraphs_nested_beyond_its_format_with_a_diagnostic(tmp_path, capsys):
    pytest.importorskip("onnx")
    from linnet.cli.main import main
    from linnet.emit.onnx import MAX_SUBGRAPH_DEPTH
    path = tmp_path / "deep.linnet"
    path.write_text(chain_program())
    assert main(["onnx", str(path), "-o", str(tmp_path / "deep.onnx")]) == 1
    assert "error[E2190]: not implemented yet: ONNX export" in capsys.readouterr().err


def test_onnx_runs_the_deepest_chain_it_accepts():
    ort = pytest.importorskip("onnxruntime")
    import numpy as np
    from linnet.emit.onnx import MAX_SUBGRAPH_DEPTH
    model = compile_source(chain_program(MAX_SUBGRAPH_DEPTH), path="deep.linnet",
                           target="onnx").text
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    for x, want in [(2.5, 3.0), (-1.0, 0.0), (100.0, 100.0)]:
        (out,) = session.run(None, {name: np.array(x, dtype=np.float32)})
        assert float(out) == want
    with pytest.raises(CompileError) as err:
        compile_source(chain_program(MAX_SUBGRAPH_DEPTH + 1), path="deep.linnet", target="onnx")
    assert err.value.diagnostics[0].code == "E2190"


@pytest.mark.parametrize("compiled", [True, False], ids=["generated", "interpreter"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_torch_runtime_runs(case, compiled, tmp_path):
    from linnet.torch import load_function
    text, _, x, want = CASES[case]
    path = tmp_path / "deep.linnet"
    path.write_text(text)
    out = load_function(str(path), "main", compile=compiled)(torch.tensor(x))
    assert out.reshape(-1).tolist() == want


@pytest.mark.parametrize("case", ["sum", "minus", "dim"])
def test_jax_runtime_runs(case):
    jnp = pytest.importorskip("jax.numpy")
    from linnet.jax import load_source
    text, _, x, want = CASES[case]
    out = load_source(text, "main", path="deep.linnet")(jnp.asarray(x, dtype=jnp.float32))
    assert [float(v) for v in jnp.ravel(out)] == want


@pytest.mark.parametrize("target,marker", [("torch", "@triton.jit"), ("jax", "pallas_call")])
def test_a_kernel_with_a_thousand_term_sum_prints(target, marker):
    out = compile_source(kernel_program(), path="deep.linnet", target=target).text
    assert marker in out
    ast.parse(out)


def test_the_cli_compiles_deep_programs(tmp_path, capsys):
    from linnet.cli.main import main
    path = tmp_path / "deep.linnet"
    path.write_text(chain_program())
    for target in ("torch", "jax", "stablehlo"):
        assert main([target, str(path), "-o", str(tmp_path / f"out.{target}")]) == 0
    assert main(["compile", str(path), "--target", "torch", "--dump-after=all",
                 "-o", str(tmp_path / "dumped.py")]) == 0
    assert "outline-deep-blocks" in capsys.readouterr().out


def test_nesting_that_exhausts_even_the_deep_stack_is_a_diagnostic(monkeypatch):
    import linnet.deepstack as deepstack
    monkeypatch.setattr(deepstack, "RECURSION_LIMIT", 1200)
    from linnet.passes.manager import Options, Pass, run_pipeline

    def deep(n: int) -> int:
        return 0 if n == 0 else 1 + deep(n - 1)

    with pytest.raises(CompileError) as err:
        run_pipeline([Pass("deep", "", "x", "x", lambda ir, o: deep(10_000))], None,
                     Options(path="deep.linnet"))
    assert err.value.diagnostics[0].code == "E1006"


def test_e_graphs_are_dropped_on_their_own_thread_at_exit() -> None:
    """Two compilations with kernels, then exit: egglog e-graphs may only be dropped on the
    compile worker that made them, and one left in a reference cycle used to be dropped at
    shutdown on the main thread ("EGraph is unsendable" on stderr)."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    script = (
        "from linnet.pipeline import compile_source\n"
        "for b in ({'B': 1, 'H': 2, 'L': 128, 'S': 200, 'D': 64},"
        " {'B': 2, 'H': 1, 'L': 40, 'S': 72, 'D': 32}):\n"
        "    compile_source(path='examples/attention.linnet', entry='attention_any', bind=b)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "unsendable" not in done.stderr, done.stderr
