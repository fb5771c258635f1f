"""One case through the oracle and every backend: what each gave, and the findings.

Why here: the driver runs this for every case of every program, and the reducer's
predicate runs it again, restricted to the one run (`only=`) whose failure class is being
reduced. Each run is an `Attempt`: a target ("interpreter", "torch", "jax", "onnx",
"stablehlo") in a mode: the forward pass on op bodies, with kernels, the `--grad` export,
or autograd through a runtime (`linnet.torch` with `backward()`, `linnet.jax` with
`jax.grad`). Its results are held to the oracle's (`linnet.fuzz.oracle`): the forward
results to `evaluate(case)`, gradients to `gradient_fd(case)`, with `compare`'s tolerances,
leaving out outputs too ill-conditioned to compare (`unstable_outputs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..diagnostics import CompileError
from . import backends
from .backends import Timeout
from .case import Case
from . import autograd, runtime_forward
from .findings import Finding
from .harness import kernel_ops
from . import oracle  # gradient_fd looked up at each call, so a test can replace it
from .oracle import (OracleError, OracleUndefined, compare, evaluate, gradient_slack,
                     unstable_positions)
from .oracle.dtypes import dtype_name
from .oracle.evaluate import floating_inputs, returned_states
from .precision import carried_dtype, program_floats

__all__ = ["ALL_TARGETS", "KERNEL_TARGETS", "Plan", "Attempt", "CaseResult", "attempts",
           "run_case"]

ALL_TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")
KERNEL_TARGETS = ("torch", "jax")
"""The targets that run kernels (Triton from PyTorch, Pallas from JAX) and have autograd."""
FLOATS = ("f16", "bf16", "f32", "f64")
PATH = "fuzz.linnet"


@dataclass(frozen=True)
class Plan:
    """What to run for each case: the targets, kernels (`--numerics equivalent` on the
    kernel targets), gradients (entries returning one floating scalar), the time limit of
    each stage, and where torch inputs live ("cuda" runs kernels on the GPU)."""
    targets: tuple[str, ...] = ALL_TARGETS
    kernels: bool = False
    grad: bool = False
    seconds: float = 60.0
    device: str = "cpu"


@dataclass(frozen=True)
class Attempt:
    """One run of a case: `target` in `mode` ("forward", "kernels", "grad", "autograd",
    "autograd kernels"); `label` names it in findings and reports."""
    target: str
    mode: str

    @property
    def label(self) -> str:
        suffix = {"forward": "", "kernels": " kernels", "grad": " --grad",
                  "autograd": " autograd", "autograd kernels": " autograd kernels"}
        return self.target + suffix[self.mode]

    @property
    def numerics(self) -> str:
        return "equivalent" if "kernels" in self.mode else "exact"

    @property
    def differentiates(self) -> bool:
        return self.mode in ("grad", "autograd", "autograd kernels")


def attempts(plan: Plan, has_kernels: bool, scalar_loss: bool) -> list[Attempt]:
    """Every run the plan asks of a case (kernel modes only for a program with kernels,
    gradients only for an entry returning one floating scalar)."""
    out = [Attempt(t, "forward") for t in plan.targets]
    ktargets = [t for t in plan.targets if t in KERNEL_TARGETS]
    kernels = plan.kernels and has_kernels
    if kernels:
        out += [Attempt(t, "kernels") for t in ktargets]
    if plan.grad and scalar_loss:
        out += [Attempt(t, "grad") for t in plan.targets]
        out += [Attempt(t, "autograd") for t in ktargets]
        if kernels:
            out += [Attempt(t, "autograd kernels") for t in ktargets]
    return out


@dataclass
class CaseResult:
    """Findings, each run's results (label to arrays, or the failure's text), how many runs
    completed, and why the case was skipped (the oracle found it undefined), if it was."""
    findings: list[Finding] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    runs: int = 0
    skipped: str | None = None


class _Stop(Exception):
    """A stage failed; its finding (if any) is recorded."""


_FAILED = object()
"""The oracle's gradients when computing them failed (see `_Runner.gradients`)."""


class _Runner:
    """The state of one case: the plan, the oracle's answers (computed when first needed),
    and the findings so far."""

    def __init__(self, case: Case, plan: Plan, path: str, program: str, index: int) -> None:
        self.case, self.plan, self.path = case, plan, path
        self.program, self.index = program, index
        self.result = CaseResult()
        self.expected: tuple = ()  # the oracle's results (`run_case` sets them)
        self._unstable: list[int] | None = None
        self._wide: tuple | None = None
        self._fd: tuple | object | None = None
        self._differentiable: bool | None = None
        self._layout: Layout | None = None
        self._slack: tuple | object | None = None

    def find(self, kind: str, target: str, stage: str, detail: str, signature: str) -> None:
        self.result.findings.append(Finding(kind, target, stage, detail, signature,
                                            self.program, self.index, self.case.entry))

    def guard(self, target: str, stage: str, job: Callable[[], Any], grad: bool = False
              ) -> Any:
        """Run a backend's stage under the time limit; a failure becomes a finding (sorted by
        `backends.classify`) and raises `_Stop`."""
        try:
            with backends.time_limit(self.plan.seconds):
                return job()
        except (Timeout, Exception) as err:  # noqa: BLE001 - that is what is looked for
            failure = backends.classify(err, stage, self.plan.seconds, grad=grad)
            if failure is not None:
                self.find(failure.kind, target, stage, failure.detail, failure.signature)
                self.result.outputs[target] = f"{failure.kind}: {failure.detail}"
            raise _Stop() from None

    def oracle(self, stage: str, job: Callable[[], Any]) -> Any:
        """Run an oracle computation: OracleUndefined skips the case (`None`), an
        OracleError or any other failure is an `oracle` finding (`_Stop`)."""
        try:
            with backends.time_limit(self.plan.seconds):
                return job()
        except OracleUndefined as err:
            self.result.skipped = f"undefined: {err}"
            return None
        except Timeout:
            self.find("slow", "oracle", stage, f"ran past {self.plan.seconds:g} s",
                      "time limit")
        except OracleError as err:
            self.find("oracle", "oracle", stage, f"OracleError: {err}",
                      backends.normalize(str(err)))
        except Exception as err:  # noqa: BLE001 - the oracle failing is a finding too
            self.find("oracle", "oracle", stage, backends.describe(err),
                      backends.signature(err))
        raise _Stop()

    def wide(self) -> tuple:
        """The oracle's results with every float computed in f64 (when first needed; empty
        when the oracle cannot give them)."""
        if self._wide is None:
            try:
                with backends.time_limit(self.plan.seconds):
                    self._wide = tuple(evaluate(self.case, precision="f64", path=self.path))
            except (Timeout, Exception):  # noqa: BLE001 - then no slack is given
                self._wide = ()
        return self._wide

    def unstable(self) -> list[int]:
        """The outputs too ill-conditioned to compare (`unstable_outputs`), from the oracle's
        results and `wide()`: the case is evaluated in f64 once, for both uses. Where the
        f64 evaluation fails, nothing is unstable."""
        if self._unstable is None:
            try:
                self._unstable = unstable_positions(self.expected, self.wide(),
                                                    reduction_length(self.case))
            except Exception:  # noqa: BLE001 - evaluate ran already: then nothing is unstable
                self._unstable = []
        return self._unstable

    def differentiable(self) -> bool:
        """Does `--grad` accept the entry? Where it refuses (E2128, E2129: a `while`
        carrying a float, say) the runtimes' autograd is not held to the oracle either."""
        if self._differentiable is None:
            try:
                with backends.time_limit(self.plan.seconds):
                    backends.compile_entry(self.case.text, self.path, self.case.entry,
                                           dict(self.case.generics), "interpreter", grad=True,
                                           present=self.case.present)
                self._differentiable = True
            except CompileError as err:
                self._differentiable = not {d.code for d in err.diagnostics} <= \
                    backends.GRAD_CODES
            except (Timeout, Exception):  # noqa: BLE001 - the grad attempts report it
                self._differentiable = True
        return self._differentiable

    def gradient_slack(self) -> tuple | None:
        """How far an honest backend's gradients may land from the oracle's when its `tanh`
        is a few ulps off (`oracle.gradient_slack`; computed once, when a gradient first
        differs; None for a program without `tanh`, or when it cannot be computed)."""
        if self._slack is None:
            try:
                with backends.time_limit(2 * self.plan.seconds):
                    self._slack = gradient_slack(self.case, path=self.path,
                                                 dtypes=("f32", "f64"), base=self._fd)
            except (Timeout, Exception):  # noqa: BLE001 - then no slack is given
                self._slack = _FAILED
        return None if self._slack is _FAILED else self._slack  # type: ignore[return-value]

    def layout(self) -> "Layout":
        """How the entry's results and gradients are laid out (after the oracle has
        evaluated it once)."""
        if self._layout is None:
            try:
                self._layout = Layout(returned_states(self.case, self.path),
                                      floating_inputs(self.case, self.path))
            except Exception:  # noqa: BLE001 - evaluate ran already: read it as plain
                self._layout = Layout(0, _float_positions(self.case))
        return self._layout

    def gradients(self) -> tuple | None:
        """The oracle's gradients, computed once: when that fails (past the time limit,
        say), every later attempt stops at once, with the one finding already made."""
        if self._fd is _FAILED:
            raise _Stop()
        if self._fd is None:
            compared = ("f32", "f64")  # half-precision gradients are not compared
            try:
                self._fd = self.oracle("gradient", lambda: oracle.gradient_fd(
                    self.case, path=self.path, dtypes=compared))
            except _Stop:
                self._fd = _FAILED
                raise
            if self._fd is not None:
                self.result.outputs["oracle gradient"] = list(self._fd)
        return self._fd


@dataclass(frozen=True)
class Layout:
    """What the oracle reads of the entry: how many next states it returns after its
    results (a block entry's), and the positions of the inputs its gradients are taken
    for (floating inputs; a block entry's own, then its floating params)."""
    states: int
    differentiated: list[int]


def reduction_length(case: Case) -> int:
    """The reduction length the tolerances assume: the largest axis of any input (as the
    kernel harness does), at least 1."""
    return max([n for x in case.inputs for n in np.shape(x)] or [1])


def run_case(case: Case, plan: Plan, *, path: str = PATH, program: str = "", index: int = 0,
             only: str | None = None, has_kernels: bool | None = None) -> CaseResult:
    """Evaluate the oracle on `case`, then run every attempt of `plan` (only the one
    labelled `only`, when given; "oracle" runs the oracle alone) and compare."""
    run = _Runner(case, plan, path, program, index)
    try:
        expected = run.oracle("evaluate", lambda: _evaluate(case, path))
    except _Stop:
        return run.result
    if expected is None or only == "oracle":
        return run.result
    run.expected = tuple(expected)
    run.result.outputs["oracle"] = list(expected)
    if has_kernels is None:
        has_kernels = "kernel" in case.text and _has_kernels(case.text, path)
    scalar = (len(expected) == 1 + run.layout().states and expected[0].ndim == 0
              and _dtype(expected[0]) in FLOATS)
    for attempt in attempts(plan, has_kernels, scalar):
        if only is not None and attempt.label != only:
            continue
        try:
            _attempt(run, attempt, expected)
            run.result.runs += 1
        except _Stop:
            pass
        if run.result.skipped:
            break
    return run.result


def _evaluate(case: Case, path: str) -> tuple:
    return evaluate(case, path=path)


def _has_kernels(text: str, path: str) -> bool:
    try:
        return bool(kernel_ops(path, text))
    except Exception:  # noqa: BLE001 - a program the harness cannot read: no kernel runs
        return False


def _dtype(x: np.ndarray) -> str:
    return dtype_name(np.asarray(x))


# ------------------------------------------------------------------------------------------
# One attempt: compile, load, run, compare.

def _attempt(run: _Runner, attempt: Attempt, expected: tuple) -> None:
    label, case = attempt.label, run.case
    if attempt.mode.startswith("autograd"):
        got = _autograd(run, attempt)
    elif attempt.target == "interpreter" and attempt.mode == "forward" \
            and run.guard(label, "compile", lambda: runtime_forward.module_entry(case, run.path)):
        got = _through_runtime(run, label)
    else:
        grad = attempt.mode == "grad"
        compiled = run.guard(label, "compile", lambda: backends.compile_entry(
            case.text, run.path, case.entry, dict(case.generics), attempt.target,
            attempt.numerics, grad, present=case.present), grad=grad)
        main = run.guard(label, "load",
                         lambda: backends.loader(attempt.target)(compiled, case.entry))
        inputs = _torch_inputs(case, run.plan.device if attempt.target in ("interpreter",
                                                                             "torch")
                               else "cpu")
        raw = run.guard(label, "run", lambda: list(main(*inputs)))
        got = [(backends.as_numpy(x), backends.dtype_name(x)) for x in raw]
    run.result.outputs[label] = [array for array, _ in got]
    if not attempt.differentiates:
        _compare(run, label, got, [_Want(e, "result", k) for k, e in enumerate(expected)])
        return
    fd = run.gradients()
    if fd is None:
        return
    want = [_Want(expected[0], "loss", 0)] + [
        _Want(g, "gradient", k, _dtype(np.asarray(case.inputs[position])))
        for k, (g, position) in enumerate(zip(fd, run.layout().differentiated))]
    if attempt.mode == "grad":  # a block entry's `--grad` export: its next states last
        want += [_Want(e, "state", k) for k, e in enumerate(expected[1:], start=1)]
    _compare(run, label, got, want)


def _through_runtime(run: _Runner, label: str) -> list[tuple[np.ndarray, str]]:
    """A module-level entry's interpreter run through `load_function(compile=False)`'s
    callable, as users call it (runtime_forward.py)."""
    case = run.case
    inputs = _torch_inputs(case, run.plan.device)
    fn = run.guard(label, "compile",
                   lambda: runtime_forward.interpreter_function(case, run.path, inputs))
    raw = run.guard(label, "run", lambda: runtime_forward.as_outputs(fn(*inputs)))
    return [(backends.as_numpy(x), backends.dtype_name(x)) for x in raw]


def _torch_inputs(case: Case, device: str) -> list:
    return [backends.to_torch(x, device) for x in case.inputs]


def _autograd(run: _Runner, attempt: Attempt) -> list[tuple[np.ndarray, str]]:
    """The loss and the gradient of each differentiated input by the runtime's own
    autograd: through its entry callable, or a block entry through the model it loads."""
    label, case = attempt.label, run.case
    if not run.differentiable():
        raise _Stop()
    split = run.guard(label, "load", lambda: autograd.block_case(case, run.path))
    if split is not None:
        job = run.guard(label, "load", lambda: autograd.load_block(
            attempt.target, run.path, case, split, attempt.numerics, run.plan.device))
    else:
        floats = _float_positions(case)
        fn = run.guard(label, "load", lambda: autograd.entry_function(
            attempt.target, run.path, case, attempt.numerics))
        job = lambda: autograd.module_autograd(  # noqa: E731
            attempt.target, fn, case, floats, run.plan.device)
    loss, grads = run.guard(label, "run", job)
    return [(backends.as_numpy(loss), backends.dtype_name(loss))] + [
        (backends.as_numpy(g), backends.dtype_name(g)) for g in grads]


def _float_positions(case: Case) -> list[int]:
    return [k for k, x in enumerate(case.inputs) if _dtype(np.asarray(x)) in FLOATS]


@dataclass(frozen=True)
class _Want:
    """What a result is held to: the oracle's value, what it is (a `result`, the `loss`, a
    `gradient`, a next `state`), its position among those (for a result or state, among
    the oracle's outputs), and for a gradient its input's dtype."""
    expected: np.ndarray
    role: str
    index: int
    input_dtype: str | None = None

    @property
    def native(self) -> bool:
        return self.role != "gradient"

    @property
    def what(self) -> str:
        return {"result": f"result {self.index}", "loss": "loss",
                "gradient": f"gradient {self.index}", "state": f"state {self.index}"}[
            self.role]


def _compare(run: _Runner, label: str, got: list, want: list[_Want]) -> None:
    """Hold each result to the oracle's: its count, dtype and values (`compare`), skipping
    outputs `unstable_outputs` finds ill-conditioned (for gradients: when the loss is)."""
    if len(got) != len(want):
        run.find("disagree", label, "compare",
                 f"{len(got)} results, the oracle gives {len(want)}", "result count")
        return
    n = reduction_length(run.case)
    floats = program_floats(run.case.text, run.case.generics,
                            [_dtype(np.asarray(x)) for x in run.case.inputs])
    for (array, dtype), w in zip(got, want):
        expected, what = w.expected, w.what
        want_dtype = _dtype(expected) if w.native else w.input_dtype
        if w.native and dtype != want_dtype and not (
                want_dtype == "bf16" and dtype == "f32" and label.startswith("onnx")):
            run.find("disagree", label, "compare",
                     f"{what} has dtype {dtype}, the oracle's {want_dtype}", "dtype")
            continue
        # central differences are good to about 1e-8: an f64 gradient gets f32's tolerance
        held_to = carried_dtype(want_dtype, floats | ({"f32"} if not w.native else set()))
        problem = compare(expected, array, held_to, n, scale_floor=1.0)
        if problem is not None and w.native and want_dtype in FLOATS:
            problem = compare(expected, array, held_to, n, scale_floor=1.0,
                              slack=_rounding_slack(run, w.index, expected))
        if problem is not None and not w.native and want_dtype in ("f32", "f64"):
            slack = run.gradient_slack()
            if slack is not None:
                problem = compare(expected, array, held_to, n, scale_floor=1.0,
                                  slack=slack[w.index])
        if problem is None:
            continue
        if not w.native and want_dtype not in ("f32", "f64"):
            continue  # a half-precision gradient is not the f64 difference quotient's
        if want_dtype in FLOATS and (0 if w.role == "gradient" else w.index) in run.unstable():
            continue
        if not w.native and _only_at_kinks(run, w.index, expected, array, n):
            continue
        run.find("disagree", label, "compare", f"{what}: {problem}",
                 _difference_signature(what, want_dtype, problem))


def _only_at_kinks(run: _Runner, k: int, expected: np.ndarray, array: np.ndarray, n: int
                   ) -> bool:
    """Do the gradient of floating input k and the difference quotients differ only where
    the loss has no derivative? At a kink (a tie of `min`, `abs` at 0) the one-sided
    differences disagree, the central one is their mean, and autograd picks a subgradient:
    those elements are not compared."""
    kinks = _kinks(run, run.layout().differentiated[k])
    if not kinks.any():
        return False
    patched = np.where(kinks, expected, np.asarray(array, np.float64))
    return compare(expected, patched, "f32", n) is None


def _kinks(run: _Runner, position: int, eps: float = 1e-6) -> np.ndarray:
    """Where the loss's one-sided difference quotients (f64) in input `position` disagree."""
    case, inputs = run.case, [np.asarray(x) for x in run.case.inputs]
    x = inputs[position].astype(np.float64)

    def loss(value: np.ndarray) -> float:
        shifted = list(inputs)
        shifted[position] = value
        return float(evaluate(case.with_inputs(tuple(shifted)), precision="f64",
                              path=run.path)[0])
    base = loss(x)
    out = np.zeros(x.shape, dtype=bool)
    for pos in np.ndindex(*x.shape):
        h = eps * max(1.0, abs(float(x[pos])))
        up, down = x.copy(), x.copy()
        up[pos] += h
        down[pos] -= h
        forward, backward = (loss(up) - base) / h, (base - loss(down)) / h
        out[pos] = abs(forward - backward) > 1e-4 * (1 + max(abs(forward), abs(backward)))
    return out


def _rounding_slack(run: _Runner, k: int, expected: np.ndarray) -> np.ndarray | None:
    """Twice the oracle's own rounding error in result k (its value against the same
    computation in f64): a backend rounding in another order may err as much again, and
    in half precision an error of an ulp inside `sin` of a large argument is more than
    the tolerance."""
    wide = run.wide()
    if k >= len(wide) or np.shape(wide[k]) != np.shape(expected):
        return None
    return 2 * np.abs(np.asarray(expected, np.float64) - np.asarray(wide[k], np.float64))


def _difference_signature(what: str, dtype: str, problem: str) -> str:
    """How a result differs, without its values: gradient or value, float or integer, and
    whether NaN, infinities or the shape are what differ."""
    part = "gradient" if what.startswith("gradient") else "value"
    kind = "float" if dtype in FLOATS else ("bool" if dtype == "bool" else "integer")
    if problem.startswith("shape"):
        return f"{part} shape"
    if problem.startswith("NaN"):
        return f"{part} NaN or infinity"
    return f"{part} {kind}"
