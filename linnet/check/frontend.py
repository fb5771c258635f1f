"""The front end as one call: load, parse and check a program."""

from __future__ import annotations

from dataclasses import dataclass

from .checker import check_modules
from ..deepstack import call_with_deep_stack
from ..diagnostics import Diagnostic, SourceFile, Span
from ..syntax.program import Program, load_program


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
    return call_with_deep_stack(lambda: _check(path, text))


def _check(path: str, text: str | None) -> CheckResult:
    program = load_program(path, text)
    diagnostics = list(program.diagnostics)
    if not diagnostics:
        try:
            diagnostics.extend(check_modules(program))
        except RecursionError:
            diagnostics.append(Diagnostic(
                "E1006", "program nested too deeply to check", Span(path, 0, 0),
                help="split deeply nested expressions with `let` bindings"))
    diagnostics.sort(key=lambda d: (d.span.file != path, d.span.file, d.span.start))
    return CheckResult(program, diagnostics)
