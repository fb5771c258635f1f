"""A rendered diagnostic's `= note` and `= help` lines put their `=` under the excerpt's
`|`, as rustc does, whatever the width of the line number; without a source, under the
column of `-->`."""

from __future__ import annotations

import pytest

from linnet.diagnostics import Diagnostic, SourceFile, Span, render


def _rendered(line: int, with_source: bool = True) -> list[str]:
    text = "".join(f"let x{k} = {k}\n" for k in range(1, line + 1))
    start = text.index(f"x{line} ")
    d = Diagnostic("E2104", "mismatch", Span("f.linnet", start, start + 2), "here",
                   notes=("a note",), help="a help")
    sources = {"f.linnet": SourceFile.of("f.linnet", text)} if with_source else {}
    return render(d, sources).splitlines()


@pytest.mark.parametrize("line", [5, 12, 120])
def test_note_and_help_align_with_the_gutter(line: int) -> None:
    lines = _rendered(line)
    bar = lines[2].index("|")
    assert lines[2].strip() == "|" and lines[3].startswith(f"{line} |")
    assert lines[-2] == " " * bar + "= note: a note"
    assert lines[-1] == " " * bar + "= help: a help"


def test_without_a_source_they_align_with_the_arrow() -> None:
    lines = _rendered(5, with_source=False)
    assert lines[1] == "  --> f.linnet"
    assert lines[-2:] == ["  = note: a note", "  = help: a help"]
