"""The command line's answers to a newcomer's first mistakes: an unknown name gets the
near one, a bare `inspect` shows the file, a dump of a pass that did not run says so."""

from __future__ import annotations

from pathlib import Path

from linnet.cli import main

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = str(ROOT / "examples" / "softmax.linnet")


def test_verify_an_unknown_op_suggests_the_near_one(capsys) -> None:
    assert main(["verify", SOFTMAX, "--op", "softmx"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"linnet verify: no op named `softmx` in {SOFTMAX}; its ops with a kernel: softmax "
        "(did you mean `softmax`?)")


def test_verify_an_unknown_entry_suggests_the_near_one(capsys) -> None:
    assert main(["verify", SOFTMAX, "--entry", "mian"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"linnet verify: no entry named `mian` in {SOFTMAX}; its entries: main, softmax_any "
        "(did you mean `main`?)")
