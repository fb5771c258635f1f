"""The front end as one call: load, parse and check a program."""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import Diagnostic, SourceFile
from .program import Program, load_program


@dataclass
class CheckResult:
    program: Program
    diagnostics: list[Diagnostic]

    @property
    def sources(self) -> dict[str, SourceFile]:
        return self.program.sources

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)


def check_program(path: str, text: str | None = None) -> CheckResult:
    """Parse the program at path and run every front-end check over it."""
    program = load_program(path, text)
    diagnostics = list(program.diagnostics)
    if not diagnostics:
        from .check.checker import check_modules
        diagnostics.extend(check_modules(program))
    diagnostics.sort(key=lambda d: (d.span.file != path, d.span.file, d.span.start))
    return CheckResult(program, diagnostics)
