"""The one exception family of the package: every error Linnet raises is a `LinnetError`.

A caller catches `linnet.LinnetError` and gets every mistake the compiler, the loaders and
the tuner report; the narrower classes say what kind it was. Classes that also name a
built-in (`InputError` is a `TypeError`, `InputShapeError` a `ValueError`) keep working
where callers catch the built-in.

A `LinnetError` that comes from diagnostics keeps them (`err.diagnostics`) and the source
files they point into (`err.sources`), and its `str()` is their rendered text, carets and
all, as the command line prints them. This module imports nothing heavy: `import linnet`
stays cheap.
"""

from __future__ import annotations

import difflib
from typing import Any


class LinnetError(Exception):
    """A program, a compilation or a call that Linnet rejects.

    `str(err)` is the whole message: for errors with diagnostics, each rendered with its
    source line (`err.diagnostics`, a list of `linnet.diagnostics.Diagnostic`)."""

    def __init__(self, message: str = "", diagnostics: list | None = None,
                 sources: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostics: list = list(diagnostics or [])
        self.sources: dict[str, Any] = dict(sources or {})

    def __str__(self) -> str:
        if not self.diagnostics:
            return self.message
        # each diagnostic renders itself: this module stays below linnet.diagnostics
        rendered = "\n\n".join(d.render(self.sources) for d in self.diagnostics)
        return f"{self.message}\n{rendered}" if self.message else rendered


class UsageError(LinnetError):
    """A request the compiler cannot act on: an unknown entry, target or stage, a missing
    or malformed binding of a generic.

    `str(err)` is written for the library (`bind={"R": 8}`); `err.command_line` says the
    same for the command line (`--bind R=8`), where the request came from flags."""

    def __init__(self, message: str, command_line: str | None = None) -> None:
        super().__init__(message)
        self.command_line = command_line if command_line is not None else message


class MissingGeneric(UsageError):
    """A generic that needs a value and has none (`generic` the declaration: its name,
    kind and span). `linnet onnx` leaves such a `Dim` symbolic (docs/exports.md)."""

    def __init__(self, message: str, command_line: str, generic: object) -> None:
        super().__init__(message, command_line)
        self.generic = generic


class InputError(LinnetError, TypeError):
    """A call of a loaded entry with inputs it does not take: their number, or a dtype
    other than the parameter's (the language never converts one implicitly)."""


class InputShapeError(LinnetError, ValueError):
    """A call of a loaded entry with an input whose shape its parameter's type rejects,
    or from which its generics cannot be bound."""


def suggest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """` (did you mean `x`?)` for the closest of choices, or nothing."""
    close = closest(word, choices)
    return f" (did you mean `{close}`?)" if close else ""


def closest(word: str, choices: "list[str] | tuple[str, ...] | set[str]") -> str | None:
    """The choice nearest to `word` when one is near enough to be a slip of the keyboard
    (`tahn` for `tanh`, `retrun` for `return`), else None."""
    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return close[0] if close else None


def first_line(err: BaseException, limit: int = 300) -> str:
    """The first line of an exception's message, cut at `limit` characters: what a table
    row or a one-line outcome shows of a failure instead of a traceback."""
    lines = str(err).strip().splitlines()
    return lines[0][:limit] if lines else ""
