"""The pass manager: a pipeline is a list of named passes, each a pure function.

Each pass declares the IR language it takes and the one it returns, and the records of
the program's state (`linnet/ir/program_state.py`) it reads and writes; the manager runs
them in order and, on request, prints the IR before or after any pass (with a banner
naming it), writes one numbered file per pass, times the passes, checks each output
against its language's verifier (and an input whose language is not the one the pass
before returned: a pass moved out of order) and each pass's changes to the state against
its `writes`, or stops early. The tensor IR's languages are declared in
`linnet/ir/languages.py`. A compiler researcher edits the list: insert, remove or
reorder passes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ..deepstack import call_with_deep_stack
from ..diagnostics import CompileError, Diagnostic, Span
from ..errors import LinnetError
from ..ir.program_state import EMPTY, RECORDS, ProgramState


@dataclass(frozen=True)
class Pass:
    name: str
    description: str
    source: str  # the IR language it takes
    target: str  # the IR language it returns
    run: Callable[[Any, "Options"], Any]
    # why this compilation does not run the pass ("it runs under --grad only"), or "" when
    # it does: a dump of a pass that did not run says so instead of showing its input as
    # if it were the pass's work
    skipped: Callable[["Options"], str] | None = None
    # the records of the program's state (`ProgramState` field names) the pass reads, and
    # those it may change: under --verify-each, changing any other is a verification failure
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        unknown = [r for r in self.reads + self.writes if r not in RECORDS]
        if unknown:
            raise ValueError(f"pass {self.name}: no state record {unknown[0]!r} (the records: "
                             f"{', '.join(RECORDS)})")

    def state_note(self) -> str:
        """` [reads kernels; writes kernels, tuning]`, or "" for a pass that touches none."""
        parts = [f"{verb} {', '.join(names)}" for verb, names in
                 (("reads", self.reads), ("writes", self.writes)) if names]
        return f" [{'; '.join(parts)}]" if parts else ""


@dataclass
class Options:
    """What a compilation was asked for; passes read it, never write it."""
    target: str = "torch"
    entry: str | None = None
    root: str | None = None  # the root block (`--root`); None: the only block with entries
    # the parameter paths a checkpoint holds, which decide each optional member's presence;
    # None: no checkpoint, every optional member is absent
    present: frozenset[str] | None = None
    bind: dict[str, str] = field(default_factory=dict)
    numerics: str = "equivalent"
    grad: bool = False
    path: str = "<input>"
    rules: tuple | None = None  # the e-graph passes' rule sets; None: linnet.rules.RULE_SETS
    tuning: object | None = None  # a KernelTuning (passes/kernels/kernel_tuning.py): tuned kernels
    # the jax target's ops run per shard of a device mesh, with the mesh axes each one's
    # batch axis splits over: ((op name, (axis, ...)), ...) (linnet/check/batch_rule.py)
    shard: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass
class Stage:
    name: str
    language: str
    ir: Any
    seconds: float
    skipped: str = ""  # why the pass did not run (its IR is its input's), or ""


@dataclass
class Result:
    ir: Any
    stages: list[Stage]


@dataclass
class Instrumentation:
    """What to show while running: dumps, timings and verification."""
    dump_before: frozenset[str] = frozenset()
    dump_after: frozenset[str] = frozenset()
    dump_dir: Path | None = None
    stop_after: str | None = None
    verify_each: bool = False
    emit: Callable[[str], None] = print


Printer = Callable[[Any], str]
Verifier = Callable[[Any], list[str]]
PRINTERS: dict[str, Printer] = {}
VERIFIERS: dict[str, Verifier] = {}


def language(name: str, printer: Printer, verifier: Verifier | None = None) -> None:
    """Declare an IR language: how to print it, and how to check a value belongs to it."""
    PRINTERS[name] = printer
    if verifier is not None:
        VERIFIERS[name] = verifier


def banner(kind: str, p: Pass) -> str:
    return f"// ----- IR {kind} {p.name} ({p.source if kind == 'before' else p.target}) -----"


def run_pipeline(passes: Iterable[Pass], ir: Any, options: Options,
                 shown: Instrumentation | None = None) -> Result:
    """Run the passes in order on a deep stack (`linnet.deepstack`).

    Every pass may recurse over expressions, and what `check` accepts (a sum of
    thousands of terms, a long `else if` chain) must compile; what still exhausts
    that stack is E1006, a diagnostic, not a crash."""
    try:
        return call_with_deep_stack(lambda: _run_passes(passes, ir, options, shown))
    except RecursionError:
        raise CompileError([Diagnostic(
            "E1006", "program nested too deeply to compile", Span(options.path, 0, 0),
            help="split deeply nested expressions with `let` bindings")]) from None


def _run_passes(passes: Iterable[Pass], ir: Any, options: Options,
                shown: Instrumentation | None) -> Result:
    shown = shown or Instrumentation()
    stages: list[Stage] = []
    verified = ""  # the language the IR was last verified to belong to
    for number, p in enumerate(passes, start=1):
        if p.name in shown.dump_before or "all" in shown.dump_before:
            shown.emit(f"{banner('before', p)}\n{_print(p.source, ir)}")
        if shown.verify_each and p.source != verified:
            verified = _verify_input(p, ir)
        start = time.perf_counter()
        skipped = p.skipped(options) if p.skipped is not None else ""
        before = ir
        if not skipped:
            ir = p.run(ir, options)
        stages.append(Stage(p.name, p.target, ir, time.perf_counter() - start, skipped))
        if shown.verify_each and not skipped:
            verified = _verify(p, ir)
            _verify_writes(p, before, ir)
        note = skipped_note(p.name, skipped)
        if p.name in shown.dump_after or "all" in shown.dump_after:
            shown.emit(f"{banner('after', p)}\n{note}{_print(p.target, ir)}")
        if shown.dump_dir is not None:
            shown.dump_dir.mkdir(parents=True, exist_ok=True)
            (shown.dump_dir / f"{number:02d}-{p.name}.txt").write_text(note + _print(p.target, ir))
        if p.name == shown.stop_after:
            break
    return Result(ir, stages)


def skipped_note(name: str, skipped: str) -> str:
    """The first line of the dump of a pass that did not run ("" for one that ran)."""
    return f"// {name} did not run: {skipped}; the IR is its input, unchanged\n" \
        if skipped else ""


def _print(lang: str, ir: Any) -> str:
    printer = PRINTERS.get(lang)
    return printer(ir) if printer is not None else repr(ir)


class InvalidIR(LinnetError):
    """A pass broke its output language's rules: a compiler bug, not a user error."""


def _verify(p: Pass, ir: Any) -> str:
    """Check a pass's output belongs to its target language; return that language."""
    problems = _problems(p.target, ir)
    if problems:
        raise InvalidIR(f"pass `{p.name}` produced invalid {p.target} IR: {problems}")
    return p.target


def _verify_input(p: Pass, ir: Any) -> str:
    """Check a pass's input belongs to its source language, which the previous pass did
    not return (a pass moved out of order, or the first); return that language."""
    problems = _problems(p.source, ir)
    if problems:
        raise InvalidIR(f"pass `{p.name}` takes {p.source} IR, and its input is not: "
                        f"{problems}")
    return p.source


def _problems(lang: str, ir: Any) -> str:
    """The first five problems the language's verifier finds, joined ("" for none, or for
    a language without a verifier)."""
    verifier = VERIFIERS.get(lang)
    return "; ".join((verifier(ir) if verifier is not None else [])[:5])


def undeclared_writes(p: Pass, before: Any, after: Any) -> tuple[str, ...]:
    """The state records that differ between the pass's input and output but are not among
    its `writes` (a pass whose input is no program, `elaborate`, counts from an empty
    state); () when its output is no program."""
    new = getattr(after, "state", None)
    if not isinstance(new, ProgramState):
        return ()
    old = getattr(before, "state", None)
    old = old if isinstance(old, ProgramState) else EMPTY
    return tuple(name for name in old.changed(new) if name not in p.writes)


def _verify_writes(p: Pass, before: Any, after: Any) -> None:
    changed = undeclared_writes(p, before, after)
    if changed:
        raise InvalidIR(f"pass `{p.name}` changed the state record(s) {', '.join(changed)} "
                        f"it does not declare in its writes ({', '.join(p.writes) or 'none'})")


def timing_table(result: Result) -> str:
    total = sum(s.seconds for s in result.stages) or 1e-9
    rows = [f"{'pass':<24} {'ms':>9} {'%':>6}"]
    rows += [f"{s.name:<24} {s.seconds * 1000:9.2f} {100 * s.seconds / total:6.1f}"
             for s in result.stages]
    rows.append(f"{'total':<24} {total * 1000:9.2f} {100.0:6.1f}")
    return "\n".join(rows)
