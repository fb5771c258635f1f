"""Each command's `--help` is true: its examples parse, the cheap ones run, every option says
what it does, and docs/cli.md names every option in the command's section.

The examples are the lines of a command's help that start with `linnet ` (a trailing `\\`
continues one onto the next line), or that pipe into `linnet` (`cat model.linnet | linnet
check -`). Each must parse with the command's parser (argparse exits with status 2 on a
mistake). Those that need no GPU and take seconds, not minutes (every command but `verify`,
`tune` without `--list` and `fuzz`), also run, as written, in a scratch directory holding
a copy of `examples/` and a `model.linnet` with one entry `run<R, C>`, and must exit 0.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from docblocks import ROOT, make_scratch
from linnet.cli.main import build_parser

CLI_MD = ROOT / "docs" / "cli.md"
SHELL_OPERATORS = {"|", ">", "<", ">>", ";", "&", "&&", "||"}
SLOW = {"verify", "fuzz"}  # kernels against bodies, random programs: minutes, not seconds

MODEL = """module model

entry run<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] {
    let top[r] = max[c] x[r, c]
    let e[r, c] = exp(x[r, c] - top[r])
    let total[r] = sum[c] e[r, c]
    let y[r, c] = e[r, c] / total[r]
    return y
}
"""


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


COMMANDS = _commands()


def examples(help_text: str) -> list[str]:
    """The example command lines of a help text, continuation lines joined."""
    lines = help_text.splitlines()
    found = []
    k = 0
    while k < len(lines):
        line = lines[k].strip()
        if line.startswith("linnet ") or re.match(r"^\S.*\|\s*linnet ", line):
            while line.endswith("\\") and k + 1 < len(lines):
                k += 1
                line = line[:-1].rstrip() + " " + lines[k].strip()
            found.append(line)
        k += 1
    return found


def linnet_argv(line: str) -> list[str]:
    """The arguments of the `linnet` command of an example line: after a pipe into it, up
    to a redirection or a comment."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    start = max(k for k, w in enumerate(words) if w == "linnet")
    argv = []
    for word in words[start + 1:]:
        if word in SHELL_OPERATORS:
            break
        argv.append(word)
    return argv


EXAMPLES = [(name, line) for name, parser in COMMANDS.items()
            for line in examples(parser.format_help())]


def test_every_command_has_examples() -> None:
    assert {name for name, _ in EXAMPLES} == set(COMMANDS)


def test_example_extraction() -> None:
    text = ("examples:\n  linnet tune a.linnet --op m \\\n      --bind M=4   # one\n"
            "  cat m.linnet | linnet check -\nusage: linnet check FILE\n")
    assert examples(text) == ["linnet tune a.linnet --op m --bind M=4   # one",
                              "cat m.linnet | linnet check -"]
    assert linnet_argv("linnet fuzz --grad --count 30 --json > report.json") == [
        "fuzz", "--grad", "--count", "30", "--json"]
    assert linnet_argv("cat m.linnet | linnet torch - -o - # out") == ["torch", "-", "-o", "-"]


@pytest.mark.parametrize(("name", "line"), EXAMPLES, ids=[line for _, line in EXAMPLES])
def test_help_example_parses(name: str, line: str) -> None:
    argv = linnet_argv(line)
    assert argv[0] == name, f"an example of `linnet {name}` runs `linnet {argv[0]}`"
    try:
        build_parser().parse_args(argv)
    except SystemExit as exit_:
        pytest.fail(f"`{line}` does not parse (exit status {exit_.code})")


def _cheap(name: str, line: str) -> bool:
    argv = linnet_argv(line)
    return name not in SLOW and (name != "tune" or "--list" in argv)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    work, env = make_scratch(tmp_path_factory.mktemp("help-examples"))
    (work / "model.linnet").write_text(MODEL)
    return work, env


@pytest.mark.parametrize(("name", "line"), [e for e in EXAMPLES if _cheap(*e)],
                         ids=[line for e in EXAMPLES if _cheap(*e) for line in [e[1]]])
def test_cheap_help_example_runs(name: str, line: str, scratch) -> None:
    work, env = scratch
    done = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=work, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    stderr = done.stderr.decode(errors="replace")  # stdout may be a binary ONNX model
    assert done.returncode == 0, f"`{line}` exits with {done.returncode}:\n{stderr}"
    assert "internal compiler error" not in stderr


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_has_help(name: str) -> None:
    parser = COMMANDS[name]
    silent = [a.option_strings for a in _options(parser)
              if not a.help or a.help == argparse.SUPPRESS or not a.help.strip()]
    assert silent == []
    text = parser.format_help()
    assert [s for a in _options(parser) for s in a.option_strings if s not in text] == []


def _section(text: str, name: str) -> str:
    """The part of cli.md under the `##` heading that names `linnet NAME`."""
    match = re.search(rf"^## .*`linnet {name}`.*$", text, re.M)
    assert match, f"cli.md has no section for `linnet {name}`"
    end = re.search(r"^## ", text[match.end():], re.M)
    return text[match.start():match.end() + end.start()] if end else text[match.start():]


@pytest.mark.parametrize("name", COMMANDS)
def test_cli_md_names_every_option_of_the_command(name: str) -> None:
    section = _section(CLI_MD.read_text(encoding="utf-8"), name)
    missing = [s for a in _options(COMMANDS[name]) for s in a.option_strings
               if s not in ("-h", "--help") and not re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])",
                                                               section)]
    assert missing == []
