"""`linnet.check.analysis_memo`: a program is checked once for all the compiles of it, and an
edit (of the file or of a module it uses) checks it again."""

from __future__ import annotations

from pathlib import Path

from linnet.check.instance import analyze_program
from linnet.syntax.program import load_program

LIB = "module lib\n\npub fn twice(x: f32) -> f32 {\n    return x * 2.0\n}\n"
MAIN = ("module main\nuse crate.lib::{twice}\n\n"
        "entry main(x: f32) -> f32 {\n    return twice(x)\n}\n")


def write(tmp_path: Path, lib: str = LIB) -> Path:
    (tmp_path / "lib.linnet").write_text(lib)
    main = tmp_path / "main.linnet"
    main.write_text(MAIN)
    return main


def test_the_same_program_is_checked_once(tmp_path) -> None:
    main = write(tmp_path)
    first = analyze_program(load_program(str(main)))
    again = analyze_program(load_program(str(main)))
    assert first.diagnostics == [] and again is first


def test_an_edited_module_is_checked_again(tmp_path) -> None:
    main = write(tmp_path)
    first = analyze_program(load_program(str(main)))
    write(tmp_path, LIB.replace("2.0", "3.0"))
    edited = analyze_program(load_program(str(main)))
    assert edited is not first and edited.diagnostics == []
    assert analyze_program(load_program(str(main))) is edited


def test_a_program_with_errors_is_not_remembered(tmp_path) -> None:
    main = write(tmp_path, LIB.replace("x * 2.0", "x + true"))
    first = analyze_program(load_program(str(main)))
    again = analyze_program(load_program(str(main)))
    assert first.diagnostics and again is not first
    assert [d.code for d in again.diagnostics] == [d.code for d in first.diagnostics]
