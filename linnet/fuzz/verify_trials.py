"""Where `linnet verify` runs each size: in a child process, so that a kernel that kills its
process is a verdict (`crashed: SIGABRT`) and not the end of the command.

Why a child: a kernel that writes out of bounds corrupts the heap of the process it runs
in (`free(): invalid pointer`, SIGABRT), a runtime can segfault, a launch can hang in
native code where no Python timeout reaches. `ChildTrials` runs the sizes of a whole
command in one spawned child (importing torch and Triton once), answers a `Trial` marked
`crashed` when the child dies or runs past the time limit (it is killed), and starts a
fresh child for the next size. `InProcessTrials` runs them here (`--in-process`, for a
debugger; a native crash then ends the command).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import first_line
from .child_process import Died, Worker
from .harness import Comparison, ProgramError, TargetSpec, compare_kernel_and_body, make_inputs
from .spec_refs import from_ref, spec_ref

__all__ = ["Trial", "Settings", "Trials", "InProcessTrials", "ChildTrials", "run_trial",
           "CHILD_IMPORTS", "DEFAULT_SECONDS"]

DEFAULT_SECONDS = 600.0
"""The time limit of one size (both compilations, the body's and the kernel's runs, forward
and backward), past which its child is killed: a kernel stuck in native code."""

CHILD_IMPORTS: tuple[str, ...] = ()
"""Modules each new child imports before its first size. A test plants a crash this way
(a module that makes kernels call `os.abort()`), as `linnet fuzz --rules` plants one in
the fuzzer's workers; read when a `ChildTrials` is made."""


@dataclass
class Trial:
    """One size: its generic values, input style and seed, and what came of it: the
    comparison, an error of the harness (compiling, say), or the child's death."""
    values: dict[str, Any]
    style: str
    seed: int
    comparison: Comparison | None = None
    error: str | None = None  # the harness itself failed (compiling, say)
    crashed: str | None = None  # the process died: `SIGABRT`, `timed out after 600 s`

    @property
    def ok(self) -> bool:
        return (self.error is None and self.crashed is None and self.comparison is not None
                and self.comparison.ok)

    def same_failure(self, other: "Trial") -> bool:
        """Does this trial fail the way `other` does (the shrinker keeps a crash a crash of
        the same cause, and a disagreement one that does not crash)?"""
        if self.ok:
            return False
        return self.crashed == other.crashed


@dataclass(frozen=True)
class Settings:
    """What every size of one verification is run with."""
    numerics: str = "equivalent"
    device: str = "cpu"
    grad: bool = True
    target: str = "torch"
    tuning: Any = False  # compile_source's for the kernels (False: the op headers')


class Trials(Protocol):
    """Runs one size of a spec; `close` ends whatever process it keeps. One serves the
    specs of a whole command, whatever their settings. `deaths`: processes that died with
    no one size to blame (said after the tables; they fail the command)."""

    deaths: list[str]

    def __call__(self, spec: TargetSpec, values: dict[str, Any], style: str, seed: int,
                 settings: Settings) -> Trial: ...

    def close(self) -> None: ...


def run_trial(spec: TargetSpec, values: dict[str, Any], style: str, seed: int,
              settings: Settings) -> Trial:
    """One size in this process: random inputs through the body and the kernel. A program
    with errors raises `ProgramError`; any other failure is the trial's `error`."""
    trial = Trial(dict(values), style, seed)
    s = settings
    try:
        inputs = make_inputs(spec, values, seed=seed, style=style, device=s.device)
        trial.comparison = compare_kernel_and_body(
            spec.path, spec, inputs, numerics=s.numerics, device=s.device, grad=s.grad,
            text=spec.text, values=values, seed=seed, target=s.target,
            tuning=s.tuning)
    except ProgramError:
        raise
    except Exception as err:  # noqa: BLE001 - reported as a failing trial
        trial.error = f"{type(err).__name__}: {first_line(err)}"
    return trial


class InProcessTrials:
    """Every size in this process."""

    def __init__(self) -> None:
        self.deaths: list[str] = []

    def __call__(self, spec: TargetSpec, values: dict[str, Any], style: str, seed: int,
                 settings: Settings) -> Trial:
        return run_trial(spec, values, style, seed, settings)

    def close(self) -> None:
        pass


class ChildTrials:
    """Every size in one child process, a new one after each that died (`Trial.crashed`)
    or ran past `seconds` (killed).

    Memory a kernel corrupts may abort its process only later, when it is freed: a death
    in a child that ran other sizes before is tried again alone, in a new child, and is the
    size's only when it dies there too; otherwise, and for a child that dies as it ends,
    the sizes it ran are named in `deaths`."""

    def __init__(self, seconds: float = DEFAULT_SECONDS) -> None:
        self.seconds = seconds
        self.worker = Worker(_init_child, tuple(CHILD_IMPORTS), "verify child")
        self.deaths: list[str] = []
        self.ran: list[str] = []  # the sizes the current child ran

    def __call__(self, spec: TargetSpec, values: dict[str, Any], style: str, seed: int,
                 settings: Settings) -> Trial:
        job = (spec_ref(spec), dict(values), style, seed, settings)
        here = f"{spec.label} at {spec.describe(values) or 'its sizes'}"
        if self.worker.fresh:
            self.ran = []
        answer = self.worker.call(_run_job, job, self.seconds)
        if isinstance(answer, Died) and answer.timeout is None and self.ran:
            before, self.ran = self.ran, []
            answer_alone = self.worker.call(_run_job, job, self.seconds)
            if not isinstance(answer_alone, Died):
                self.deaths.append(
                    f"the verify child died of {answer.cause} running {here}, which did not "
                    f"crash alone: {_blame(before)}")
            answer = answer_alone
        if isinstance(answer, Died):
            self.ran = []
            return Trial(dict(values), style, seed, crashed=answer.cause)
        self.ran.append(here)
        return answer

    def close(self) -> None:
        died = self.worker.close()
        if died is not None and self.ran:
            self.deaths.append(f"the verify child died of {died.cause} as it ended: "
                               f"{_blame(self.ran)}")
        self.ran = []


def _blame(sizes: list[str]) -> str:
    return ("a size it ran before may have corrupted its memory (" + "; ".join(sizes) + ")")


def _init_child(imports: tuple[str, ...]) -> None:
    for name in imports:
        importlib.import_module(name)


def _run_job(job: tuple) -> Trial:
    """The child's side: the spec made again from its reference, then the size."""
    ref, values, style, seed, settings = job
    return run_trial(from_ref(ref), values, style, seed, settings)
