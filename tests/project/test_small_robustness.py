"""Small crashes and leaks, each fixed where it arose.

- A generic of an unknown kind is E1201 once; the types and values that mention it are
  not checked further (no crash on `x + 1.0`, no second error).
- `--bind` takes ASCII decimal digits only (`²` is a command-line mistake, exit 2).
- Rendered diagnostics show control characters of the source escaped.
- An integer `/` or `%` by a literal or provably zero divisor is E2130.
- A source whose lines end with a lone `\\r` checks from a string as from a file.
- Every entry of `linnet.torch.load` is reachable by item access, whatever its name.
- A tuple in index notation is E3104; a generic named like a dtype is E1207, and the name
  still means the dtype (no KeyError in the checker).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import linnet.torch as lt
from linnet.cli.main import main
from linnet.diagnostics import SourceFile, render, visible
from linnet.check.frontend import check_program
from programs import diagnostics_of, write_program



# ------------------------------------------------------ unknown generic kinds

UNKNOWN_KIND = """module m

fn f<T: Bogus, N: Dimm>(x: Tensor[4; T], y: Tensor[N; f32]) -> Tensor[4; T] {
    let z = x + 1.0
    let w = y * 2.0 + cast<T>(1)
    let n = N + 1
    return x + 1.0
}

entry main(x: Tensor[4; f32], y: Tensor[3; f32]) -> Tensor[4; f32] {
    return f(x, y)
}
"""


def test_an_unknown_generic_kind_is_one_e1201_each(tmp_path):
    assert diagnostics_of(tmp_path, UNKNOWN_KIND) == [("E1201", "T: Bogus"), ("E1201", "N: Dimm")]


def test_an_unknown_generic_kind_is_a_diagnostic_on_the_command_line(tmp_path, capsys):
    assert main(["check", write_program(tmp_path, UNKNOWN_KIND)]) == 1
    assert "unknown generic kind `Bogus`" in capsys.readouterr().err


# ------------------------------------------------------------------- --bind

GENERIC = ("module m\n\nentry main<R: Dim, *S: Shape>(x: Tensor[R, *S; f32]) -> "
           "Tensor[R, *S; f32] {\n    return x\n}\n")


@pytest.mark.parametrize("value", ["R=²", "R=٣", "R=99999999999999999999", "S=2,³"])
def test_bind_takes_ascii_digits_only(tmp_path, capsys, value):
    others = ["--bind", "S=2"] if value.startswith("R") else ["--bind", "R=2"]
    assert main(["torch", write_program(tmp_path, GENERIC), "--bind", value, *others]) == 2
    err = capsys.readouterr().err
    assert err.startswith("linnet torch: --bind") and "internal compiler error" not in err


def test_bind_with_ascii_digits_compiles(tmp_path, capsys):
    out = tmp_path / "out.py"
    assert main(["torch", write_program(tmp_path, GENERIC), "--bind", "R=3", "--bind", "S=2,4",
                 "-o", str(out)]) == 0
    assert "def main(" in out.read_text()


# --------------------------------------------------------- control characters

def test_visible_escapes_control_and_format_characters():
    assert visible("a\x1b[31mb\x07\x00\x7f") == "a\\x1b[31mb\\x07\\x00\\x7f"
    assert visible("x\u202ey\u200bz\u2028") == "x\\u202ey\\u200bz\\u2028"
    assert visible("\tlet é = 1") == "    let é = 1"


def test_a_rendered_diagnostic_never_holds_a_control_character(tmp_path):
    text = ("module m\n\nentry main(x: f32) -> f32 {\n"
            "\tlet y = /*\x1b[2J\u202e*/ x + h // \x07\x1b]0;title\x07\n    return y\n}\n")
    result = check_program(write_program(tmp_path, text))
    [d] = result.diagnostics
    shown = render(d, result.sources)
    assert not any(c in shown for c in "\x1b\x07\u202e\t")
    lines = shown.splitlines()
    assert lines[3] == "4 |     let y = /*\\x1b[2J\\u202e*/ x + h // \\x07\\x1b]0;title\\x07"
    assert lines[4].index("^") == lines[3].index("h")  # the caret still under `h`


def test_the_command_line_prints_no_control_character(tmp_path, capsys):
    text = "module m\n\nentry main(x: f32) -> f32 {\n    return x + h // \x1b[31m\n}\n"
    assert main(["check", write_program(tmp_path, text)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b[31m" in err


# ---------------------------------------------------------- division by zero

@pytest.mark.parametrize("expr, divisor", [
    ("a % 0", "0"), ("a / 0", "0"), ("a / ZERO", "ZERO"), ("a / (N - N)", "N - N"),
    ("a % z", "z"), ("k / (1 - 1)", "1 - 1"), ("a / -0", "-0"),
])
def test_an_integer_division_by_a_zero_known_at_compile_time_is_e2130(tmp_path, expr,
                                                                     divisor):
    text = ("module m\n\nconst ZERO = 0\n\nentry main<N: Dim>(a: Tensor[4; i32], k: i32) -> "
            f"Tensor[4; i32] {{\n    let z = N - N\n    let q = {expr}\n    return a\n}}\n")
    assert diagnostics_of(tmp_path, text) == [("E2130", divisor)]


@pytest.mark.parametrize("expr", ["x / 0.0", "x % 0.0", "a / 1", "a % N", "a / k"])
def test_other_divisions_check(tmp_path, expr):
    text = ("module m\n\nentry main<N: Dim>(a: Tensor[4; i32], x: Tensor[4; f32], k: i32) -> "
            f"i32 where N > 0 {{\n    let q = {expr}\n    return k\n}}\n")
    assert diagnostics_of(tmp_path, text) == []


def test_a_division_by_zero_in_a_kernel_is_e2130(tmp_path):
    text = """module m

kernel k(x: Tensor[16; i32]) -> y: Tensor[16; i32] grid(1) {
    let offs = iota<i32>(16)
    store(y[offs], load(x[offs]) % 0)
}
"""
    assert diagnostics_of(tmp_path, text) == [("E2130", "0")]


# ---------------------------------------------------------- CR-only sources

CR_ONLY = "module m\r\rentry main(x: f32) -> f32 {\r    let y = x * 2.0\r    return y\r}\r"


def test_a_cr_only_source_checks_from_a_string_as_from_a_file(tmp_path):
    path = tmp_path / "cr.linnet"
    path.write_bytes(CR_ONLY.encode())
    assert check_program(str(path)).diagnostics == []
    assert check_program("cr.linnet", CR_ONLY).diagnostics == []


def test_a_cr_only_source_reports_lines_and_columns(tmp_path):
    text = CR_ONLY.replace("x * 2.0", "x * h")
    result = check_program("cr.linnet", text)
    [d] = result.diagnostics
    assert (d.code, result.sources["cr.linnet"].position(d.span.start)) == ("E1201", (4, 17))
    assert SourceFile.of("cr.linnet", text).line_text(4) == "    let y = x * h"
    assert "4 |     let y = x * h" in render(d, {"cr.linnet": SourceFile.of("cr.linnet", text)})


def test_crlf_offsets_are_unchanged(tmp_path):
    text = CR_ONLY.replace("\r", "\r\n").replace("x * 2.0", "x * h")
    [d] = check_program("crlf.linnet", text).diagnostics
    assert text[d.span.start:d.span.end] == "h"


# ------------------------------------------------- entries named like attributes

ENTRIES = """module m

entry source(x: Tensor[2; f32]) -> Tensor[2; f32] {
    return x + 1.0
}

entry entries(x: Tensor[2; f32]) -> Tensor[2; f32] {
    return x * 2.0
}

entry __init__(x: Tensor[2; f32]) -> Tensor[2; f32] {
    return x - 1.0
}

entry run(x: Tensor[2; f32]) -> Tensor[2; f32] {
    return x
}
"""


def test_every_entry_is_reachable_by_item_access(tmp_path):
    m = lt.load(write_program(tmp_path, ENTRIES), compile=False)
    x = torch.tensor([1.0, 2.0])
    assert m["source"](x).tolist() == [2.0, 3.0]
    assert m["entries"](x).tolist() == [2.0, 4.0]
    assert m["__init__"](x).tolist() == [0.0, 1.0]
    assert m["run"](x).tolist() == m.run(x).tolist() == [1.0, 2.0]
    assert m.entries == ["__init__", "entries", "run", "source"]  # the attribute still lists
    assert "source" in m and "nothing" not in m
    assert "def main(" in m.source("run")  # and the method still generates code
    with pytest.raises(KeyError, match="no entry named 'nothing'"):
        m["nothing"]
    with pytest.raises(AttributeError, match="no entry named 'nothing'"):
        m.nothing


def test_a_loaded_module_can_be_copied(tmp_path):
    import copy
    m = lt.load(write_program(tmp_path, ENTRIES), compile=False)
    assert copy.copy(m)["run"] is m["run"]


# ------------------------------------------- tuples in notation, dtype-named generics

def test_a_tuple_in_index_notation_is_e3104(tmp_path):
    text = ("module m\n\nfn f(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
            "    let b[c] = (x[c], x[c])\n    return x\n}\n")
    assert diagnostics_of(tmp_path, text) == [("E3104", "(x[c], x[c])")]


def test_a_generic_named_like_a_dtype_is_e1207_and_the_dtype_keeps_its_meaning(tmp_path):
    """`i32` in `program_id(0) * 2` is the dtype, not the `Dim` generic (was KeyError)."""
    text = """module m

kernel k<N: Dim, i32: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(1)
where N <= 4 {
    let offs = program_id(0) * 2 + iota<i32>(4)
    store(y[offs], load(x[offs], offs < N, 0.0), offs < N)
}
"""
    assert diagnostics_of(tmp_path, text) == [("E1207", "i32: Dim")]
