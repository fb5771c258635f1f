"""One program through the checker and every backend, and what went wrong where.

Why: a program the checker accepts must compile and run on every target, and the targets
must agree. `crosscheck(text)` checks the program; for each entry it draws sizes that
satisfy the `where` clauses and inputs for them, runs the PyTorch interpreter (op bodies:
the reference), then compiles and runs generated PyTorch (kernels through Triton where it
imports, in its interpreter under `TRITON_INTERPRET=1`), generated JAX, the ONNX model in
onnxruntime and the StableHLO text in XLA, and for an entry returning one floating scalar
the `--grad` export of each. It sorts what happens into findings:

- `crash`: anything but a diagnostic escaped the compiler or a generated program (an
  internal error: the one kind that must never happen);
- `late`: the checker accepted the program but compiling it reported a diagnostic (the
  checker must find what compiling finds);
- `fault`: a run stopped at a runtime index out of range, which the program may not do
  (undefined behaviour, docs/language.md, "Statements and expressions"; PyTorch raises, XLA clamps);
- `hang`: checking, compiling or loading ran past its time limit; `slow`: running did (a
  program may loop for long, or forever: not counted as a failure);
- `disagree`: a backend's result differs from the interpreter's beyond the tolerance of
  its dtype (floats) or at all (integers, bools).

A program the checker rejects has no findings unless a diagnostic is malformed (no code or
no span). Nothing here is an oracle of its own: the interpreter is the reference, which is
why a disagreement names both sides.
"""

from __future__ import annotations

import contextlib
import math
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import harness
from ..check.frontend import check_program
from ..check.types import TensorT
from .backends import TARGETS, Timeout, as_numpy as _numpy, classify, compile_entry
from .backends import dtype_name as _dtype_name, loader, loader as _loader, time_limit
from .harness import tolerance_for
from .oracle import compare
from .precision import carried_dtype, program_floats

__all__ = ["Finding", "Report", "TARGETS", "crosscheck", "result_difference"]

KERNEL_TARGETS = ("torch", "jax")
MAX_ELEMENTS = 1 << 16
"""Inputs larger than this (in elements, all together) are not run, only compiled."""


@dataclass(frozen=True)
class Finding:
    kind: str  # crash, late, hang, disagree
    stage: str  # "check", "compile jax", "run onnx --grad", ...
    entry: str | None
    detail: str

    def __str__(self) -> str:
        where = f"{self.stage} of {self.entry}" if self.entry else self.stage
        return f"{self.kind} in {where}: {self.detail}"


@dataclass
class Report:
    checked: bool = False
    codes: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def crashes(self) -> list[Finding]:
        return [f for f in self.findings if f.kind in ("crash", "hang")]


class _Stage(Exception):
    """A stage failed; the finding is already recorded."""


class _Run:
    """The state of one crosscheck: the report, and the guard every stage runs under."""

    def __init__(self, path: str, text: str, seconds: float, kernels: str) -> None:
        self.path, self.text, self.seconds, self.kernels = path, text, seconds, kernels
        self.report = Report()

    def stage(self, name: str, entry: str | None, job: Callable[[], Any]) -> Any:
        """Run job; on a diagnostic, an internal error or a timeout record a finding and
        raise `_Stage`."""
        try:
            with time_limit(self.seconds):
                out = job()
        except (Timeout, Exception) as err:  # noqa: BLE001 - that is what is being looked for
            failure = classify(err, name, self.seconds, grad="--grad" in name)
            if failure is not None:
                self._find(failure.kind, name, entry, failure.detail)
            raise _Stage(name) from None
        self.report.ran.append(f"{name} {entry}" if entry else name)
        return out

    def _find(self, kind: str, stage: str, entry: str | None, detail: str) -> None:
        self.report.findings.append(Finding(kind, stage, entry, detail))


def crosscheck(text: str, path: str = "crosscheck.linnet", *, seed: int = 0,
               targets: Sequence[str] = TARGETS, grad: bool = True,
               seconds: float = 60.0, kernels: str = "compare") -> Report:
    """Check `text` (as if read from `path`) and run each entry through `targets`.

    Every target runs op bodies (`--numerics exact`) against the interpreter; generated
    PyTorch and JAX also run with kernels (`equivalent`) when the program has any, compared
    with the interpreter too if `kernels` is "compare", only run if "run" (a mutant whose op
    bodies were edited no longer matches its kernels), not at all if "skip". Each stage
    runs for at most `seconds`."""
    run = _Run(path, text, seconds, kernels)
    try:
        _check(run)
    except _Stage:
        return run.report
    if not run.report.checked:
        return run.report
    try:
        names = run.stage("entries", None, lambda: harness.entries(path, text))
    except _Stage:
        return run.report
    for k, name in enumerate(names):
        with contextlib.suppress(_Stage):
            _entry(run, name, random.Random(seed * 1000 + k), targets, grad)
    return run.report


def _check(run: _Run) -> None:
    result = run.stage("check", None, lambda: check_program(run.path, run.text))
    for d in result.diagnostics:
        if not re.fullmatch(r"E\d{4}", d.code) or not 0 <= d.span.start <= d.span.end:
            run._find("crash", "check", None, f"malformed diagnostic {d!r}")
    run.report.codes = [d.code for d in result.diagnostics]
    run.report.checked = not result.diagnostics


def _entry(run: _Run, name: str, rng: random.Random, targets: Sequence[str],
           grad: bool) -> None:
    spec = run.stage("spec", name, lambda: harness.target_spec(run.path, name, run.text))
    values = run.stage("sizes", name, lambda: harness.draw_values(spec, rng, max_dim=6))
    if values is None:
        return
    shapes = run.stage("sizes", name, lambda: spec.shapes(values))
    inputs = None
    if sum(math.prod(s) for s, _ in shapes) <= MAX_ELEMENTS:
        inputs = run.stage("inputs", name, lambda: harness.make_inputs(
            spec, values, seed=rng.randrange(1 << 30), device="cpu"))
    reference = _reference(run, name, values, inputs)
    for target in targets:
        with contextlib.suppress(_Stage):
            _target(run, name, values, inputs, target, reference, grad=False)
    if run.kernels != "skip" and harness.kernel_ops(run.path, run.text):
        against = reference if run.kernels == "compare" else None
        for target in set(targets) & set(KERNEL_TARGETS):
            with contextlib.suppress(_Stage):
                _target(run, name, values, inputs, target, against, grad=False,
                        numerics="equivalent")
    if grad and _floating_scalar(spec.result):
        reference = None
        for target in targets:
            with contextlib.suppress(_Stage):
                got = _target(run, name, values, inputs, target, reference, grad=True)
                reference = reference if reference is not None else (target, got)


def _floating_scalar(ty: Any) -> bool:
    return isinstance(ty, TensorT) and not ty.dims and str(ty.dtype) in (
        "f16", "bf16", "f32", "f64")


def _compile(run: _Run, name: str, values: dict, target: str, numerics: str, grad: bool
             ) -> Any:
    return compile_entry(run.text, run.path, name, values, target, numerics, grad)


def _reference(run: _Run, name: str, values: dict, inputs: list | None):
    """The interpreter's results (op bodies), or None when the inputs are too large."""
    program = run.stage("compile interpreter", name,
                        lambda: _compile(run, name, values, "interpreter", "exact", False))
    if inputs is None:
        return None
    main = loader("interpreter")(program, name)  # not `_loader`: the tests replace that
    out = run.stage("run interpreter", name, lambda: [
        (_numpy(x), _dtype_name(x)) for x in main(*inputs)])
    return ("the interpreter", out)


def _target(run: _Run, name: str, values: dict, inputs: list | None, target: str,
            reference: tuple[str, list] | None, grad: bool, numerics: str = "exact"
            ) -> list | None:
    """Compile (and run, and compare) one target; its results as (NumPy array, dtype)."""
    label = f"{target} --grad" if grad else target
    label += " kernels" if numerics != "exact" else ""
    text = run.stage(f"compile {label}", name,
                     lambda: _compile(run, name, values, target, numerics, grad))
    if inputs is None:
        return None
    main = run.stage(f"load {label}", name, lambda: _loader(target)(text, name))
    out = run.stage(f"run {label}", name,
                    lambda: [(_numpy(x), _dtype_name(x)) for x in main(*inputs)])
    if reference is not None:
        _compare(run, f"run {label}", name, reference, [array for array, _ in out])
    return out


def _compare(run: _Run, stage: str, name: str, reference: tuple[str, list],
             out: list) -> None:
    who, want = reference
    if len(out) != len(want):
        run._find("disagree", stage, name, f"{len(out)} results, {who} gave {len(want)}")
        return
    floats = program_floats(run.text)
    for k, (g, (w, dtype)) in enumerate(zip(out, want)):
        problem = result_difference(np.asarray(g), w, carried_dtype(dtype, floats))
        if problem:
            run._find("disagree", stage, name, f"result {k}: {problem} (against {who})")


def result_difference(got: np.ndarray, want: np.ndarray, dtype: str) -> str | None:
    """How `got` differs from `want` (of Linnet dtype `dtype`), or None if it does not: the
    oracle's comparison, with the kernel-against-body tolerances and a scale of at least 1."""
    tolerances = None
    if dtype in ("f16", "bf16", "f32", "f64"):
        tol = tolerance_for(dtype, reduction_length=64)
        tolerances = (tol.rtol, tol.atol)
    return compare(want, got, dtype, tolerances=tolerances, scale_floor=1.0)
