"""Run a generated case through the PyTorch interpreter and generated PyTorch.

Why here: a program that checks but is not tame (it overflows, divides by zero, reads out
of range, makes a NaN) is a bug of the generator, and the cheapest way to find one is to
run its cases on the CPU. `run_case` gives each target's results as NumPy arrays; the
generator's tests compare them and look for NaNs.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..backends import as_numpy, dtype_name
from ..case import Case
from ...pipeline import compile_source, passes_for
from ...torch.runtime import import_generated
from ..crosscheck import result_difference

__all__ = ["to_torch", "run_case", "NotTame", "assert_tame", "differences"]

Results = dict[str, list[tuple[np.ndarray, str]]]


class NotTame(AssertionError):
    """A case whose results hold a NaN (the generator promised none)."""


def to_torch(x: np.ndarray) -> Any:
    """A NumPy input as the torch tensor `main` takes (bf16 through f32, exactly)."""
    import torch
    if x.dtype.name == "bfloat16":
        return torch.from_numpy(np.array(x.astype(np.float32), order="C")).to(torch.bfloat16)
    return torch.from_numpy(np.array(x, order="C"))


def _numpy(x: Any) -> tuple[np.ndarray, str]:
    """A result as a NumPy array (bf16 as f32, exactly) and its Linnet dtype name."""
    return as_numpy(x), dtype_name(x)


def run_case(case: Case, targets: Sequence[str] = ("interpreter", "torch"),
             numerics: str = "exact", grad: bool = False, device: str = "cpu") -> Results:
    """Each target's results for the case, as (array, dtype name): `interpreter` (op
    bodies, the reference) and `torch` (the generated module, compiled with `numerics`;
    with `grad`, the `--grad` export: the loss, then each floating input's gradient)."""
    from ...torch.interpreter import run as interpret
    path = "fuzz.linnet"
    out: dict[str, list[np.ndarray]] = {}
    for target in targets:
        inputs = [to_torch(x).to(device) for x in case.inputs]
        if target == "interpreter":
            passes = [p for p in passes_for("torch") if p.name != "emit-torch"]
            program = compile_source(case.text, path=path, entry=case.entry,
                                     bind=dict(case.generics), target="torch",
                                     numerics="exact", passes=passes).text
            results = interpret(program, *inputs)
        else:
            text = compile_source(case.text, path=path, entry=case.entry,
                                  bind=dict(case.generics), target="torch",
                                  numerics=numerics, grad=grad and target == "torch").text
            results = import_generated(text, f"fuzz_{case.entry}", "torch").main(*inputs)
        out[target] = [_numpy(r) for r in results]
    return out


def assert_tame(results: Results) -> None:
    """No result of any target holds a NaN."""
    for target, arrays in results.items():
        for k, (a, _) in enumerate(arrays):
            if a.dtype.kind == "f" and np.isnan(a).any():
                raise NotTame(f"{target}: result {k} holds a NaN")


def differences(results: Results, reference: str = "interpreter") -> list[str]:
    """How each other target's results differ from the reference's (per-dtype tolerances
    for floats, exact for the rest), as crosscheck compares them."""
    want = results[reference]
    out = []
    for target, got in results.items():
        if target == reference:
            continue
        for k, ((g, _), (w, dtype)) in enumerate(zip(got, want)):
            problem = result_difference(g, w, dtype)
            if problem:
                out.append(f"{target} result {k}: {problem}")
    return out
