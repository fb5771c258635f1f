"""`linnet verify`: check kernels against their op bodies on random sizes and inputs.

For each op of the file that binds a kernel (or the one named), sizes are drawn that
satisfy both the op's `where` clause and its kernel's (so the kernel, not the body, runs):
first every `Dim` at 1, then sizes around the tile sizes (ragged edges) and random sizes.
For each, random inputs go through the op compiled with `--numerics exact` (the body, the
op's definition) and with `--numerics equivalent` (the kernel), forward and, for floating
inputs, backward (`linnet.fuzz.compare_kernel_and_body`). On the first disagreement the
sizes are shrunk, one dim at a time, to the smallest that still disagrees.

`--entry E` checks one entry instead, drawing the entry's generics from its own `where`.
A block entry (`--root B`, or `--entry E` naming an entry of the file's root block) takes
random weights for its parameters as inputs after its own (`fuzz/block_specs.py`).

Kernels run on CUDA when a device is present, else in the Triton interpreter: the command
sets `TRITON_INTERPRET=1` before Triton is imported. The sizes run in a child process
(`verify_trials.py`): a kernel that kills its process (a write out of bounds corrupting
the heap, a segfault in a runtime) or hangs past the time limit is the verdict
`crashed: SIGABRT` of its sizes, shrunk like a disagreement, and the command goes on.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

from ..tuning.records import tuning_for
from .block_specs import block_specs
from .harness import (OutputError, TargetSpec, default_device, draw_values, dtype_choices,
                      kernel_ops, kernel_runtime, shrink, target_spec)
from .jax_compare import pallas_runtime
from .verify_trials import (DEFAULT_SECONDS, ChildTrials, InProcessTrials, Settings, Trial,
                            Trials)

DEFAULT_STYLES = ("normal", "uniform")


@dataclass
class Report:
    """The trials of one op (or entry), and the smallest failing sizes if any."""
    spec: TargetSpec
    trials: list[Trial] = field(default_factory=list)
    smallest: Trial | None = None
    note: str | None = None

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.trials)

    @property
    def crashed(self) -> bool:
        return any(t.crashed for t in self.trials)

    @property
    def kernel_used(self) -> bool:
        return any(t.comparison is not None and t.comparison.kernel_ran for t in self.trials)


def _stable_seed(seed: int, name: str) -> int:
    return (seed * 1_000_003 + zlib.crc32(name.encode())) & 0x7FFFFFFF


def _draw_trials(spec: TargetSpec, rng: random.Random, examples: int, max_dim: int,
                 max_elements: int | None = None) -> list[dict[str, Any]]:
    """Distinct generic values, the all-ones case first (when allowed)."""
    kernel = spec.kind == "op"
    check = spec.satisfies if kernel else spec.allows
    chosen: list[dict[str, Any]] = []
    seen: set[tuple] = set()

    def add(values: dict[str, Any] | None) -> None:
        if values is None:
            return
        key = tuple(sorted((k, str(v)) for k, v in values.items()))
        if key not in seen:
            seen.add(key)
            chosen.append(values)

    ones = {g.name: 1 if g.kind == "Dim" else dtype_choices(g)[0] for g in spec.generics
            if not g.pack}
    if len(ones) == len(spec.generics) and check(ones):
        add(ones)
    for _ in range(examples * 20):
        if len(chosen) >= examples:
            break
        add(draw_values(spec, rng, max_dim=max_dim, kernel=kernel, max_elements=max_elements))
    if not chosen:
        return []
    while len(chosen) < examples:  # few distinct sizes (fixed shapes): new inputs each time
        chosen.append(dict(chosen[len(chosen) % max(1, len(seen))]))
    return chosen[:examples]


def verify_target(spec: TargetSpec, *, examples: int = 10, seed: int = 0,
                  numerics: str = "equivalent", device: str = "cpu", grad: bool = True,
                  max_dim: int = 130, shrink_budget: int = 60,
                  progress: Callable[[Trial], None] | None = None,
                  target: str = "torch", max_elements: int | None = None,
                  trials: Trials | None = None, tuning: Any = False) -> Report:
    """Draw sizes for `spec`, run them (through `trials`; default: in this process) until
    one fails, and shrink that one to the smallest sizes that fail the same way (a crash
    stays a crash of the same cause). `tuning` is compile_source's for the kernels (False:
    the op headers')."""
    settings = Settings(numerics, device, grad, target, tuning)
    run = trials or InProcessTrials()
    report = Report(spec)
    rng = random.Random(_stable_seed(seed, spec.name))
    draws = _draw_trials(spec, rng, examples, max_dim, max_elements)
    if not draws:
        report.note = "no sizes up to --max-dim (and --max-elements) satisfy the where clauses"
        return report
    for k, values in enumerate(draws):
        style = DEFAULT_STYLES[k % len(DEFAULT_STYLES)]
        trial = run(spec, values, style, _stable_seed(seed + k, spec.name), settings)
        report.trials.append(trial)
        if progress:
            progress(trial)
        if not trial.ok:
            break
    failing = next((t for t in report.trials if not t.ok), None)
    if failing is not None:
        report.smallest = failing
        tried: dict[str, Trial] = {}  # a crash costs a new child: run no size twice

        def fails(values: dict[str, Any]) -> bool:
            trial = run(spec, values, failing.style, failing.seed, settings)
            tried[repr(sorted(values.items()))] = trial
            return trial.same_failure(failing)

        best = shrink(spec, failing.values, fails, budget=shrink_budget,
                      kernel=spec.kind == "op")
        if best != failing.values:
            report.smallest = tried.get(repr(sorted(best.items()))) or \
                run(spec, best, failing.style, failing.seed, settings)
    return report


def targets(path: str, op: str | None, entry: str | None,
            block: dict[str, Any] | None = None) -> list[TargetSpec]:
    """The specs to verify: the named op or entry, or every op with a kernel; with
    `block` (`root`, `bind`, `present`), the root block's entries (or the one named)."""
    if block is not None:
        return block_specs(path, block.get("root"), entry, block.get("bind", {}),
                           block.get("present"))
    if entry is not None:
        return [target_spec(path, entry)]
    if op is not None:
        return [target_spec(path, op)]
    return [target_spec(path, name) for name in kernel_ops(path)]


# ------------------------------------------------------------------------------------------
# Printing.

def _err(e: OutputError | None) -> str:
    if e is None:
        return "-"
    if e.problem:
        return "mismatch"
    return f"{e.max_abs:.1e}/{e.max_rel:.1e} ({e.ratio:.2g} of tol)"


def _verdict(t: Trial) -> str:
    if t.crashed:
        return f"crashed: {t.crashed}"
    if t.error:
        return "ERROR"
    c = t.comparison
    if c is None:
        return "ERROR"
    if not c.ok:
        return "DISAGREE"
    if not c.kernel_ran:
        return "agree (body only)"
    return "agree"


def _row(spec: TargetSpec, t: Trial) -> list[str]:
    c = t.comparison
    grad = _err(c.worst_grad if c else None) if spec.grad_clause else BODY_GRADIENT
    return [spec.describe(t.values) or "-", spec.describe_inputs(t.values), t.style,
            _err(c.worst if c else None), grad, _verdict(t)]


BODY_GRADIENT = "body's in both"
"""The gradient cell of an op without a `grad` clause: both runs differentiate its body."""


def format_table(rows: list[list[str]], head: list[str]) -> list[str]:
    widths = [max(len(r[k]) for r in rows + [head]) for k in range(len(head))]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    return ["  " + fmt.format(*head).rstrip()] + ["  " + fmt.format(*r).rstrip() for r in rows]


def _details(t: Trial) -> list[str]:
    if t.crashed:
        return [f"    the process running these sizes {_death(t.crashed)}"]
    if t.error:
        return [f"    {t.error}"]
    c = t.comparison
    lines = []
    if c.problem:
        lines.append(f"    {c.problem}")
    lines += [f"    forward  {e}" for e in c.outputs if not e.ok]
    lines += [f"    gradient {e}" for e in c.grads if not e.ok]
    return lines


def _death(cause: str) -> str:
    return f"was killed: it {cause}" if cause.startswith("timed out") else f"died of {cause}"


def format_report(report: Report, runtime: str, numerics: str) -> str:
    spec = report.spec
    lines = [f"{spec.label}: kernel against body ({numerics} against exact), "
             f"kernels on {runtime}"]
    if report.note:
        return "\n".join(lines + [f"  {report.note}"])
    rows = [_row(spec, t) for t in report.trials]
    head = ["sizes", "inputs", "values", "forward abs/rel", "gradient abs/rel", "verdict"]
    lines += format_table(rows, head)
    compared = [t.comparison for t in report.trials if t.comparison is not None]
    fw = [e for c in compared for e in c.outputs if not e.problem]
    gr = [e for c in compared for e in c.grads if not e.problem and spec.grad_clause]
    worst = (f"worst forward error {max(e.max_abs for e in fw):.2e} abs, "
             f"{max(e.ratio for e in fw):.2g} of the tolerance" if fw else "no forward compared")
    if gr:
        worst += (f"; worst gradient error {max(e.max_abs for e in gr):.2e} abs, "
                  f"{max(e.ratio for e in gr):.2g} of the tolerance")
    n = len(report.trials)
    if report.ok:
        what = "the forward pass agrees" if not spec.grad_clause else "all agree"
        lines.append(f"  {n} size{'s' if n != 1 else ''} tried: {what} ({worst})")
        if not report.kernel_used:
            lines.append("  note: the kernel never ran (the compiled module ran the op's body "
                         "for every size), so this compared the body with itself")
    else:
        what = "crash" if report.crashed else "disagreement"
        after = f" ({worst})" if fw else ""
        lines.append(f"  {what} after {n} size{'s' if n != 1 else ''}{after}")
        s = report.smallest
        lines.append(f"  smallest failing sizes found: {spec.describe(s.values) or '(fixed)'} "
                     f"({spec.describe_inputs(s.values)}; {s.style} values, seed {s.seed})")
        lines += _details(s)
    if not spec.grad_clause and any(c.grads for c in compared):
        lines.append(f"  note: `{spec.name}` has no `grad` clause, so both runs differentiate "
                     "its body: the gradient was not compared against the kernel")
    return "\n".join(lines)


def run_verify(path: str, *, op: str | None = None, entry: str | None = None,
               examples: int = 10, seed: int = 0, numerics: str = "equivalent",
               device: str | None = None, grad: bool = True, max_dim: int | None = None,
               write: Callable[[str], None] = print, target: str = "torch",
               max_elements: int | None = None, block: dict[str, Any] | None = None,
               trials: Trials | None = None, isolate: bool = True,
               seconds: float = DEFAULT_SECONDS, tuning: Any = None) -> int:
    """Verify and print the tables; 0 when everything agrees, 1 otherwise (a disagreement,
    or a size whose process crashed). Raises `ProgramError` for a program with errors and
    KeyError for an unknown op or entry. `target="jax"` runs the kernels through Pallas
    (`linnet jax`). `block` verifies a block entry: `{"root": B or None, "bind": the
    root's generics, "present": paths}`. `tuning` is compile_source's, read once (None:
    `$LINNET_TUNING`, else `linnet.tuning.json` beside the file; False: the op headers'
    choices only); a file that cannot be read raises `linnet.tune.TuningFileError`.

    Sizes run through `trials` (the caller closes it), else in a child process made for
    this call (`isolate`; killed past `seconds` a size) or in this one."""
    tuning = tuning_for(tuning, path) or False
    if target == "jax":
        _, runtime = pallas_runtime()
        device = "cuda" if runtime == "Pallas on the GPU" else "cpu"
    else:
        device = device or default_device()
        _, runtime = kernel_runtime(device)
    max_dim = max_dim or (2048 if device.startswith("cuda") else 130)
    max_elements = max_elements or (2**26 if device.startswith("cuda") else 2**18)
    specs = targets(path, op, entry, block)
    if not specs:
        write(f"{path}: no op binds a kernel; nothing to verify")
        return 0
    run = trials or (ChildTrials(seconds) if isolate else InProcessTrials())
    status = 0
    try:
        for spec in specs:
            report = verify_target(spec, examples=examples, seed=seed, numerics=numerics,
                                   device=device, grad=grad, max_dim=max_dim, target=target,
                                   max_elements=max_elements, trials=run, tuning=tuning)
            write(format_report(report, runtime, numerics))
            if not report.ok:
                status = 1
    finally:
        if trials is None:
            run.close()
    if trials is None:
        status = max(status, report_deaths(run, write))
    return status


def report_deaths(trials: Trials, write: Callable[[str], None] = print) -> int:
    """Say each death of a process no one size explains (after `close`); 1 if any."""
    for death in trials.deaths:
        write(f"crash: {death}")
    return 1 if trials.deaths else 0
