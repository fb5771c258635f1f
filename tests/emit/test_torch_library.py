"""Ops with a kernel as `torch.library` custom ops (docs/scale.md).

Under `torch.compile` and `torch.export` each op whose kernel was chosen is called as the
registered op `linnet_<module>_<hash>::<instance>`: one graph with no break
(`fullgraph=True`), the op in it, its fake implementation giving the result shapes, its
gradient the op's `grad` clause or body. On the CPU the op runs its kernel under Triton's
interpreter (tests/conftest.py) or its body; on a GPU the compiled graph launches the
kernel (`LINNET_COMPILE_BACKEND=inductor` and `LINNET_COMPILE_MODE=reduce-overhead` choose
how the graph is compiled; the CPU default is `aot_eager`, which proves the same tracing).
Each loaded function is called once before it is compiled: that call compiles the Linnet
binding, which Dynamo cannot trace.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.func

from linnet.emit.torch_library import library_ok, namespace, op_names, schema
from linnet.torch import load, load_function

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
BACKEND = os.environ.get("LINNET_COMPILE_BACKEND", "inductor" if DEVICE == "cuda" else "aot_eager")
MODE = os.environ.get("LINNET_COMPILE_MODE") or None


def compiled(fn):
    """torch.compile of fn with no graph break allowed."""
    return torch.compile(fn, fullgraph=True, backend=BACKEND, mode=MODE)


def linnet_ops(graph: torch.fx.Graph) -> list[str]:
    """The Linnet custom ops a traced graph calls, by their qualified names."""
    return [str(n.target) for n in graph.nodes
            if n.op == "call_function" and str(n.target).startswith("linnet_")]


def recording_backend(graphs: list):
    """A torch.compile backend that keeps each graph Dynamo hands it and runs it as is."""
    def backend(gm: torch.fx.GraphModule, example_inputs):
        graphs.append(gm.graph)
        return gm.forward
    return backend


def rand(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, device=DEVICE)


def softmax():
    return load_function(str(EXAMPLES / "softmax.linnet"), "softmax_any", tuning=False)


def layer_norm():
    return load_function(str(EXAMPLES / "layer_norm.linnet"), "layer_norm_any", tuning=False)


def relu():
    return load_function(str(EXAMPLES / "relu.linnet"), "main", tuning=False)


def torch_layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def torch_relu_scale(x, s):
    return torch.relu(x) * s


# (loaded function, inputs, PyTorch's result): softmax, layer norm, relu with a grad clause
CASES = {
    "softmax": (softmax, lambda: (rand(4, 16),), lambda x: torch.softmax(x, dim=-1)),
    "layer_norm": (layer_norm, lambda: (rand(8, 32), rand(32).abs() + 0.5, rand(32)),
                   torch_layer_norm),
    "relu": (relu, lambda: (rand(5000), rand(5000)), torch_relu_scale),
}


@pytest.fixture(params=sorted(CASES))
def case(request):
    make, inputs, ref = CASES[request.param]
    torch.manual_seed(0)
    fn, xs = make(), inputs()
    torch.testing.assert_close(fn(*xs), ref(*xs), atol=1e-5, rtol=1e-5)  # compiles the binding
    return fn, xs, ref


def registered_ops(fn) -> list:
    """The custom ops of the modules a loaded function has generated (None where none)."""
    return [getattr(m, name) for m, *_ in fn._modules for name in dir(m)
            if name.endswith("_op_library") and getattr(m, name) is not None]


# ----------------------------------------------------------------- torch.compile

def test_compile_fullgraph_calls_the_custom_op_and_agrees(case):
    fn, xs, ref = case
    graphs: list = []
    traced = torch.compile(lambda *a: fn(*a) * 2, fullgraph=True,
                           backend=recording_backend(graphs))
    torch.testing.assert_close(traced(*xs), ref(*xs) * 2, atol=1e-5, rtol=1e-5)
    assert len(graphs) == 1 and linnet_ops(graphs[0]), "one graph, calling the Linnet op"
    fast = compiled(lambda *a: fn(*a) * 2)
    torch.testing.assert_close(fast(*xs), ref(*xs) * 2, atol=1e-5, rtol=1e-5)


def test_compile_fullgraph_backward_matches_pytorch(case):
    fn, xs, ref = case
    fast = compiled(lambda *a: (fn(*a) ** 2).sum())
    mine = [x.clone().requires_grad_() for x in xs]
    theirs = [x.clone().requires_grad_() for x in xs]
    fast(*mine).backward()
    (ref(*theirs) ** 2).sum().backward()
    for a, b in zip(mine, theirs):
        torch.testing.assert_close(a.grad, b.grad, atol=1e-4, rtol=1e-4)


def test_the_op_runs_and_is_counted_inside_the_compiled_graph():
    fn = softmax()
    x = rand(4, 16)
    fn(x)
    before = fn.ran()["softmax__R4_C16"]
    fast = compiled(lambda x: fn(x) + 1)
    for _ in range(3):
        torch.testing.assert_close(fast(x), torch.softmax(x, dim=-1) + 1)
    after = fn.ran()["softmax__R4_C16"]
    kernel = os.environ.get("TRITON_INTERPRET") == "1" or DEVICE == "cuda"
    runs = sum(after.values()) - sum(before.values())
    assert (after["kernel"] > before["kernel"]) == kernel and after["body"] >= before["body"]
    if MODE != "reduce-overhead":  # CUDA graph replays run no Python: they count nothing
        assert runs == 3


def test_prepare_compiles_the_binding_so_the_first_call_can_be_traced():
    """`prepare` compiles a binding without running it (with no tuning file, a `meta`
    tensor gives the shape): the function's first call is then inside torch.compile."""
    fn = softmax()
    fn.prepare(torch.empty(4, 16, device="meta"))
    assert fn.ran() == {"softmax__R4_C16": {"kernel": 0, "body": 0}}
    x = rand(4, 16)
    torch.testing.assert_close(compiled(lambda x: fn(x) * 2)(x), torch.softmax(x, dim=-1) * 2)
    assert sum(fn.ran()["softmax__R4_C16"].values()) == 1


def test_prepare_binds_a_generic_no_input_determines(tmp_path):
    """`prepare(x, N=3)` binds `N`, which only the result has; calls with inputs like `x`
    then run that binding, where alone they cannot bind `N`."""
    from linnet.errors import InputShapeError
    path = tmp_path / "spread.linnet"
    path.write_text("module spread\n\nentry spread<N: Dim>(x: f32) -> Tensor[N; f32] {\n"
                    "    return fill<f32>([N], 0.0) + x\n}\n")
    fn = load_function(str(path), "spread")
    x = torch.tensor(2.0)
    with pytest.raises(InputShapeError, match="do not determine generic `N`"):
        fn(x)
    fn.prepare(x, N=3)
    torch.testing.assert_close(fn(x), torch.full((3,), 2.0))


@pytest.mark.skipif(DEVICE != "cuda", reason="CUDA graphs need a CUDA device")
def test_reduce_overhead_replays_the_kernel_from_a_cuda_graph():
    """After warm-up and recording, calls replay the CUDA graph: right results for new
    inputs, with no Python run (the op's count stands still)."""
    fn = softmax()
    x = rand(64, 1000)
    fn(x)
    fast = torch.compile(lambda x: fn(x) * 2, fullgraph=True, mode="reduce-overhead")
    for _ in range(3):
        fast(x)
    before = fn.ran()["softmax__R64_C1000"]
    assert before["kernel"] >= 2 and before["body"] == 0
    for _ in range(3):
        y = rand(64, 1000)
        torch.testing.assert_close(fast(y), torch.softmax(y, dim=-1) * 2)
    assert fn.ran()["softmax__R64_C1000"] == before


# ----------------------------------------------------------------- torch.export

def exported(fn, xs: tuple):
    """`torch.export` of a module whose forward calls `fn`."""
    class Model(torch.nn.Module):
        def forward(self, *a):
            return fn(*a)

    return torch.export.export(Model(), xs)


def test_export_holds_the_custom_op(case):
    fn, xs, ref = case
    program = exported(fn, xs)
    assert len(linnet_ops(program.graph)) == 1
    torch.testing.assert_close(program.module()(*xs), ref(*xs), atol=1e-5, rtol=1e-5)


# ----------------------------------------------------------------- torch.func, opcheck

def test_torch_func_grad_and_vmap(case):
    fn, xs, ref = case
    loss = lambda f: (lambda *a: (f(*a) ** 2).sum())  # noqa: E731
    mine = torch.func.grad(loss(fn), argnums=tuple(range(len(xs))))(*xs)
    theirs = torch.func.grad(loss(ref), argnums=tuple(range(len(xs))))(*xs)
    for a, b in zip(mine, theirs):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)
    batch = [torch.stack([x, x * 0.5]) for x in xs]
    torch.testing.assert_close(torch.func.vmap(fn)(*batch), torch.func.vmap(ref)(*batch),
                               atol=1e-5, rtol=1e-5)


def sample_args(op, args: tuple) -> tuple:
    """Real arguments for an op from those of a traced call (fake tensors): random values of
    the same shapes and dtypes, positive (an `eps` must be), floats requiring a gradient."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            t = torch.rand(a.shape, device=a.device) + 0.1
            t = t.to(a.dtype)
            out.append(t.requires_grad_() if t.is_floating_point() else t)
        else:
            out.append(a)
    return tuple(out)


def test_opcheck_passes_for_every_registered_op(case):
    fn, xs, _ = case
    program = exported(fn, xs)
    calls = [n for n in program.graph.nodes if str(n.target).startswith("linnet_")]
    assert calls and registered_ops(fn)
    for node in calls:
        fakes = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in node.args]
        torch.library.opcheck(node.target, sample_args(node.target, fakes))


def test_vmap_of_the_custom_op_itself_falls_back_to_a_loop():
    """torch.func transforms of a loaded function take the op's autograd Function; the
    custom op called directly under vmap runs once per example (PyTorch's fallback)."""
    fn = softmax()
    x = rand(3, 4, 16)
    fn(x[0])
    (op,) = registered_ops(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fallback's note on its speed
        got = torch.func.vmap(lambda v: op(torch.device(DEVICE), v))(x)
    torch.testing.assert_close(got, torch.softmax(x, dim=-1))


# ----------------------------------------------------------------- the block loader

GPT = EXAMPLES / "gpt" / "gpt.linnet"
SIZES = {"B": 2, "L": 2, "NH": 2, "D": 16, "V": 64, "S": 48}


def test_gpt_prefill_and_decode_compile_fullgraph():
    torch.manual_seed(0)
    model = load(GPT, generics=SIZES, numerics="equivalent", device=DEVICE)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * 0.2)
    generator = torch.Generator().manual_seed(1)
    prompt = torch.randint(0, SIZES["V"], (SIZES["B"], 12), generator=generator).to(DEVICE)
    step = torch.randint(0, SIZES["V"], (SIZES["B"],), generator=generator).to(DEVICE)
    with torch.no_grad():
        want = model.prefill(prompt), model.decode(step)
        graphs: list = []
        prefill = torch.compile(model.prefill, fullgraph=True, backend=recording_backend(graphs))
        decode = torch.compile(model.decode, fullgraph=True, backend=recording_backend(graphs))
        got = prefill(prompt), decode(step)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5)
    assert len(graphs) == 2 and all(linnet_ops(g) for g in graphs)
    assert model.pos.tolist() == [13]


# ----------------------------------------------------------------- the printer's parts

def test_the_namespace_is_an_identifier_from_the_module_and_the_text():
    a = namespace("examples.softmax", "text one")
    assert a.startswith("linnet_examples_softmax_") and a.isidentifier()
    assert a != namespace("examples.softmax", "text two")
    assert namespace("", "text one").startswith("linnet_") and namespace("", "x").isidentifier()


def test_the_generated_module_names_and_registers_its_ops():
    fn = layer_norm()
    text = fn.source(R=8, C=32)
    assert "f2_op_library = _ln_library('linnet_examples_layer_norm_" in text
    assert "'(Device d, Tensor v0, Tensor v1, Tensor v2, Tensor v3) -> Tensor'" in text
    assert "-> (Tensor, Tensor, Tensor)'" in text  # layer_norm_backward returns three
    assert "linnet_NAMESPACE_" not in text


def test_running_a_module_twice_registers_fresh_names(tmp_path):
    """The same text executed again (not through the module cache) numbers its op names.
    Each copy is imported from a file of its own: Triton reads a kernel's source there."""
    import importlib.util
    text = softmax().source(R=2, C=8)
    copies = []
    for n in ("first", "second"):
        path = tmp_path / f"softmax_copy_{n}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"softmax_copy_{n}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        copies.append(module)
    a, b = copies[0].f2_op_library, copies[1].f2_op_library
    assert str(b) == str(a).replace(".default", "_2.default") and a is not b
    x = torch.randn(2, 8)
    torch.testing.assert_close(b(torch.device("cpu"), x), torch.softmax(x, dim=-1))


def test_ops_returning_a_parameter_get_memory_of_their_own():
    """A custom op may not return an input: the body's alias is copied (`_ln_fresh`)."""
    from linnet.emit.torch_helpers import _ln_fresh, _ln_lit
    x = torch.arange(3.0)
    y = _ln_fresh(x, x)
    assert torch.equal(y, x) and y.data_ptr() != x.data_ptr()
    a, b = _ln_fresh((x[1:], x[1:]), x)
    assert a.data_ptr() != b.data_ptr() != x.data_ptr()
    new = torch.ones(2)
    assert _ln_fresh(new, x) is new
    lit = _ln_lit(2.5, torch.float32, torch.device("cpu"))
    assert _ln_fresh(lit.expand(3)).data_ptr() != lit.data_ptr()


def test_schema_and_eligibility_of_op_funcs():
    from linnet.ir import tensor as ir
    t = ir.TType((2, 3), "f32")
    one = ir.Func("o", "op", (ir.Var("x", t),), ir.Block((), ir.Var("x", t)))
    assert library_ok(one) and schema(one) == "(Device d, Tensor v0) -> Tensor"
    pair = ir.Func("p", "op", (ir.Var("x", t),), ir.Block((), ir.Var("r", ir.TupleTy((t, t)))))
    assert library_ok(pair) and schema(pair).endswith("-> (Tensor, Tensor)")
    single = ir.Func("s", "op", (ir.Var("x", t),), ir.Block((), ir.Var("r", ir.TupleTy((t,)))))
    assert not library_ok(single)
    assert op_names([one, pair]) == {"o": "o", "p": "p"}
    assert op_names([ir.Func("a<b>", "op", (), one.body),
                     ir.Func("a_b_", "op", (), one.body)]) == {"a<b>": "a_b_", "a_b_": "op1_a_b_"}
