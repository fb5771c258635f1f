"""Elements of a sub array that flatten alike share one function (block_sharing.py), so
the checker and `elaborate` do their work once per distinct instance, not per element."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from linnet.check import instance as instance_module
from linnet.check.instance import analyze_program
from linnet.check.signatures import Binding
from linnet.passes.front.block_instances import instance_tree
from linnet.passes.front.block_sharing import instance_classes, shared_path
from linnet.pipeline import compile_source, passes_for
from linnet.syntax.program import load_program

ROOT = Path(__file__).resolve().parents[3]
MODEL = ROOT / "examples" / "optional_model.linnet"
_spec = importlib.util.spec_from_file_location("limits", ROOT / "benchmarks" / "limits.py")
BENCH = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(BENCH)
REQUIRED = ["embed", "layers.0.up", "layers.0.down", "layers.1.up", "layers.1.down"]
STATEFUL = ("module m\nblock Leaf {\n    param w: Tensor[4; f32]\n    state calls: Tensor[1; i64]\n"
            "    pub fn forward(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
            "        calls = calls + 1\n        return x * w\n    }\n}\n"
            "block Model {\n    sub leaves: [Leaf; 3]\n"
            "    pub entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {\n        var y = x\n"
            "        static for leaf in leaves {\n            y = leaf.forward(y)\n        }\n"
            "        return y\n    }\n}\n")


def _fns(text: str) -> list[str]:
    """The names of the functions the flattening made (`--dump-after=bind-generics`)."""
    return re.findall(r"^fn (\w+)", text, re.M)


def _instantiated(monkeypatch, n: int) -> tuple[int, int]:
    """How many items the checker instantiates, and how many Funcs `elaborate` makes, for
    a sub array of n leaves compiled up to `elaborate`."""
    count = [0]
    real = instance_module.instantiate

    def counting(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(instance_module, "instantiate", counting)
    result = compile_source(BENCH.leaves_text(n), path="m.linnet",
                            passes=passes_for("torch")[:4])
    return count[0], len(result.text.funcs)


def test_leaves_of_one_sub_array_share_one_function():
    bound = compile_source(BENCH.leaves_text(3), path="m.linnet", passes=passes_for("torch")[:3])
    text = str(bound.text)
    assert _fns(text) == ["leaves__forward"]
    assert [f"leaves__forward(y, w = leaves__{k}__w)" in text for k in range(3)] == [True] * 3


def test_the_work_per_sub_array_does_not_grow_with_its_length(monkeypatch):
    small, large = _instantiated(monkeypatch, 16), _instantiated(monkeypatch, 64)
    assert small == large  # was one checked and elaborated function per leaf
    assert small[1] == 2  # the entry and the leaves' function


def test_elements_that_differ_get_functions_of_their_own():
    one = compile_source(path=str(MODEL), entry="main", passes=passes_for("torch")[:3],
                         present=REQUIRED + ["layers.0.up_bias"])
    assert _fns(str(one.text)) == ["layers__forward", "layers__forward_1"]
    both = compile_source(path=str(MODEL), entry="main", passes=passes_for("torch")[:3],
                          present=REQUIRED + ["layers.0.up_bias", "layers.1.up_bias"])
    assert _fns(str(both.text)) == ["layers__forward"]


def test_a_shared_function_returns_each_elements_states():
    compiled = compile_source(STATEFUL, path="m.linnet", passes=passes_for("torch")[:3])
    assert compiled.text.parameters.assigned == ("leaves.0.calls", "leaves.1.calls",
                                                 "leaves.2.calls")
    assert _fns(str(compiled.text)) == ["leaves__forward"]


def _tree(present: list[str]):
    analysis = analyze_program(load_program(str(MODEL), MODEL.read_text()))
    info = analysis.root.globals.blocks["Model"]
    return instance_tree(info, {"L": 3, "H": 4, "V": 5}, {}, frozenset(present))


def test_instances_are_alike_when_their_presence_is():
    tree = _tree(REQUIRED + ["layers.2.up", "layers.2.down", "layers.1.up_bias"])
    classes = instance_classes(tree)
    layers = [classes[id(c)] for c in tree.children["layers"]]
    assert layers[0] == layers[2] != layers[1]
    head = tree.children["head"]
    assert classes[id(head)] not in layers  # absent: it flattens to nothing alike


@pytest.mark.parametrize("path, shared", [
    ((), ()), (("layers", "3"), ("layers",)), (("layers", "3", "mlp", "0"), ("layers", "mlp"))])
def test_a_shared_path_drops_array_positions(path, shared):
    assert shared_path(path) == shared


NESTED = STATEFUL.replace(
    "block Model {\n    sub leaves: [Leaf; 3]",
    "block Outer {\n    sub inner: [Leaf; 2]\n    pub fn forward(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
    "        var y = x\n        static for leaf in inner {\n            y = leaf.forward(y)\n"
    "        }\n        return y\n    }\n}\nblock Model {\n    sub leaves: [Outer; 2]")


def test_nested_arrays_share_at_each_level_and_return_every_state():
    compiled = compile_source(NESTED, path="m.linnet", passes=passes_for("torch")[:3])
    assert _fns(str(compiled.text)) == ["leaves__forward", "leaves__inner__forward"]
    assert compiled.text.parameters.assigned == (
        "leaves.0.inner.0.calls", "leaves.0.inner.1.calls", "leaves.1.inner.0.calls",
        "leaves.1.inner.1.calls")


def test_a_shared_function_runs_each_elements_weights_and_states(tmp_path):
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    from linnet.torch import load
    source = tmp_path / "m.linnet"
    source.write_text(NESTED)
    scales = {(i, j): float(2 + 2 * i + j) for i in range(2) for j in range(2)}
    safetensors_torch.save_file({f"leaves.{i}.inner.{j}.w": torch.full((4,), s)
                                 for (i, j), s in scales.items()}, str(tmp_path / "w.safetensors"))
    model = load(str(source), weights=str(tmp_path / "w.safetensors"), compile=False,
                 device="cpu")
    model(torch.ones(4))
    out = model(torch.ones(4))
    assert torch.equal(out, torch.full((4,), 2.0 * 3.0 * 4.0 * 5.0))
    calls = {name: int(b.item()) for name, b in model.named_buffers() if name.endswith("calls")}
    assert calls == {f"leaves.{i}.inner.{j}.calls": 2 for i, j in scales}


def test_a_monomorphic_entry_is_checked_once(monkeypatch):
    """The flattened entry has no generics: its instance is what the check recorded (the
    same types, by identity), and nothing checks its body a second time."""
    made = []
    real = instance_module.BodyChecker

    def counting(*args):
        made.append(args)
        return real(*args)
    monkeypatch.setattr(instance_module, "BodyChecker", counting)
    bound = compile_source(BENCH.leaves_text(3), path="m.linnet", passes=passes_for("torch")[:3])
    ir = bound.result.stages[-1].ir
    assert made == []  # `instantiate` made no checker of its own
    checked = ir.analysis.root.bodies[id(ir.entry)]
    assert ir.instance.types is checked.types and ir.instance.signature is checked.signature
    assert len(checked.types) > 0 and ir.instance.diagnostics == []


def test_a_generic_fn_is_still_checked_with_its_binding():
    """Only what binds nothing reuses its check: a fn with a Dim generic is not among the
    recorded bodies, and its instance has concrete types of its own."""
    text = ("module m\nfn f<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {\n    return x * 2.0\n}\n"
            "entry main(x: Tensor[3; f32]) -> Tensor[3; f32] {\n    return f(x)\n}\n")
    analysis = analyze_program(load_program("m.linnet", text))
    f, main = analysis.root.globals.items["f"], analysis.root.globals.items["main"]
    assert set(analysis.root.bodies) == {id(main)}
    call = main.body[-1].value
    inst = analysis.instantiate(f, analysis.instantiate(main, Binding()).call_bindings[id(call)])
    assert str(inst.type_of(f.body[-1].value).type) == "Tensor[3; f32]"
