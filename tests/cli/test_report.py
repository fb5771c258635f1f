"""Diagnostics on every command: --json, the summary line, and colour (--color, NO_COLOR)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from linnet.cli.main import main
from linnet.cli.report import use_color
from linnet.testing.fork_servers import python_command

ROOT = Path(__file__).resolve().parents[2]
RELU = str(ROOT / "examples" / "relu.linnet")
BAD = "module m\n\nentry main(x: f32) -> f32 {\n    let y = x + true\n    return y\n}\n"
COMMANDS = (["torch"], ["jax"], ["onnx"], ["stablehlo"], ["compile", "--target", "jax"],
            ["verify"])


@pytest.fixture
def bad(tmp_path: Path) -> str:
    path = tmp_path / "bad.linnet"
    path.write_text(BAD)
    return str(path)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_json_on_every_command(command, bad, capsys):
    assert main([*command, bad, "--json"]) == 1
    captured = capsys.readouterr()
    (d,) = json.loads(captured.err)
    assert (d["code"], d["file"], d["line"], d["column"]) == ("E2103", bad, 4, 13)
    assert "error[" not in captured.out


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_summary_line_on_every_command(command, bad, capsys):
    assert main([*command, bad, "--color", "never"]) == 1
    err = capsys.readouterr().err
    assert "error[E2103]: mixed dtypes f32 and bool" in err
    assert err.rstrip().splitlines()[-1] == "1 error in 1 file"


def test_json_after_success_is_an_empty_list(capsys):
    assert main(["stablehlo", RELU, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.err) == [] and "func.func public @main" in captured.out


def test_check_json_stays_on_stdout(bad, capsys):
    assert main(["check", bad, "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)[0]["code"] == "E2103" and captured.err == ""


def test_verify_counts_the_files_it_was_given(bad, capsys):
    assert main(["verify", bad, bad, "--color", "never"]) == 1
    assert capsys.readouterr().err.rstrip().splitlines()[-1] == "2 errors in 2 files"


def test_color_always_paints_and_never_does_not(bad, capsys):
    assert main(["torch", bad, "--color", "always"]) == 1
    err = capsys.readouterr().err
    assert "\x1b[1;31merror[E2103]\x1b[0m" in err and "\x1b[1;34m-->\x1b[0m" in err
    assert main(["torch", bad, "--color", "never"]) == 1
    assert "\x1b[" not in capsys.readouterr().err


class _Terminal:
    def isatty(self) -> bool:
        return True


def test_auto_colours_a_terminal_unless_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert use_color("auto", _Terminal()) is True
    assert use_color("auto", open(os.devnull, "w")) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color("auto", _Terminal()) is False
    assert use_color("always", _Terminal()) is True  # the command line wins over NO_COLOR
    monkeypatch.setenv("NO_COLOR", "")  # empty: not set
    assert use_color("auto", _Terminal()) is True
    monkeypatch.setenv("TERM", "dumb")
    assert use_color("auto", _Terminal()) is False


def test_piped_output_has_no_colour(bad):
    env = {**os.environ, "NO_COLOR": ""}
    done = subprocess.run([*python_command(env), "-m", "linnet", "check", bad],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert done.returncode == 1 and "\x1b" not in done.stderr and "error[E2103]" in done.stderr
