"""The command line: exit statuses, JSON diagnostics, --bind handling, dumps."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from linnet.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = str(ROOT / "examples" / "softmax.linnet")
ENTRIES = str(ROOT / "tests" / "spec" / "valid" / "52_entries.linnet")


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "prog.linnet"
    path.write_text(text)
    return str(path)


def test_check_ok_exits_0(capsys):
    assert main(["check", SOFTMAX]) == 0
    assert "ok: 1 file checked" in capsys.readouterr().out


def test_check_error_exits_1_with_rendered_caret(tmp_path, capsys):
    path = _write(tmp_path, "module m\nfn f(x: f32, y: bf16) -> f32 {\n    return x + y\n}\n")
    assert main(["check", path]) == 1
    err = capsys.readouterr().err
    assert "error[E2103]" in err and f"{path}:3:12" in err and "^^^^^" in err


def test_check_reports_independent_errors_together(tmp_path, capsys):
    path = _write(tmp_path, "module m\nfn f(x: f32) -> f32 {\n    let a = x + true\n"
                            "    let b = undefined_name\n    return x\n}\n")
    assert main(["check", "--json", path]) == 1
    codes = [d["code"] for d in json.loads(capsys.readouterr().out)]
    assert codes == ["E2103", "E1201"]


def test_check_json_fields(tmp_path, capsys):
    path = _write(tmp_path, "module m\nfn f() -> i8 {\n    return 300\n}\n")
    main(["check", "--json", path])
    (d,) = json.loads(capsys.readouterr().out)
    assert (d["code"], d["line"], d["column"], d["end"]) == ("E2105", 3, 12, {"line": 3,
                                                                              "column": 15})
    assert d["severity"] == "error" and d["file"] == path and "300" in d["message"]


@pytest.mark.parametrize("argv", [["check"], ["check", "/no/such/file.linnet"], ["frobnicate"],
                                  ["torch", SOFTMAX], ["compile"]])
def test_command_line_mistakes_exit_2(argv):
    with pytest.raises(SystemExit) as exit_:
        code = main(argv)
        raise SystemExit(code)
    assert exit_.value.code == 2


def test_list_passes_names_and_describes_each(capsys):
    assert main(["compile", "--list-passes"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) >= 10
    assert all(len(line.split(None, 1)) == 2 for line in lines)
    assert lines[0].split()[0] == "parse"


def test_bind_errors_are_command_line_mistakes(capsys):
    assert main(["torch", ENTRIES, "--entry", "generic"]) == 2
    assert "--bind N=8" in capsys.readouterr().err
    assert main(["torch", ENTRIES, "--entry", "generic", "--bind", "Q=1"]) == 2
    assert main(["torch", ENTRIES, "--entry", "generic", "--bind", "N=x"]) == 2
    assert main(["torch", ENTRIES, "--entry", "nope"]) == 2


def test_dump_after_prints_a_banner(capsys):
    code = main(["compile", SOFTMAX, "--entry", "main", "--stop-after", "bind-generics",
                 "--dump-after", "parse,bind-generics"])
    out = capsys.readouterr().out
    assert code == 0
    assert "// ----- IR after parse (surface) -----" in out
    assert "// ----- IR after bind-generics (bound) -----\nentry main<>" in out


def test_unknown_pass_is_a_mistake(capsys):
    assert main(["compile", SOFTMAX, "--dump-after", "nonsense"]) == 2


def test_internal_error_exits_3_in_one_line(monkeypatch, capsys):
    import linnet.check.frontend as frontend
    monkeypatch.setattr(frontend, "check_program", lambda path, text=None: 1 / 0)
    assert main(["check", SOFTMAX]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["linnet: internal compiler error: ZeroDivisionError: division by zero"]


def test_bound_values_must_satisfy_where(capsys):
    assert main(["compile", ENTRIES, "--entry", "generic", "--bind", "N=0",
                 "--stop-after", "bind-generics"]) == 1
    err = capsys.readouterr().err
    assert "error[E2206]: the bound values fail `where 0 >= 1`" in err


def test_jax_command_prints_a_module(capsys, tmp_path):
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "softmax_jax.py"
    assert main(["jax", str(root / "examples" / "softmax.linnet"), "--entry", "softmax_any",
                 "--bind", "R=2", "--bind", "C=3", "-o", str(out)]) == 0
    text = out.read_text()
    assert "import jax" in text and "def main(*inputs):" in text and "torch" not in text
    assert main(["jax", str(root / "examples" / "softmax.linnet"), "--entry", "nope"]) == 2


STD_USER = "module user\nuse std.shout::{loud}\n\nentry main(x: f32) -> f32 {\n    return loud(x)\n}\n"


def _library(tmp_path: Path) -> Path:
    library = tmp_path / "mystd"
    library.mkdir()
    (library / "shout.linnet").write_text(
        "module std.shout\n\npub fn loud(x: f32) -> f32 {\n    return x * 10.0\n}\n")
    return library


def test_std_names_the_library_for_the_command_only(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("LINNET_STD", raising=False)
    library, user = _library(tmp_path), _write(tmp_path, STD_USER)
    assert main(["check", "--std", str(library), user]) == 0
    assert main(["torch", "--std", str(library), user, "-o", str(tmp_path / "out.py")]) == 0
    assert "10.0" in (tmp_path / "out.py").read_text()
    assert "LINNET_STD" not in os.environ
    capsys.readouterr()
    assert main(["check", user]) == 1  # the packaged library has no `shout`
    assert "error[E1202]: module `std.shout` not found" in capsys.readouterr().err


def test_linnet_std_names_the_library_without_the_option(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_STD", str(_library(tmp_path)))
    assert main(["check", _write(tmp_path, STD_USER)]) == 0


def test_std_that_is_no_directory_is_a_command_line_mistake(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:  # argparse's exit, as for every option
        main(["check", "--std", str(tmp_path / "missing"), SOFTMAX])
    assert exit_.value.code == 2 and "not a directory" in capsys.readouterr().err
