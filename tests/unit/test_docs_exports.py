"""docs/exports.md is runnable: its `sh` blocks (linnet commands) and `python` blocks run in
order, in a temporary directory, as a reader would run them from the repository root."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from linnet.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "exports.md"
BLOCK = re.compile(r"^```(sh|python)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def _run_command(line: str) -> None:
    words = shlex.split(line)
    assert words[0] == "linnet", f"only linnet commands run here: {line}"
    assert main(words[1:]) == 0, f"`{line}` failed"


def test_every_block_of_the_exports_page_runs(tmp_path: Path, monkeypatch, capsys) -> None:
    pytest.importorskip("onnxruntime")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")  # the page's paths, as from the root
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert any(kind == "python" for kind, _ in blocks)
    for kind, text in blocks:
        if kind == "sh":
            for line in text.splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    _run_command(line.strip())
        else:
            exec(compile(text, f"{PAGE.name} block", "exec"), {"__name__": "__docs__"})
