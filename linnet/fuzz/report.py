"""A fuzzing run's outcome: counts, findings grouped by failure class, reductions.

Why a type of its own: `linnet fuzz` prints it as a table, `--json` writes it, and tests
assert on it; all three read the same `FuzzReport`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .findings import FAILING, Finding

__all__ = ["FuzzReport", "Reduced", "Progress"]


@dataclass(frozen=True)
class Reduced:
    """A reduced occurrence of a class: the folder its report went to, the reduced
    program, and the reducer's steps and stopping reason (or why reducing failed)."""
    key: str
    folder: str | None
    text: str
    entry: str
    steps: int
    stopped: str
    program: str

    def to_json(self) -> dict:
        return dict(vars(self))


@dataclass(frozen=True)
class Progress:
    """Where a run stands, given to the `progress` callback after each program."""
    programs: int
    cases: int
    findings: int
    failures: int
    classes: int
    seconds: float

    def line(self) -> str:
        rate = self.programs / self.seconds if self.seconds > 0 else 0.0
        return (f"{self.programs} programs ({rate:.2f}/s), {self.cases} cases, "
                f"{self.findings} findings in {self.classes} classes, {self.seconds:.0f} s")


@dataclass
class FuzzReport:
    """The outcome of `fuzz`: programs and cases run, cases the oracle found undefined
    (skipped), runs of a target completed, findings (in program order) and the reductions
    made, by class key."""
    seed: int = 0
    programs: int = 0
    cases: int = 0
    skipped: int = 0
    runs: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    reductions: dict[str, list[Reduced]] = field(default_factory=dict)
    deaths: list[str] = field(default_factory=list)
    """Worker deaths no program explained: each names the programs the worker may have been
    running, none of which died when run again alone (a crash that depends on what ran
    before it in the process, or the machine running out of memory)."""

    @property
    def classes(self) -> dict[str, list[Finding]]:
        """Findings by class key, classes in order of first occurrence."""
        out: dict[str, list[Finding]] = {}
        for f in self.findings:
            out.setdefault(f.key, []).append(f)
        return out

    @property
    def failures(self) -> list[Finding]:
        """The findings that fail a run (a bug of the compiler or a backend)."""
        return [f for f in self.findings if f.kind in FAILING]

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    def summary(self) -> str:
        """The table by failure class, then one line of totals."""
        lines = []
        classes = self.classes
        if classes:
            rows = [("count", "kind", "target", "stage", "class", "first seen", "reduced")]
            for key, found in sorted(classes.items(),
                                     key=lambda kv: (kv[1][0].kind not in FAILING,
                                                     -len(kv[1]))):
                first = found[0]
                reduced = self.reductions.get(key, [])
                rows.append((str(len(found)), first.kind, first.target, first.stage,
                             first.signature[:60], f"{first.program} #{first.case}",
                             reduced[0].folder or "failed" if reduced else "-"))
            widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
            for r in rows:
                lines.append("  ".join(c.rjust(w) if i == 0 else c.ljust(w)
                                       for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        kinds = Counter(f.kind for f in self.findings)
        found = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "no findings"
        lines.append(f"{self.programs} programs, {self.cases} cases ({self.skipped} undefined, "
                     f"skipped), {self.runs} runs in {self.seconds:.0f} s: {found}")
        lines += [f"a worker died unexplained: {d}" for d in self.deaths]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"seed": self.seed, "programs": self.programs, "cases": self.cases,
                "skipped": self.skipped, "runs": self.runs, "seconds": round(self.seconds, 2),
                "failed": self.failed, "deaths": list(self.deaths),
                "classes": [{"key": key, "kind": found[0].kind, "target": found[0].target,
                             "stage": found[0].stage, "signature": found[0].signature,
                             "count": len(found),
                             "reduced": [r.to_json() for r in self.reductions.get(key, [])]}
                            for key, found in self.classes.items()],
                "findings": [f.to_json() for f in self.findings]}
