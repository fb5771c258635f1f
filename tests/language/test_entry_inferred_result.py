"""An entry without `-> T` returns what its body returns, through every loader and printer:
a tuple result is a tuple (both items), not its first item. The checker gives such an
entry (or a `fn` no call inferred) its result type when it checks the body, so the
signature every loader reads has it; these tests run the same small program through the
PyTorch interpreter and generated module (`load_function`, `load`), JAX (`load_function`),
ONNX, StableHLO and a block entry, each fast (no kernel: the entry has no op)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.check.frontend import check_program
from linnet.fuzz.backends import as_numpy, compile_entry, loader

SOURCE = """module untyped_tuple

fn pair(x: Tensor[3; f32]) {
    return (x + 1.0, sum[i] x[i])
}

entry main(x: Tensor[3; f32]) {
    let n: i64 = 2
    return (x * 2.0, n)
}

entry called(x: Tensor[3; f32]) {
    let (a, s) = pair(x)
    return (a, s)
}
"""

BLOCK = """module untyped_block

block Model {
    param w: Tensor[3; f32]

    pub entry run(x: Tensor[3; f32]) {
        let n: i64 = 2
        return (x * w, n)
    }
}
"""

X = np.array([1.0, -2.0, 0.5], dtype=np.float32)


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("untyped") / "untyped_tuple.linnet"
    path.write_text(SOURCE)
    return str(path)


def _both(got) -> None:
    assert isinstance(got, tuple) and len(got) == 2
    np.testing.assert_array_equal(as_numpy(got[0]), X * 2)
    assert int(as_numpy(got[1])) == 2


def test_the_checker_gives_an_uncalled_entry_and_fn_their_inferred_results(program) -> None:
    from linnet.torch.loader import checked
    sigs = checked(SOURCE, program).root.signatures
    assert str(sigs["main"].result) == "(Tensor[3; f32], i64)"
    assert str(sigs["pair"].result) == "(Tensor[3; f32], f32)"
    assert check_program(program).diagnostics == []


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
def test_torch_load_function_returns_the_whole_tuple(program, compile: bool) -> None:
    import linnet.torch
    _both(linnet.torch.load_function(program, "main", compile=compile)(torch.from_numpy(X)))


def test_torch_load_returns_the_whole_tuple(program) -> None:
    import linnet.torch
    _both(linnet.torch.load(program, compile=False).main(torch.from_numpy(X)))


def test_jax_load_function_returns_the_whole_tuple(program) -> None:
    pytest.importorskip("jax")
    import linnet.jax
    _both(linnet.jax.load_function(program, "main")(X))


@pytest.mark.parametrize("target", ["interpreter", "torch", "jax", "onnx", "stablehlo"])
def test_every_printer_gives_both_items(program, target: str) -> None:
    compiled = compile_entry(SOURCE, program, "main", {}, target)
    _both(tuple(loader(target)(compiled, "main")(torch.from_numpy(X))))


def test_a_block_entry_returns_the_whole_tuple(tmp_path) -> None:
    import linnet.torch
    path = tmp_path / "untyped_block.linnet"
    path.write_text(BLOCK)
    model = linnet.torch.load(str(path), weights={"w": torch.full((3,), 2.0)}, compile=False)
    _both(model.run(torch.from_numpy(X)))
