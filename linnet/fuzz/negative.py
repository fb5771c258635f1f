"""`linnet fuzz --negative N`: out-of-bounds kernels that `linnet check` must reject.

Why apart from the differential loop: these programs must never run (a write out of
bounds corrupts the process), so nothing is compiled or run; each program of the negative
corpus (`linnet.fuzz.programs.out_of_bounds`) is checked, and so is its twin with the
fault mended. A finding is a program the checker accepts (`accepted`), rejects without
E2131 (`other code`: the generator wrote something else wrong), or a twin it rejects
(`twin rejected`: the check is too strict, or the twin is wrong).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..check.frontend import check_program
from .programs.out_of_bounds import OutOfBounds, out_of_bounds_kernels

__all__ = ["NegativeFinding", "NegativeReport", "check_negative", "OUT_OF_BOUNDS"]

OUT_OF_BOUNDS = "E2131"
"""The code of an access not provably inside its tensor."""


@dataclass(frozen=True)
class NegativeFinding:
    """What went wrong with one program: `kind`, the codes check gave, the program."""
    kind: str
    codes: tuple[str, ...]
    program: OutOfBounds

    def line(self) -> str:
        codes = ", ".join(self.codes) or "no diagnostic"
        return f"{self.kind}: {self.program.describe()} [{codes}]"

    def to_json(self) -> dict:
        p = self.program
        return {"kind": self.kind, "codes": list(self.codes), "label": p.label,
                "fault": p.fault, "accesses": [list(a) for a in p.accesses], "text": p.text}


@dataclass
class NegativeReport:
    """Programs checked, how many check rejected with E2131, and the findings."""
    seed: int
    programs: int = 0
    rejected: int = 0
    findings: list[NegativeFinding] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.findings)

    def summary(self) -> str:
        head = (f"{self.programs} out-of-bounds kernels (seed {self.seed}): {self.rejected} "
                f"rejected with {OUT_OF_BOUNDS}")
        if not self.findings:
            return head + ", every one"
        return "\n".join([head + f"; {len(self.findings)} findings:"] +
                         [f"  {f.line()}" for f in self.findings])

    def to_json(self) -> dict:
        return {"seed": self.seed, "programs": self.programs, "rejected": self.rejected,
                "findings": [f.to_json() for f in self.findings]}


def check_negative(seed: int, count: int, out: str | Path | None = None) -> NegativeReport:
    """Check `count` programs of the negative corpus from `seed` and their twins; with
    `out`, the program of each finding goes to `out/negative/<name>.linnet`."""
    report = NegativeReport(seed)
    for program in out_of_bounds_kernels(seed, count):
        report.programs += 1
        found = _finding(program)
        if found is None:
            report.rejected += 1
            continue
        report.findings.append(found)
        if out is not None:
            _write(Path(out) / "negative", found)
    return report


def _codes(program: OutOfBounds, text: str) -> tuple[str, ...]:
    path = program.label.split()[0] + ".linnet"
    return tuple(sorted({d.code for d in check_program(path, text).diagnostics
                         if d.severity == "error"}))


def _finding(program: OutOfBounds) -> NegativeFinding | None:
    twin = _codes(program, program.safe)
    if twin:
        return NegativeFinding("twin rejected", twin, program)
    codes = _codes(program, program.text)
    if OUT_OF_BOUNDS in codes:
        return None
    return NegativeFinding("accepted" if not codes else "other code", codes, program)


def _write(folder: Path, finding: NegativeFinding) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    name = finding.program.label.split()[0]
    text = finding.program.text if finding.kind != "twin rejected" else finding.program.safe
    note = f"// {finding.line()}\n"  # last, so the lines it names stay where they are
    (folder / f"{name}.linnet").write_text(text + note, encoding="utf-8")
