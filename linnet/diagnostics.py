"""Diagnostics: every user-facing error is a code, a message and a source span.

The front end never raises a Python exception for a user's mistake. Passes
collect `Diagnostic` values in a `DiagnosticBag`; the command line renders
them rustc-style (a caret under the source line) or as JSON for tools.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable

from .errors import LinnetError

_LONE_CR = re.compile(r"\r(?!\n)")


def unify_newlines(text: str) -> str:
    """A lone carriage return (old Mac line ends) as a newline, so that a text ends its
    lines the same way whether it comes from a file or a string. `\r\n` stays, and the
    length is unchanged, so offsets into the text stay valid."""
    return _LONE_CR.sub("\n", text)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file's text, with a line table so spans can be shown as line:column."""

    path: str
    text: str
    line_starts: tuple[int, ...] = field(default=(), repr=False, compare=False)

    @staticmethod
    def of(path: str, text: str) -> "SourceFile":
        text = unify_newlines(text)
        starts = [0]
        starts.extend(i + 1 for i, ch in enumerate(text) if ch == "\n")
        return SourceFile(path, text, tuple(starts))

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.line_starts[lo] + 1

    def line_text(self, line: int) -> str:
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r")


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range of character offsets in one file."""

    file: str
    start: int
    end: int

    def to(self, other: "Span") -> "Span":
        """The span covering both, from the start of self to the end of other."""
        return Span(self.file, min(self.start, other.start), max(self.end, other.end))


NO_SPAN = Span("<none>", 0, 0)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    span: Span
    label: str = ""
    notes: tuple[str, ...] = ()
    help: str = ""
    severity: str = "error"

    def render(self, sources: "dict[str, SourceFile]", color: bool = False) -> str:
        """This diagnostic with its source line and a caret (`render`), so that
        `LinnetError` shows it without importing this module."""
        return render(self, sources, color)


class DiagnosticBag:
    """Collects diagnostics; passes report into it and keep going."""

    def __init__(self, sources: "dict[str, SourceFile] | None" = None) -> None:
        self.items: list[Diagnostic] = []
        self._seen: set[tuple[str, Span, str]] = set()
        self.sources = sources or {}  # the files spans point into, for `place`

    def place(self, span: Span) -> str:
        """` at line 3` for a span in a known file (where a message points to a second
        place, such as a declaration), else nothing."""
        source = self.sources.get(span.file)
        return f" at line {source.position(span.start)[0]}" if source is not None else ""

    def error(self, code: str, message: str, span: Span, label: str = "",
              help: str = "", notes: Iterable[str] = ()) -> None:
        self.add(Diagnostic(code, message, span, label, tuple(notes), help))

    def add(self, diagnostic: Diagnostic) -> None:
        """Keep a diagnostic; the same error at the same place, reached twice (a body
        checked on two paths), is kept once."""
        key = (diagnostic.code, diagnostic.span, diagnostic.message)
        if key not in self._seen:
            self._seen.add(key)
            self.items.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            self.add(diagnostic)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.items, key=lambda d: (d.span.file, d.span.start, d.code))


class CompileError(LinnetError):
    """Raised to abandon a compilation after diagnostics were collected.

    `str(err)` is the diagnostics rendered (with carets once `sources` are known:
    `compile_source` gives them the program's files before the error reaches its caller)."""

    def __init__(self, diagnostics: list[Diagnostic],
                 sources: dict[str, SourceFile] | None = None) -> None:
        super().__init__("", diagnostics, sources)

    def __str__(self) -> str:
        return "\n\n".join(render(d, self.sources) for d in self.diagnostics)


def render(diagnostic: Diagnostic, sources: dict[str, SourceFile], color: bool = False) -> str:
    """Render one diagnostic with its source line and a caret, rustc style; `color` adds
    rustc's colours (ANSI escapes) for a terminal.

    Everything shown is passed through `visible`: a source line (or a file name) holding
    control characters must not move the cursor, change colours or reorder the text of the
    terminal it is printed on."""
    paint = _paint if color else _plain
    head = (paint(f"{diagnostic.severity}[{diagnostic.code}]", SEVERITY_STYLE.get(
        diagnostic.severity, BOLD)) + paint(f": {visible(diagnostic.message)}", BOLD))
    source = sources.get(diagnostic.span.file)
    if source is None:
        lines = [head, f"  {paint('-->', BLUE)} {visible(diagnostic.span.file)}"]
        gutter = " "
    else:
        lines = [head] + _excerpt(diagnostic, source, paint)
        gutter = " " * len(str(source.position(diagnostic.span.start)[0]))
    # `= note` and `= help` put their `=` under the excerpt's `|`, as rustc does
    lines += [f"{gutter} {paint('= note', BOLD)}: {visible(note)}" for note in diagnostic.notes]
    if diagnostic.help:
        lines.append(f"{gutter} {paint('= help', BOLD)}: {visible(diagnostic.help)}")
    return "\n".join(lines)


BOLD, RED, YELLOW, BLUE = "1", "1;31", "1;33", "1;34"
SEVERITY_STYLE = {"error": RED, "warning": YELLOW}


def _paint(text: str, style: str) -> str:
    return f"\x1b[{style}m{text}\x1b[0m"


def _plain(text: str, style: str) -> str:
    return text


def _excerpt(diagnostic: Diagnostic, source: SourceFile, paint=_plain) -> list[str]:
    span = diagnostic.span
    line, col = source.position(span.start)
    text = source.line_text(line)
    end_line, end_col = source.position(max(span.start, span.end))
    width = (end_col - col) if end_line == line else len(text) - col + 1
    gutter = " " * len(str(line))
    before, marked = visible(text[:col - 1]), visible(text[col - 1:col - 1 + max(1, width)])
    caret = " " * len(before) + paint("^" * max(1, len(marked)), RED)
    label = f" {paint(visible(diagnostic.label), RED)}" if diagnostic.label else ""
    bar = paint("|", BLUE)
    return [
        f"{gutter}{paint('-->', BLUE)} {visible(span.file)}:{line}:{col}",
        f"{gutter} {bar}",
        f"{paint(str(line), BLUE)} {bar} {visible(text)}",
        f"{gutter} {bar} {caret}{label}",
    ]


TAB = "    "


def visible(text: str) -> str:
    """Text safe to print on a terminal: a tab as four spaces (so carets line up), and
    every other control or format character (escape sequences, bidirectional overrides,
    zero-width characters, line separators) as an escape such as `\\x1b` or `\\u202e`."""
    return "".join(_visible_char(c) for c in text)


def _visible_char(c: str) -> str:
    if c == "\t":
        return TAB
    if unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp"):
        return c
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def to_json(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    """Machine-readable diagnostics: a JSON list, one object per diagnostic."""
    out = []
    for d in diagnostics:
        source = sources.get(d.span.file)
        line, col = source.position(d.span.start) if source else (0, 0)
        end_line, end_col = source.position(d.span.end) if source else (0, 0)
        out.append({
            "code": d.code, "severity": d.severity, "message": d.message,
            "file": d.span.file, "line": line, "column": col,
            "end": {"line": end_line, "column": end_col},
            "label": d.label, "notes": list(d.notes), "help": d.help,
        })
    return json.dumps(out, indent=2)
