"""The fuzz loop: programs in, findings grouped by class out, first occurrences reduced.

Why this shape: program k of a run is a pure function of (seed, k) (`sources.py`), and
results are taken in the order of k whatever process finished first, so a run with
`jobs=4` finds what `jobs=1` finds, and the first occurrence of a class (the one reduced)
is the same. Reductions go to the same worker pool as programs.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import importlib
import os
import sys
import time as clock
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..pipeline import rules_in_effect
from . import backends
from . import reduce as reducing
from .case import Case
from .execute import ALL_TARGETS, Plan, attempts, run_case
from .findings import Finding, slug
from .isolate import (PROCESS, Died, can_spawn, isolated, process_context,
                      take_environment)
from .report import FuzzReport, Progress, Reduced
from .programs import GeneratorConfig
from .sources import Source, generated, program_seed

__all__ = ["fuzz", "load_rules", "prepare_runtimes"]

DEFAULT_COUNT = 100


@dataclass
class _Task:
    """Program k: made from (seed, k, config) by the worker, or given as `source`."""
    index: int
    seed: int
    config: Any
    plan: Plan
    source: Source | None = None


@dataclass
class _Done:
    """What a worker sends back for one program."""
    index: int
    label: str
    path: str
    cases: int = 0
    skipped: int = 0
    runs: int = 0
    findings: list[Finding] = field(default_factory=list)
    failing: dict[int, Case] = field(default_factory=dict)


@dataclass
class _Reduce:
    finding: Finding
    case: Case
    plan: Plan
    path: str
    folder: str
    reducer: Callable | None
    max_tries: int
    time_limit: float
    rules: str | None = None


def fuzz(seed: int = 0, count: int | None = None, time: float | None = None,
         targets: Sequence[str] = ALL_TARGETS, kernels: bool = False, grad: bool = False,
         jobs: int = 1, out: str | Path | None = None, rules: Any = None,
         progress: Callable[[Progress], None] | None = None, *,
         programs: Iterable[Source] | None = None, config: Any = None,
         seconds: float = 60.0, reduce_per_class: int = 1, reduce_tries: int = 400,
         reduce_time: float = 300.0, reducer: Callable | None = None,
         isolate: bool = True, block_grad: bool = False) -> FuzzReport:
    """Fuzz the compiler: generate programs (or take `programs`), run every case through
    the oracle and `targets`, and return the findings.

    `count` programs, or as many as `time` seconds allow (100 when neither is given).
    `kernels` runs kernels (`--numerics equivalent` on torch and jax) and, unless `config`
    is given, makes the generator write them; `grad` does the same for gradients, and
    `block_grad` (which implies `grad`) makes the first entry of each program a root
    block's, differentiated with respect to the block's params too. `jobs`
    worker processes share the programs; the report does not depend on how many. `out`: the
    first `reduce_per_class` occurrences of each failure class are reduced (at most
    `reduce_tries` predicate calls, `reduce_time` seconds each) and reported in
    `out/<class>/` (more in `out/<class>/again-N/`). `rules`: "MODULE[:NAME]" (rule sets
    added to the library's, see `load_rules`) or a sequence of rule sets (the complete list
    the e-graph passes run, as `compile_source(rules=...)`). `seconds` limits each stage.
    `progress` is called after each program. `reducer` replaces `linnet.fuzz.reduce.reduce`.
    `isolate`: programs run in worker processes even when `jobs` is 1, so that a backend
    dying in native code is a finding (`crash`, "process died: SIGSEGV") and not the end
    of the run; programs run in this process when it is false, when `rules` are rule-set
    objects or `reducer` is given (they cannot be sent to a worker), or when the main script
    was read from standard input (a worker cannot import it again). Worker processes are
    fresh ones (`isolate.process_context`), which import the main script again: a script
    calling `fuzz` needs the `if __name__ == "__main__":` guard.
    """
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    unknown = sorted(set(targets) - set(ALL_TARGETS))
    if unknown:
        raise ValueError(f"unknown target {unknown[0]}; choose from {', '.join(ALL_TARGETS)}")
    named_rules = rules is None or isinstance(rules, str)  # what a worker can load
    spawnable = can_spawn()
    if jobs > 1 and not named_rules:
        raise ValueError("with jobs > 1, give rules as 'MODULE[:NAME]' (each worker loads "
                         "them)")
    if jobs > 1 and not spawnable:
        raise ValueError("worker processes cannot start from a script read from standard "
                         "input (they import it again): save it to a file, or use jobs=1")
    if count is None and time is None:
        count = DEFAULT_COUNT
    device = prepare_runtimes()
    grad = grad or block_grad
    plan = Plan(tuple(targets), kernels, grad, seconds, device)
    if config is None and programs is None:
        config = GeneratorConfig(kernels=kernels, grad=grad, block_grad=block_grad)
    tasks = _tasks(seed, count, config, plan, programs)
    run = _Run(seed, plan, time, out, reduce_per_class, reduce_tries, reduce_time, reducer,
               progress)
    if jobs == 1 and not (isolate and named_rules and reducer is None and spawnable):
        rule_sets = load_rules(rules) if isinstance(rules, str) else rules
        with rules_in_effect(rule_sets) if rule_sets is not None else contextlib.nullcontext():
            run.serial(tasks)
    else:
        run.parallel(tasks, jobs, rules if isinstance(rules, str) else None)
    return run.report


def _tasks(seed: int, count: int | None, config: Any, plan: Plan,
           programs: Iterable[Source] | None) -> Iterator[_Task]:
    if programs is None:
        k = 0
        while count is None or k < count:
            yield _Task(k, seed, config, plan)
            k += 1
        return
    for k, source in enumerate(programs):
        if count is not None and k >= count:
            return
        yield _Task(k, seed, config, plan, source)


class _Run:
    """The parent's side: taking results in program order, counting, reducing."""

    def __init__(self, seed: int, plan: Plan, limit: float | None,
                 out: str | Path | None, per_class: int, tries: int, reduce_time: float,
                 reducer: Callable | None, progress: Callable[[Progress], None] | None
                 ) -> None:
        self.report = FuzzReport(seed=seed)
        self.plan, self.limit, self.progress = plan, limit, progress
        self.out = Path(out) if out is not None else None
        self.per_class, self.tries, self.reduce_time = per_class, tries, reduce_time
        self.reducer = reducer
        self.rules: str | None = None
        self.started = clock.perf_counter()
        self.seen: dict[str, int] = {}

    def time_left(self) -> bool:
        return self.limit is None or clock.perf_counter() - self.started < self.limit

    def serial(self, tasks: Iterator[_Task]) -> None:
        for task in tasks:
            if not self.time_left():
                break
            for job in self.take(_run_program(task)):
                self.reduced(_reduce(job))
        self.finish()

    def parallel(self, tasks: Iterator[_Task], jobs: int, rules: str | None) -> None:
        """Programs on `jobs` workers, taken in program order. When a worker dies, the
        programs it may have been running run again one by one in processes of their own
        (`_survivor`), and a new pool takes the rest."""
        self.rules = rules
        pool = _pool(jobs, rules)
        pending: dict[int, tuple[_Task, cf.Future]] = {}
        ready: dict[int, _Done] = {}
        reductions: list[tuple[_Reduce, cf.Future]] = []
        next_index, exhausted = 0, False
        try:
            while True:
                while not exhausted and len(pending) < 2 * jobs and self.time_left():
                    task = next(tasks, None)
                    if task is None:
                        exhausted = True
                        break
                    pending[task.index] = (task, pool.submit(_run_program, task))
                if not pending:
                    break
                cf.wait([f for _, f in pending.values()], return_when=cf.FIRST_COMPLETED)
                if self._collect(pending, ready):
                    pool.shutdown(wait=True, cancel_futures=True)
                    self._survive(pending, ready, rules)
                    pool = _pool(jobs, rules)
                while next_index in ready:
                    for job in self.take(ready.pop(next_index)):
                        reductions.append((job, pool.submit(_reduce, job)))
                    next_index += 1
                if not self.time_left():
                    exhausted = True
            for job, future in reductions:
                self.reduced(_reduced_or_again(future, job, rules))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        self.finish()

    def _survive(self, pending: dict[int, tuple[_Task, cf.Future]], ready: dict[int, _Done],
                 rules: str | None) -> None:
        """After a worker died: each program it may have been running, alone
        (`_survivor`). When none dies again, the death is recorded unexplained."""
        survivors = {index: _survivor(task, rules)
                     for index, (task, _) in sorted(pending.items())}
        pending.clear()
        ready.update(survivors)
        if not any(_died(f) for done in survivors.values() for f in done.findings):
            labels = ", ".join(done.label for done in survivors.values())
            self.report.deaths.append(f"running {labels}; alone, none died again")

    @staticmethod
    def _collect(pending: dict[int, tuple[_Task, cf.Future]], ready: dict[int, _Done]
                 ) -> bool:
        """Move finished programs from `pending` to `ready`; whether the pool broke."""
        broken = False
        for index, (_, future) in list(pending.items()):
            if not future.done():
                continue
            try:
                ready[index] = future.result()
                del pending[index]
            except BrokenProcessPool:
                broken = True
        return broken

    def take(self, done: _Done) -> list[_Reduce]:
        """Count a program's results; the reductions its new classes call for."""
        r = self.report
        r.programs += 1
        r.cases += done.cases
        r.skipped += done.skipped
        r.runs += done.runs
        r.findings.extend(done.findings)
        jobs = []
        for f in done.findings:
            n = self.seen.get(f.key, 0)
            self.seen[f.key] = n + 1
            if self.out is None or n >= self.per_class or f.case not in done.failing:
                continue
            folder = self.out / slug(f.key)
            if n:
                folder = folder / f"again-{n + 1}"
            jobs.append(_Reduce(f, done.failing[f.case], self.plan, done.path,
                                str(folder), self.reducer, self.tries, self.reduce_time,
                                self.rules))
        if self.progress is not None:
            self.progress(Progress(r.programs, r.cases, len(r.findings), len(r.failures),
                                   len(self.seen), clock.perf_counter() - self.started))
        return jobs

    def reduced(self, result: Reduced) -> None:
        self.report.reductions.setdefault(result.key, []).append(result)

    def finish(self) -> None:
        self.report.seconds = clock.perf_counter() - self.started


# ------------------------------------------------------------------------------------------
# What a worker does (also called in-process when jobs == 1).

def _run_program(task: _Task) -> _Done:
    try:
        source = task.source or generated(task.seed, task.index, task.config)
    except Exception as err:  # noqa: BLE001 - the generator failing is a finding
        label = f"seed {program_seed(task.seed, task.index)}"
        return _Done(task.index, label, "fuzz.linnet", findings=[Finding(
            "generator", "generator", "generate", backends.describe(err),
            backends.signature(err), label)])
    done = _Done(task.index, source.label, source.path)
    for k, case in enumerate(source.cases):
        result = run_case(case, task.plan, path=source.path, program=source.label, index=k)
        done.cases += 1
        done.skipped += result.skipped is not None
        done.runs += result.runs
        done.findings.extend(result.findings)
        if result.findings:
            done.failing[k] = case
    return done


def _survivor(task: _Task, rules: str | None) -> _Done:
    """Program `task` again, alone in a process: its results, or, when that process dies
    too, the crash found case by case and target by target (`_crashed`)."""
    done = isolated(_run_program, task, rules, _init_worker)
    return _crashed(task, rules) if isinstance(done, Died) else done


def _crashed(task: _Task, rules: str | None) -> _Done:
    """A program whose process dies: each case, then each run of a dying case, in a
    process of its own. A run that dies is a `crash` finding of its target; the others
    report what they found. A program of one case goes straight to its runs: the process
    that just died alone ran that case and nothing else, and each process costs an import
    of every runtime (and a stuck one, the wait for its hard limit)."""
    source = task.source or generated(task.seed, task.index, task.config)
    done = _Done(task.index, source.label, source.path)
    labels = [a.label for a in attempts(task.plan, True, True)]
    alone = len(source.cases) == 1
    for k, case in enumerate(source.cases):
        done.cases += 1
        whole = Died(None) if alone else isolated(
            _run_one, (case, task.plan, source.path, source.label, k, None), rules,
            _init_worker)
        results = [whole] if not isinstance(whole, Died) else [
            (label, isolated(_run_one, (case, task.plan, source.path, source.label, k,
                                        label), rules, _init_worker)) for label in labels]
        for result in results:
            if isinstance(result, tuple) and isinstance(result[1], Died):
                label, died = result
                done.findings.append(Finding(died.kind, label, "run", str(died),
                                             died.signature, source.label, k, case.entry))
                done.failing[k] = case
                continue
            result = result[1] if isinstance(result, tuple) else result
            done.runs += result.runs
            done.findings.extend(result.findings)
            if result.findings:
                done.failing[k] = case
    return done


def _run_one(job: tuple) -> Any:
    """One case (and one run of it, when a label is given), for `isolated`."""
    case, plan, path, program, index, only = job
    return run_case(case, plan, path=path, program=program, index=index, only=only)


def _died(f: Finding) -> bool:
    """Is it a process that died (or ended itself stuck), not an exception?"""
    return f.kind in ("crash", "hang") and f.signature.startswith(PROCESS)


def _reduced_or_again(future: cf.Future, job: _Reduce, rules: str | None) -> Reduced:
    """A reduction from the pool; when the pool broke first, again in its own process."""
    try:
        return future.result()
    except BrokenProcessPool:
        answer = isolated(_reduce, job, rules, _init_worker)
        if isinstance(answer, Died):
            folder = Path(job.folder)
            folder.mkdir(parents=True, exist_ok=True)
            _write_finding(folder, job.finding, job.case)
            return Reduced(job.finding.key, str(folder), job.case.text, job.case.entry, 0,
                           f"not reduced: {answer}", job.finding.program)
        return answer


def _reduce(job: _Reduce) -> Reduced:
    """Reduce one occurrence of a class and write its report; a failure of the reducer is
    reported, not raised. A class of dying processes is reduced with each candidate run
    in a process of its own."""
    f = job.finding
    folder = Path(job.folder)
    only = f.target

    def run(candidate: Case, label: str | None) -> Any:
        if _died(f):
            return isolated(_run_one, (candidate, job.plan, job.path, "", 0, label),
                            job.rules, _init_worker)
        return run_case(candidate, job.plan, path=job.path, only=label)

    def still_fails(candidate: Case) -> bool:
        result = run(candidate, only)
        if isinstance(result, Died):
            return _died(f) and result.signature == f.signature
        return any(g.key == f.key for g in result.findings)

    try:
        reduce, write_report = _reducer(job.reducer)
        reduction = reduce(job.case, still_fails, max_tries=job.max_tries,
                           time_limit=job.time_limit)
        final = run(reduction.case, only if _died(f) else None)
        outputs = {only: str(final)} if isinstance(final, Died) else final.outputs
        folder.mkdir(parents=True, exist_ok=True)
        write_report(reduction, outputs, folder)
        _write_finding(folder, f, job.case)
        return Reduced(f.key, str(folder), reduction.case.text, reduction.case.entry,
                       len(reduction.steps), getattr(reduction, "stopped", ""), f.program)
    except Exception as err:  # noqa: BLE001 - keep the original case, say why
        folder.mkdir(parents=True, exist_ok=True)
        _write_finding(folder, f, job.case)
        return Reduced(f.key, str(folder), job.case.text, job.case.entry, 0,
                       f"not reduced: {backends.describe(err)}", f.program)


def _reducer(given: Callable | None) -> tuple[Callable, Callable]:
    return (given or reducing.reduce), reducing.write_report


def _write_finding(folder: Path, f: Finding, case: Case) -> None:
    """The finding itself and the unreduced program, beside the reducer's report."""
    (folder / "original.linnet").write_text(case.text, encoding="utf-8")
    (folder / "finding.txt").write_text(
        f"class: {f.key}\nprogram: {f.program}, case {f.case}, entry `{f.entry}`\n"
        f"bindings: {dict(case.generics)}\n{f.kind} in {f.stage} of {f.target}:\n"
        f"{f.detail}\n", encoding="utf-8")


def _pool(jobs: int, rules: str | None) -> cf.ProcessPoolExecutor:
    return cf.ProcessPoolExecutor(jobs, mp_context=process_context(),
                                  initializer=_init_worker,
                                  initargs=(rules, dict(os.environ)))


WORKER_HARD_LIMIT = 120.0
"""A worker stuck this long past a stage's limit ends itself (`backends.HARD_LIMIT`);
`LINNET_FUZZ_HARD_LIMIT` (seconds) overrides it."""


def _init_worker(rules: str | None, environment: dict[str, str] | None = None) -> None:
    """A worker's start: the parent's environment (a pool's workers are forked by a fork
    server, see `process_context`), the runtimes, the rules."""
    if environment is not None:
        take_environment(environment)
    backends.HARD_LIMIT = float(os.environ.get("LINNET_FUZZ_HARD_LIMIT", WORKER_HARD_LIMIT))
    prepare_runtimes()
    if rules is not None:
        _WORKER.enter_context(rules_in_effect(load_rules(rules)))


_WORKER = contextlib.ExitStack()  # a worker's rules stay in effect for its whole life


def prepare_runtimes() -> str:
    """Where kernels run, set before Triton or Pallas is imported, as tests/conftest.py
    does: without CUDA, `TRITON_INTERPRET=1` (Triton's interpreter on the CPU) and
    `LINNET_PALLAS_INTERPRET=1` (Pallas's). Returns the torch device for inputs."""
    import torch  # does not import triton
    cuda = torch.cuda.is_available()
    if not cuda and "triton" not in sys.modules:
        os.environ.setdefault("TRITON_INTERPRET", "1")
    if not cuda or not _jax_on_gpu():
        os.environ.setdefault("LINNET_PALLAS_INTERPRET", "1")
    with contextlib.suppress(ImportError):
        import onnxruntime  # its warnings about the models it runs would fill the output
        onnxruntime.set_default_logger_severity(4)  # errors become findings
    return "cuda" if cuda else "cpu"


def _jax_on_gpu() -> bool:
    try:
        import jax
        return jax.default_backend() == "gpu"
    except Exception:  # noqa: BLE001 - no JAX: Pallas does not run at all
        return False


def load_rules(spec: str) -> tuple:
    """The library's rule sets plus those `MODULE[:NAME]` names: `NAME` (default
    `RULE_SET`) is a rule set or a list of them, an attribute of the importable `MODULE`."""
    from ..rules import RULE_SETS
    module_name, _, name = spec.partition(":")
    module = importlib.import_module(module_name)
    try:
        value = getattr(module, name or "RULE_SET")
    except AttributeError:
        raise ValueError(f"{module_name} has no {name or 'RULE_SET'}") from None
    extra = tuple(value) if isinstance(value, (list, tuple)) else (value,)
    return (*RULE_SETS, *extra)
