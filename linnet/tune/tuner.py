"""`linnet.tune.tune`: find an op's fastest kernel choice at one binding, checked, recorded.

For the op at the bound sizes, each candidate of `candidates.py` is compiled through the
whole pipeline with its choice as the compilation's `KernelTuning` (exactly as a tuning
file would give it), run on random inputs of the bound shapes and compared with the op's
body (the verify machinery: `linnet.fuzz.harness`, the body compiled with
`numerics="exact"`, the tolerances of `linnet verify`), and timed. Only a candidate that
agrees with the body may win; the winner is recorded in the tuning file.

Timing is on the device the inputs live on: on CUDA `triton.testing.do_bench` (warm, the
median of its repetitions); on the CPU, Triton's interpreter, timed with the wall clock
(for tests of the tool, not for choosing tiles). `timer=` replaces either: a callable
`(candidate, run) -> milliseconds`, where `run()` calls the compiled entry once.
"""

from __future__ import annotations

import datetime
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..version import __version__
from ..diagnostics import CompileError
from ..fuzz.harness import (compare_outputs, compiled, default_device, dtype_name, kernel_runtime,
                            make_inputs, target_spec, tolerance_for)
from ..errors import LinnetError, first_line
from ..ir.numerics import KERNEL_MODES
from ..passes.front.bind_generics import UsageError
from ..passes.kernels.kernel_tuning import KernelTuning
from ..pipeline import FRONT, MIDDLE, compile_source
from ..tuning.candidates import DEFAULT_CAP, Candidate, CandidateError, CandidateSpace, candidate_space
from ..tuning.records import TuningFile, tuning_path

Timer = Callable[[Candidate, Callable[[], Any]], float]
STYLES = ("normal", "uniform")


class TuneError(LinnetError, ValueError):
    """A tuning run that cannot start as asked: an unknown op, a missing size, a name that is
    not tunable, kernels that cannot run here. The message says which."""


@dataclass
class Trial:
    """One candidate, tried: its time, and whether it agreed with the op's body."""
    candidate: Candidate
    time_ms: float | None = None
    checked: bool = False  # agreed with the body on every input drawn
    worst: float | None = None  # the worst error, as a fraction of its tolerance
    problem: str | None = None  # did not compile, raised, or disagreed

    @property
    def ok(self) -> bool:
        """May it win? It agreed with the body and was timed."""
        return self.checked and self.problem is None and self.time_ms is not None

    def as_dict(self) -> dict:
        return {**self.candidate.as_dict(), "time_ms": self.time_ms, "checked": self.checked,
                "worst_of_tolerance": self.worst, "problem": self.problem}


@dataclass
class TuneResult:
    """A tuning run: the candidates tried, the winner, and where it was recorded."""
    path: str
    op: str  # the op's name in the file
    space: CandidateSpace
    values: dict[str, Any]
    numerics: str
    device: str  # the device's name, as the tuning file keys it
    runtime: str  # how kernels ran ("Triton on the GPU", "the Triton interpreter (CPU)")
    trials: list[Trial] = field(default_factory=list)
    tuning_path: str = ""
    recorded: bool = False

    @property
    def winner(self) -> Trial | None:
        passing = [t for t in self.trials if t.ok]
        return min(passing, key=lambda t: t.time_ms) if passing else None

    @property
    def header(self) -> Trial | None:
        """The trial of the header's choice (None when the filter left it out)."""
        return next((t for t in self.trials if t.candidate == self.space.header), None)

    @property
    def ok(self) -> bool:
        return self.winner is not None

    def speedup(self) -> float | None:
        """The header's choice's time over the winner's, when both ran and agreed."""
        win, head = self.winner, self.header
        if win is None or head is None or not head.ok or not win.time_ms:
            return None
        return head.time_ms / win.time_ms

    def record_entry(self) -> dict[str, Any]:
        """What the tuning file keeps for the winner."""
        win = self.winner
        assert win is not None
        head = self.header
        return {"kernel": self.space.kernel, "generics": dict(win.candidate.generics),
                "warps": win.candidate.warps, "stages": win.candidate.stages,
                "time_ms": round(win.time_ms, 6),
                "header_time_ms": round(head.time_ms, 6) if head and head.ok else None,
                "candidates": len(self.trials),
                "date": datetime.date.today().isoformat(), "linnet": __version__}


def tune(path: str | os.PathLike, op: str, bind: Mapping[str, Any], *,
         candidates: Mapping[str, Sequence[int]] | None = None,
         warps: Sequence[int] | None = None, stages: Sequence[int] | None = None,
         numerics: str = "equivalent", tuning: str | os.PathLike | None = None,
         device: str | None = None, timer: Timer | None = None,
         max_candidates: int = DEFAULT_CAP, checks: int = 2, seed: int = 0,
         record: bool = True, progress: Callable[[int, int, Trial], None] | None = None
         ) -> TuneResult:
    """Tune the kernel of op `op` of the program at `path` for the sizes `bind` (every
    generic of the op: `{"M": 4096, "N": 4096, "K": 4096}`), and record the winner.

    `candidates` gives values to try per tunable generic (`{"BM": [64, 128]}`; default: the
    header's value, half and double); `warps`/`stages` the launch hints to try (default
    (4, 8) and (2, 3, 4), plus the kernel's own). `numerics` is "equivalent" or "fast".
    `checks` random inputs (normal, then uniform values) are compared with the op's body.
    `device` is "cuda" or "cpu" (default: CUDA when available; on the CPU kernels need
    `TRITON_INTERPRET=1` set before Triton is imported). The winner is written to the
    tuning file (`tuning`, else `$LINNET_TUNING`, else `linnet.tuning.json` beside the
    source) unless `record=False`. Raises `TuneError` for a run that cannot start,
    `linnet.fuzz.ProgramError` for a program with errors and
    `linnet.tune.TuningFileError` for a tuning file that cannot be read.
    """
    device = device or default_device()
    runs, runtime = kernel_runtime(device)
    if not runs:
        raise TuneError(f"kernels cannot run here: {runtime}")
    file = TuningFile.load(tuning_path(tuning, path), missing_ok=True)  # fail early if bad
    spec, values, space = _plan(path, op, bind, candidates, warps, stages, numerics,
                                max_candidates)
    result = TuneResult(str(path), op, space, values, numerics, device_name(device), runtime,
                        tuning_path=file.path)
    inputs, body = _inputs_and_body(spec, values, device, checks, seed,
                                    compiled(spec, values, "exact")[0])
    timer = timer or default_timer(device)
    for k, cand in enumerate(space.candidates):
        tuning_k = KernelTuning((cand.choice(space.op, space.binding, numerics, space.kernel),),
                                "the candidate", result.device)
        trial = _try(cand, lambda: compiled(spec, values, numerics, tuning_k), space,
                     inputs, body, numerics, timer)
        result.trials.append(trial)
        if progress:
            progress(k + 1, len(space.candidates), trial)
    if record and result.winner is not None:
        file.record(result.device, space.op, space.binding, numerics, result.record_entry())
        file.save()
        result.recorded = True
    return result


def plan(path: str | os.PathLike, op: str, bind: Mapping[str, Any], *,
         candidates: Mapping[str, Sequence[int]] | None = None,
         warps: Sequence[int] | None = None, stages: Sequence[int] | None = None,
         numerics: str = "equivalent", max_candidates: int = DEFAULT_CAP) -> CandidateSpace:
    """The candidates `tune` would try, in order, and those the filter leaves out (nothing
    is compiled in full or run: `linnet tune --list`)."""
    return _plan(path, op, bind, candidates, warps, stages, numerics, max_candidates)[2]


def _plan(path, op, bind, candidates, warps, stages, numerics, cap):
    if numerics not in KERNEL_MODES:
        raise TuneError(f"numerics {numerics!r}: kernels run under equivalent or fast")
    if cap < 1:
        raise TuneError(f"the cap on candidates must be at least 1, not {cap}")
    spec = _spec(path, op)
    values, bound, analysis = _bound(spec, bind)
    try:
        space = candidate_space(analysis, bound, numerics, tries=candidates, warps=warps,
                                stages=stages, cap=cap)
    except CandidateError as err:
        raise TuneError(str(err)) from None
    return spec, values, space


def _spec(path, op: str):
    try:
        spec = target_spec(path, op)
    except KeyError:
        raise TuneError(f"no op named `{op}` in {path}") from None
    if spec.kind != "op":
        raise TuneError(f"`{op}` is an entry; tune an op that binds a kernel")
    if spec.kernel is None:
        raise TuneError(f"op `{op}` binds no kernel; nothing to tune")
    return spec


def _bound(spec, bind: Mapping[str, Any]):
    """The op's generic values, its instance's kernel binding and the checked program."""
    names = [g.name for g in spec.generics]
    unknown = sorted(set(bind) - set(names))
    if unknown:
        raise TuneError(f"--bind {unknown[0]}: op `{spec.name}` has no generic named "
                        f"`{unknown[0]}` (its generics: {', '.join(names) or 'none'})")
    missing = [n for n in names if n not in bind]
    if missing:
        raise TuneError(f"op `{spec.name}` needs a size for each generic: "
                        + " ".join(f"--bind {n}=..." for n in missing))
    try:
        result = compile_source(spec.source, path=spec.path, entry=spec.entry,
                                bind=dict(bind), passes=FRONT + MIDDLE[:1], tuning=False)
    except UsageError as err:  # the tuner's sizes come from --bind: worded for it
        raise TuneError(err.command_line) from None
    except CompileError as err:
        raise TuneError(f"op `{spec.name}` at these sizes: {err.diagnostics[0].message}"
                        ) from None
    values = dict(result.stage("bind-generics").values)
    library = result.text.state.kernels
    found = [b for b in (library.bindings.values() if library else ())
             if b.op.name == spec.name and b.kernel.name == spec.kernel
             and dict(b.op_key) == values]
    if not found:
        raise TuneError(f"op `{spec.name}` at these sizes has no kernel binding")
    return values, found[0], library.analysis


def _inputs_and_body(spec, values, device: str, checks: int, seed: int, body_main):
    """`checks` sets of random inputs at the bound shapes, and the body's outputs on each."""
    import torch
    inputs = [make_inputs(spec, values, seed=seed + k, style=STYLES[k % len(STYLES)],
                          device=device) for k in range(max(1, checks))]
    with torch.no_grad():
        body = [body_main(*xs) for xs in inputs]
    return inputs, body


def _try(cand: Candidate, build, space: CandidateSpace, inputs, body, numerics: str,
         timer: Timer) -> Trial:
    """Compile, check against the body on every input set, then time one candidate."""
    import torch
    trial = Trial(cand)
    try:
        main, text = build()
    except CompileError as err:
        d = err.diagnostics[0]
        trial.problem = f"does not compile: {d.code}: {d.message}"
        return trial
    if f"{space.label}: tuned: " not in text:  # the compiler must have used this choice
        trial.problem = "the compiler did not use this choice"
        return trial
    try:
        with torch.no_grad():
            outputs = [main(*xs) for xs in inputs]
    except Exception as err:  # noqa: BLE001 - a kernel that fails to build or run loses
        trial.problem = f"the kernel raised {type(err).__name__}: {first_line(err, 200)}"
        return trial
    trial.worst, disagreement = _compare(body, outputs, inputs, numerics)
    trial.checked = disagreement is None
    trial.problem = disagreement
    try:
        with torch.no_grad():
            trial.time_ms = float(timer(cand, lambda: main(*inputs[0])))
    except Exception as err:  # noqa: BLE001
        trial.problem = trial.problem or (f"timing raised {type(err).__name__}: "
                                          f"{first_line(err, 200)}")
    return trial


def _compare(body, outputs, inputs, numerics: str) -> tuple[float, str | None]:
    """The worst error as a fraction of its tolerance, and the first disagreement."""
    worst, problem = 0.0, None
    for xs, want, got in zip(inputs, body, outputs):
        n = max([d for x in xs if hasattr(x, "shape") for d in x.shape] or [1])
        for k, (b, g) in enumerate(zip(want, got)):
            name = "result" if len(want) == 1 else f"result {k}"
            error = compare_outputs(name, b, g, tolerance_for(dtype_name(b), numerics, n))
            worst = max(worst, error.ratio)
            if not error.ok and problem is None:
                problem = f"disagrees with the body: {error}"
    return worst, problem


def device_name(device: str) -> str:
    """The device as tuning files name it: the CUDA device's name, else "cpu"."""
    if str(device).startswith("cuda"):
        import torch
        return torch.cuda.get_device_name(torch.device(device))
    return "cpu"


def default_timer(device: str) -> Timer:
    """`do_bench` on CUDA (warm: its warm-up runs first; the median); on the CPU the
    interpreter under the wall clock (one warm-up call, the median of three)."""
    if str(device).startswith("cuda"):
        def bench(_: Candidate, run: Callable[[], Any]) -> float:
            from triton.testing import do_bench
            return float(do_bench(run, warmup=25, rep=100, return_mode="median"))
        return bench

    def wall(_: Candidate, run: Callable[[], Any]) -> float:
        run()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            run()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)
    return wall
