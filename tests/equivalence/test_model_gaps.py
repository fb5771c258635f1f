"""The model layer's later constructs on every target: spec programs 170-179.

Each program's module-level entries go through `linnet.fuzz.crosscheck` (the
interpreter, PyTorch, JAX, ONNX and StableHLO agree, and `--grad` of every entry that
returns one floating scalar compiles and agrees across targets). Its block entries, which
crosscheck does not draw, run here on every target with random inputs and weights
against the interpreter, and under `--grad` against each other.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.fuzz import crosscheck as cc
from linnet.fuzz.backends import as_numpy, compile_entry, loader

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

VALID = Path(__file__).resolve().parents[1] / "spec" / "valid"
PROGRAMS = sorted(VALID.glob("17[0-9]_*.linnet"))
TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")

# Block entries of the programs, with values for the root's generics and the entry's.
BLOCK_ENTRIES: dict[str, list[tuple[str, dict]]] = {
    "170_static_for_counter": [("run", {"K": 3, "H": 4})],
    "171_match_arm_vars": [("run", {})],
    "172_match_arm_state_calls": [("run", {})],
    "175_block_fn_inferred_result": [("run", {"H": 3, "B": 2}), ("loss", {"H": 3, "B": 2})],
}


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_module_entries_agree_on_every_target(path: Path) -> None:
    report = cc.crosscheck(path.read_text(), path.name)
    assert report.checked and report.findings == []


def _inputs(program, seed: int) -> list[torch.Tensor]:
    """Random values for every input of the interpreter's entry: floats in [-1, 1], small
    integers, bools."""
    rng = np.random.default_rng(seed)
    out = []
    for p in program.func(program.entry).params:
        shape, dtype = p.type.shape, p.type.dtype
        if dtype == "bool":
            out.append(torch.from_numpy(rng.integers(0, 2, shape).astype(bool)))
        elif dtype.startswith(("i", "u")):
            out.append(torch.from_numpy(rng.integers(0, 4, shape).astype(np.int64)))
        else:
            out.append(torch.from_numpy(rng.uniform(-1.0, 1.0, shape).astype(np.float32)))
    return out


def _run(path: Path, entry: str, bind: dict, target: str, inputs, grad: bool = False):
    compiled = compile_entry(path.read_text(), str(path), entry, bind, target, grad=grad)
    return [as_numpy(r).astype(np.float64) for r in loader(target)(compiled, entry)(*inputs)]


def _close(got: list, want: list, who: str) -> None:
    assert len(got) == len(want), who
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=who)


CASES = [(stem, entry, bind) for stem, entries in BLOCK_ENTRIES.items()
         for entry, bind in entries]


@pytest.mark.parametrize("stem, entry, bind", CASES, ids=lambda c: str(c))
def test_block_entries_agree_on_every_target(stem: str, entry: str, bind: dict) -> None:
    path = VALID / f"{stem}.linnet"
    program = compile_entry(path.read_text(), str(path), entry, bind, "interpreter")
    for seed in (0, 1):
        inputs = _inputs(program, seed)
        want = _run(path, entry, bind, "interpreter", inputs)
        for target in TARGETS[1:]:
            _close(_run(path, entry, bind, target, inputs), want, f"{stem}.{entry} {target}")


@pytest.mark.parametrize("stem, entry, bind", CASES, ids=lambda c: str(c))
def test_block_entries_differentiate_alike(stem: str, entry: str, bind: dict) -> None:
    """`--grad` of a block entry returning one floating scalar: every target agrees with
    generated PyTorch, and the loss with the plain entry's."""
    path = VALID / f"{stem}.linnet"
    program = compile_entry(path.read_text(), str(path), entry, bind, "interpreter")
    result = program.func(program.entry).body.result.type
    if getattr(result, "items", None):
        result = result.items[0]
    if result.shape != () or not result.dtype.startswith(("f", "bf")):
        pytest.skip("no floating scalar loss")
    inputs = _inputs(program, 2)
    want = _run(path, entry, bind, "torch", inputs, grad=True)
    assert want[0] == pytest.approx(_run(path, entry, bind, "interpreter", inputs)[0])
    for target in ("interpreter", "jax", "onnx", "stablehlo"):
        _close(_run(path, entry, bind, target, inputs, grad=True), want,
               f"{stem}.{entry} {target} --grad")


def test_an_op_with_an_optional_runs_its_kernel_where_it_is_present() -> None:
    """Spec program 173: `add_bias(x, some(b))` launches its kernel (on the GPU, or in
    Triton's interpreter); `none` and a presence known at run time run the body, and their
    instances have no kernel to count."""
    from kernel_cases import DEVICE
    from linnet.torch import load_function
    main = load_function(str(VALID / "173_optional_op_params.linnet"), "main")
    x = torch.randn(3, 4, device=DEVICE)
    b = torch.randn(4, device=DEVICE)
    for c in (True, False):
        y = main(x, b, torch.tensor(c, device=DEVICE))
        want = (x + b) + x + (x + b if c else x)
        torch.testing.assert_close(y, want)
    assert main.ran() == {"add_bias__R3_C4": {"kernel": 2, "body": 0}}
