"""How every command reports diagnostics: rendered (in colour on a terminal) or as JSON, and
one summary line.

`linnet check` has nothing else to print, so its `--json` list goes to standard output. The
other commands (`torch`, `jax`, `onnx`, `stablehlo`, `compile`, `verify`, `tune`) print what
they make on standard output, so their `--json` list goes to standard error, as rustc's
`--error-format=json` does, and is printed even when empty (`[]`) so that a tool can always
parse it.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Iterable, TextIO

from ..diagnostics import Diagnostic, SourceFile, render, to_json

COLOR_CHOICES = ("auto", "always", "never")


def add_report_options(p: argparse.ArgumentParser, json_help: str | None = None) -> None:
    """`--json` and `--color` for a command that reports diagnostics."""
    if json_help is not False:
        p.add_argument("--json", action="store_true",
                       help=json_help or "print diagnostics as one JSON list on standard "
                                         "error (code, severity, message, file, line, column, "
                                         "end, label, notes, help)")
    p.add_argument("--color", choices=COLOR_CHOICES, default="auto",
                   help="colour diagnostics: auto (default) on a terminal unless NO_COLOR is "
                        "set, always, or never")


def use_color(choice: str, stream: TextIO) -> bool:
    """`--color`: always and never win; auto colours a terminal, unless NO_COLOR is set (to
    anything not empty, https://no-color.org) or TERM is `dumb`."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(errors: int, files: int) -> str:
    """The last line of a run with errors: `2 errors in 1 file`."""
    return f"{plural(errors, 'error')} in {plural(files, 'file')}"


class Reporter:
    """Collects the diagnostics of a command's run and prints them one way."""

    def __init__(self, args: argparse.Namespace, json_stream: TextIO | None = None) -> None:
        self.json = bool(getattr(args, "json", False))
        self.json_stream = json_stream
        self.color = use_color(getattr(args, "color", "auto"), sys.stderr)
        self.items: list[Diagnostic] = []
        self.sources: dict[str, SourceFile] = {}

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.items)

    def add(self, diagnostics: Iterable[Diagnostic], sources: dict[str, SourceFile]) -> None:
        """Keep diagnostics; rendered ones are printed to standard error at once."""
        diagnostics = list(diagnostics)
        self.items.extend(diagnostics)
        self.sources.update(sources)
        if not self.json:
            for d in diagnostics:
                print(render(d, sources, color=self.color) + "\n", file=sys.stderr)

    def finish(self, files: int) -> None:
        """The JSON list, or the summary line when there were errors."""
        if self.json:
            print(to_json(self.items, self.sources), file=self.json_stream or sys.stderr)
        elif self.errors:
            print(summary(self.errors, files), file=sys.stderr)
