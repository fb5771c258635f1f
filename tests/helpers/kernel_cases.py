"""Shared helpers of the equivalence tests: example paths, the device, example counts.

Test modules import it by name (`from kernel_cases import ...`).

Kernels run with Triton on CUDA when a device is present, else in Triton's interpreter
(`tests/conftest.py` sets `TRITON_INTERPRET=1` before Triton is imported). Example counts
scale with the hypothesis profile (`HYPOTHESIS_PROFILE=ci|gpu|thorough`, "ci" by default):
two random cases for a full-weight op under "ci", beside each test's fixed `@example`s
(the edges: single rows, one past a tile, whole tiles), a hundred under "thorough".
"""

from __future__ import annotations

from pathlib import Path

from linnet.fuzz import compare_kernel_and_body, default_device

from budget import scaled, under_ci

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
HERE = Path(__file__).resolve().parents[1] / "equivalence"
DEVICE = default_device()


def example(name: str) -> str:
    return str(EXAMPLES / f"{name}.linnet")


def examples(weight: float = 1.0) -> int:
    """`weight` times the profile's count of random cases: heavier ops get fewer. Each one
    compiles the op twice and runs its kernel in Triton's interpreter on the CPU, so "ci"
    draws two for a full-weight op (at least one), beside the test's fixed `@example`s (the
    edges); the other profiles `scaled(5)` (at least 2): a hundred under "thorough"."""
    if under_ci():
        return max(1, round(2 * weight))
    return max(2, round(scaled(5) * weight))


def assert_agree(spec, case, *, numerics: str = "equivalent", grad: bool = True):
    """Run the case's inputs through body and kernel; fail with the comparison's report."""
    result = compare_kernel_and_body(spec.path, spec.name, case.inputs, numerics=numerics,
                                     device=DEVICE, grad=grad, text=spec.text,
                                     values=case.values, seed=case.seed)
    assert result.ok, f"{case!r}\n{result}"
    return result


def case_at(spec, style: str = "normal", seed: int = 0, overrides=None, **values):
    """A fixed case (for `@example`): the given generic values, inputs from `seed`."""
    from linnet.fuzz import make_inputs
    from linnet.testing.strategies import Case
    assert spec.satisfies(values), f"{values} fail the where clauses of {spec.label}"
    inputs = make_inputs(spec, values, seed=seed, style=style, overrides=overrides,
                         device=DEVICE)
    shown = f"{spec.describe(values)}; {spec.describe_inputs(values)}"
    return Case(dict(values), inputs, style, seed, shown)
