"""Helpers for tests that check a small program held in a string."""

from __future__ import annotations

from pathlib import Path

from linnet.check.frontend import check_program


# An op whose grad clause (3 dy) is not its body's derivative (2 dy), so that a gradient
# shows which of them was used; `main` returns `scaled(x)`.
SCALED = """module m
pub op scaled<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return x * 2.0
} grad(y, dy) {
    return dy * 3.0
}
entry main<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return scaled(x)
}
"""


def write_program(tmp_path: Path, text: str, name: str = "prog.linnet") -> str:
    """The program written to a file under tmp_path; its path."""
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def diagnostics_of(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    """(code, the text its span covers) of each diagnostic `check` gives the program."""
    result = check_program(write_program(tmp_path, text))
    return [(d.code, text[d.span.start:d.span.end]) for d in result.diagnostics]
