"""The greedy search: try candidates pass by pass, keep each that still fails, to a fixed point.

Why greedy: a failing case is typically reduced by hundreds of small edits, most of which
do not keep the failure; trying one edit at a time and keeping the first that works (delta
debugging's "one-minimal" loop) is simple, deterministic and fast enough when most
candidates are thrown out by the checker (about 0.1 s) before the caller's predicate (a
compile and a run, or several) sees them.

A candidate must still check and still fit its inputs (`_Search.admit`): the entry exists,
its `where` clauses hold at the bindings, every input has the shape and dtype of its
parameter. Only then is the predicate asked. A case that does not check to begin with (the
failure is in the checker itself) is reduced by program edits alone, each candidate only
required to parse.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

import numpy as np

from ...syntax import tree as t
from ...syntax.edit import nodes
from ...syntax.parser import parse
from ...syntax.printer import print_module
from ..case import Case
from ..harness import target_spec
from .names import reachable

PATH = "reduce.linnet"
"""The file name candidates are checked under (a case is one self-contained file)."""

DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
          "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}
"""Linnet's dtype names for the NumPy dtypes a case's inputs may have."""


@dataclass(frozen=True)
class Step:
    """One kept edit: `kind` is "program", "dims" or "values"; `what` says what was done."""
    kind: str
    what: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.what}"


@dataclass
class Reduction:
    """The result of `reduce`: the smallest case found and how it was reached.

    `tries` counts calls of the predicate, `checks` the candidates checked; `stopped` is
    "fixed point" (no edit keeps the failure), "max_tries" or "time_limit"."""
    case: Case
    original: Case
    steps: list[Step] = field(default_factory=list)
    tries: int = 0
    checks: int = 0
    seconds: float = 0.0
    stopped: str = "fixed point"


@dataclass(frozen=True)
class Current:
    """The case being reduced, parsed, and (when it checks) its entry's spec."""
    case: Case
    module: t.Module
    spec: object | None  # harness.TargetSpec

    def with_module(self, module: t.Module) -> Case:
        return self.case.with_text(print_module(module))


@dataclass(frozen=True)
class Candidate:
    """An edit of the current case, made only when it is tried.

    A program edit is kept only if the program gets smaller (`size`), so that no two
    edits undo each other; `grows` exempts one that may not (inlining a call copies the
    callee's body, which a later edit removes)."""
    kind: str
    what: str
    make: Callable[[], Case | None]
    grows: bool = False


def size(module: t.Module, text: str) -> tuple[int, int, int]:
    """How big a program is: its tree nodes, then the names it uses, then its length."""
    count = names = 0
    for n in nodes(module):
        count += 1
        names += isinstance(n, t.Name)
    return count, names, len(text)


Pass = Callable[[Current], Iterable[Candidate]]


def case_key(case: Case) -> str:
    """A digest naming a case: its text, entry, bindings and input bytes."""
    h = hashlib.sha256()
    h.update(case.text.encode())
    h.update(case.entry.encode())
    h.update(repr(sorted(case.generics.items())).encode())
    h.update(repr(sorted(case.present)).encode() if case.present is not None else b"")
    for x in case.inputs:
        x = np.asarray(x)
        h.update(f"{x.dtype.name}{x.shape}".encode())
        h.update(np.ascontiguousarray(x).tobytes())
    return h.hexdigest()


def entry_spec(case: Case) -> object | None:
    """The harness's spec of the case's entry, or None when the text does not check or has
    no such entry (a crash of the checker counts as not checking)."""
    try:
        spec = target_spec(PATH, case.entry, case.text)
    except Exception:  # noqa: BLE001 - diagnostics (ProgramError), no entry, a checker crash
        return None
    if spec.block is not None and case.present is not None:
        spec = dataclasses.replace(spec, block=spec.block.with_present(case.present))
    return spec if spec.kind == "entry" else None


def fits(spec, case: Case) -> bool:
    """Do the bindings satisfy the entry's `where` clauses and the inputs its parameters?"""
    names = {g.name for g in spec.generics}
    if set(case.generics) != names:
        return False
    try:
        if not spec.allows(case.generics):
            return False
        shapes = spec.shapes(case.generics)  # a block entry's parameters too
    except Exception:  # noqa: BLE001 - a pack, an unbound generic: does not fit
        return False
    if len(case.inputs) != len(shapes):
        return False
    for x, (shape, dtype) in zip(case.inputs, shapes):
        x = np.asarray(x)
        if x.shape != tuple(shape) or DTYPES.get(x.dtype.name) != dtype:
            return False
    return True


class Search:
    """The state of one reduction: the current case, the budget, what was tried."""

    def __init__(self, case: Case, still_fails: Callable[[Case], bool], max_tries: int,
                 time_limit: float) -> None:
        self.still_fails = still_fails
        self.max_tries, self.start = max_tries, time.monotonic()
        self.deadline = self.start + time_limit
        module, _ = parse(case.text, PATH)
        if module is None:
            raise ValueError("the case's program does not parse")
        spec = entry_spec(case)
        self.checked = spec is not None and fits(spec, case)
        self.current = Current(case, module, spec if self.checked else None)
        self.result = Reduction(case, case)
        self.seen: set[str] = {case_key(case)}

    @property
    def out(self) -> str | None:
        """Why the search must stop now, or None."""
        if self.result.tries >= self.max_tries:
            return "max_tries"
        if time.monotonic() >= self.deadline:
            return "time_limit"
        return None

    def run(self, passes: Iterable[Pass]) -> Reduction:
        """Each pass in turn until it keeps nothing more; after one that kept something
        (or as soon as an edit leaves an item unused), from the first pass again (the big
        cuts may apply now); until no pass keeps anything (the fixed point) or the budget
        is spent."""
        passes, k = list(passes), 0
        while k < len(passes) and not self.out:
            skip, progress = 0, False
            while not self.out:
                items = self._reached()
                kept = self.run_pass(passes[k], skip)
                if kept is None:
                    break
                skip, progress = kept, True
                if self._reached() < items:
                    break  # items fell out of use: the first pass removes them
            k = 0 if progress else k + 1
        self.result.case = self.current.case
        self.result.stopped = self.out or "fixed point"
        self.result.seconds = time.monotonic() - self.start
        return self.result

    def _reached(self) -> set[str]:
        return reachable(self.current.module, self.current.case.entry)

    def run_pass(self, p: Pass, skip: int) -> int | None:
        """Try the pass's candidates after the first `skip`; the position of the first one
        kept (the pass resumes there on the new case), or None if none was kept.

        Candidates before the kept one are not tried again in this run of the pass: they
        failed on a larger case; the pass's next run tries them again."""
        for k, candidate in enumerate(p(self.current)):
            if k < skip:
                continue
            if self.out:
                return None
            if self.attempt(candidate):
                return k
        return None

    def attempt(self, candidate: Candidate) -> bool:
        """Make the candidate; if it is new, checks and fits, ask the predicate; keep it if
        it still fails."""
        case = candidate.make()
        if case is None:
            return False
        key = case_key(case)
        if key in self.seen:
            return False
        self.seen.add(key)
        module, _ = parse(case.text, PATH)
        if module is None:
            return False
        if candidate.kind == "program" and not candidate.grows and size(
                module, case.text) >= size(self.current.module, self.current.case.text):
            return False
        spec = None
        if self.checked:
            self.result.checks += 1
            spec = entry_spec(case)
            if spec is None or not fits(spec, case):
                return False
        self.result.tries += 1
        try:
            fails = bool(self.still_fails(case))
        except Exception:  # noqa: BLE001 - a predicate that breaks is not "fails the same way"
            fails = False
        if fails:
            self.current = Current(case, module, spec)
            self.result.steps.append(Step(candidate.kind, candidate.what))
        return fails


def candidates(kind: str, items: Iterable[tuple[str, Callable[[], Case | None]]]
               ) -> Iterator[Candidate]:
    """Candidates of one kind from (description, maker) pairs."""
    for what, make in items:
        yield Candidate(kind, what, make)
