"""Blocks with the values of the model layer: structs, enums, `match`, optional parameters
with defaults and named arguments in member calls, run against NumPy; what a block's
functions may declare (defaults, entry types); an optional member read with `match`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.check.frontend import check_program
from linnet.pipeline import compile_file, compile_source
from linnet.syntax.parser import parse
from linnet.syntax.printer import print_module
from linnet.fuzz.backends import as_numpy, compile_entry, loader

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "spec" / "valid" / "162_block_values.linnet"


def _diagnostics(text: str) -> list:
    return check_program("<t>.linnet", text).diagnostics


def _reference(x: np.ndarray, w: dict[str, np.ndarray]) -> np.ndarray:
    """`first` with Relu, no scale and t = 0, then each of `rest` with Tanh, scale 2, t = 1."""
    y = np.maximum(x * w["first.w"] + x, 0.0)
    for k in range(2):
        y = np.tanh(y * w[f"rest.{k}.w"] + x) * 2.0 + 1.0
    return y


def test_the_program_prints_back_to_the_same_tree() -> None:
    tree, diagnostics = parse(PROGRAM.read_text(), "a")
    assert diagnostics == []
    text = print_module(tree)
    assert parse(text, "b")[0] == tree
    assert "leaf.forward(Pair(b = x, a = y), s = some(2.0), kind = Act.Tanh)" in text


@pytest.mark.parametrize("target", ["interpreter", "torch"])
def test_blocks_with_values_run(target: str) -> None:
    compiled = compile_entry(PROGRAM.read_text(), str(PROGRAM), "main", {}, target)
    manifest = compile_file(PROGRAM, entry="main").parameters
    assert [p.path for p in manifest.inputs] == [
        "first.w", "first.uses", "rest.0.w", "rest.0.uses", "rest.1.w", "rest.1.uses"]
    rng = np.random.default_rng(1)
    x = rng.standard_normal(4).astype(np.float32)
    values = {p.path: (np.array([3], dtype=np.int64) if p.kind == "state"
                       else rng.uniform(-1.0, 1.0, p.shape).astype(np.float32))
              for p in manifest.inputs}
    results = loader(target)(compiled, "main")(
        torch.from_numpy(x), *(torch.from_numpy(v) for v in values.values()))
    np.testing.assert_allclose(as_numpy(results[0]), _reference(x, values), rtol=1e-5,
                               atol=1e-6)
    assert [int(as_numpy(r)[0]) for r in results[1:]] == [4, 4, 4]


def test_a_block_function_default_is_a_literal_of_its_type() -> None:
    text = """module m

enum Act { Tanh, Relu }

block B {
    param w: Tensor[4; f32]

    pub entry run(x: Tensor[4; f32], k: Act = Act.Relu) -> Tensor[4; f32] {
        return x * w
    }

    fn scale(x: Tensor[4; f32], s: f32 = true) -> Tensor[4; f32] {
        return x * s
    }
}
"""
    found = [(d.code, d.message) for d in _diagnostics(text)]
    assert found == [("E2101", "an entry cannot take or return Act"),
                     ("E2101", "the default of `k` is not a literal"),
                     ("E2103", "expected dtype f32, found bool")]


def test_an_optional_member_is_read_with_match() -> None:
    """Present, `b` is added; absent (no checkpoint, or one without it), it is not and the
    entry takes no input for it."""
    text = """module m

block B {
    param w: Tensor[4; f32]
    param b: Tensor[4; f32]? = none

    pub entry run(x: Tensor[4; f32]) -> Tensor[4; f32] {
        return match b {
            some(v) => x * w + v
            none => x * w
        }
    }
}
"""
    assert _diagnostics(text) == []
    x, w, b = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.full((4,), 2.0), torch.ones(4)
    for present, inputs, want in ((None, (x, w), x * w), (["w"], (x, w), x * w),
                                  (["w", "b"], (x, w, b), x * w + b)):
        compiled = compile_source(text, path="m.linnet", entry="run", target="torch",
                                  present=present)
        assert [p.path for p in compiled.parameters.inputs] == ["w", "b"][:len(inputs) - 1]
        (y,) = loader("torch")(compiled.text, "run")(*inputs)
        np.testing.assert_array_equal(as_numpy(y), as_numpy(want))


MATCH_CALL = """module m

block Leaf {
    param w: Tensor[4; f32]
    state uses: Tensor[1; i64]

    pub fn forward(x: Tensor[4; f32]) -> Tensor[4; f32] {
        uses = uses + 1
        return x * w
    }
}

block Root {
    sub a: Leaf

    fn pick(x: Tensor[4; f32], s: f32?) -> Tensor[4; f32] {
        return match s {
            some(v) => a.forward(x) * v
            none => x
        }
    }

    pub entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
        return pick(x, none)
    }
}
"""


def test_a_stateful_call_in_a_match_arm_is_not_hoisted_out_of_it() -> None:
    """Hoisted before the statement, the call would count a use on the `none` arm too: it
    is hoisted into the arm instead, and the `none` arm leaves the count as it was."""
    text = MATCH_CALL
    assert check_program("m.linnet", text).diagnostics == []
    compiled = compile_source(text, path="m.linnet", entry="main", target="torch").text
    x, w = torch.tensor([1.0, -2.0, 3.0, 0.5]), torch.tensor([2.0, 2.0, 2.0, 2.0])
    y, uses = loader("torch")(compiled, "main")(x, w, torch.tensor([4]))
    np.testing.assert_array_equal(as_numpy(y), as_numpy(x))  # the `none` arm: x as it is
    assert as_numpy(uses).tolist() == [4]
    some = text.replace("pick(x, none)", "pick(x, some(3.0))")
    compiled = compile_source(some, path="m.linnet", entry="main", target="torch").text
    y, uses = loader("torch")(compiled, "main")(x, w, torch.tensor([4]))
    np.testing.assert_allclose(as_numpy(y), as_numpy(x * w * 3.0))
    assert as_numpy(uses).tolist() == [5]
