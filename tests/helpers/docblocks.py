"""Reading the runnable blocks of the documentation, running them, and comparing what they
print with what the page shows: the machinery of `test_docs_blocks.py`, where the
conventions are described.

Kept apart from the tests so that the conventions (markers, console transcripts, the `...`
elision) are code with unit tests of their own.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from linnet.testing.child_env import child_env
from linnet.testing.fork_servers import python_command

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]

SHELL_TAGS = frozenset({"shell", "sh", "bash"})
RUNNABLE_TAGS = SHELL_TAGS | {"console", "python"}

FENCE_OPEN = re.compile(r"^```(\S*)[ \t]*$")
MARKER = re.compile(r"^<!--\s*docs-test:\s*(.*?)\s*-->[ \t]*$")
SKIP = re.compile(r"^skip\s*\((.*)\)$")
FILE = re.compile(r"^file\s+(\S+)$")
MODULE = re.compile(r"^module[ \t]+([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)",
                    re.M)

# What the scratch directory holds: the paths the pages name, copied from the repository.
COPIED = ("examples", "tests", "benchmarks")
# What a shown transcript may differ in: durations ("in 9 s", "0.4 ms", with the spaces that
# pad them into a column; `"time_ms": 36.9` in JSON), today's date, and the scratch
# directory's absolute path. Nothing else is normalised.
VARYING = (
    (re.compile(r"\b\d+(?:\.\d+)?(?:e-?\d+)? ?(?:s|ms|us|µs)\b *"), "<time> "),
    (re.compile(r'("\w*time_ms"): [0-9.e+-]+'), r"\1: <time>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<date>"),
)
ELLIPSIS = "..."
BLOCK_SECONDS = 300
STATUS = "\x1edocs-test-status "


@dataclass(frozen=True)
class Marker:
    """`<!-- docs-test: skip (why) -->` or `<!-- docs-test: file NAME -->`."""
    kind: str  # "skip" or "file"
    value: str  # the reason, or the file name


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    tag: str
    text: str
    marker: Marker | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def parse_marker(text: str) -> Marker:
    """A marker's directive, or a ValueError saying what is wrong with it."""
    skip = SKIP.match(text)
    if skip:
        if not skip.group(1).strip():
            raise ValueError("a skip marker needs a reason: `skip (needs a CUDA GPU)`")
        return Marker("skip", skip.group(1).strip())
    named = FILE.match(text)
    if named:
        return Marker("file", named.group(1))
    raise ValueError(f"unknown docs-test directive {text!r}: write `skip (REASON)` or "
                     "`file NAME`")


def parse_page(text: str, page: Path = ROOT / "page.md") -> tuple[list[Block], list[str]]:
    """The fenced blocks of a page and the problems with its markers (a marker that is
    malformed, or not on the line right above a fence)."""
    lines = text.split("\n")
    blocks: list[Block] = []
    problems: list[str] = []
    pending: tuple[int, Marker] | None = None
    k = 0
    while k < len(lines):
        marker = MARKER.match(lines[k])
        opening = FENCE_OPEN.match(lines[k])
        if marker:
            if pending:
                problems.append(f"line {pending[0]}: a marker not followed by a block")
            try:
                pending = (k + 1, parse_marker(marker.group(1)))
            except ValueError as err:
                problems.append(f"line {k + 1}: {err}")
                pending = None
            k += 1
            continue
        if opening:
            end = k + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            attached = pending[1] if pending and pending[0] == k else None
            if pending and attached is None:
                problems.append(f"line {pending[0]}: a marker not right above a block")
            blocks.append(Block(page, k + 1, opening.group(1), "\n".join(lines[k + 1:end]) +
                                "\n", attached))
            pending = None
            k = end + 1
            continue
        k += 1
    if pending:
        problems.append(f"line {pending[0]}: a marker not followed by a block")
    return blocks, problems


def page_blocks(page: Path) -> tuple[list[Block], list[str]]:
    return parse_page(page.read_text(encoding="utf-8"), page)


# ----- console transcripts -----------------------------------------------------------------

@dataclass(frozen=True)
class Command:
    text: str  # the command, continuation lines joined
    shown: list[str]  # the output the page shows for it


def transcript(text: str) -> list[Command]:
    """A console block as commands (`$ ` lines, a trailing `\\` continuing onto the next
    line) each with the lines after it up to the next command."""
    commands: list[Command] = []
    lines = text.rstrip("\n").split("\n")
    k = 0
    if lines and not lines[0].startswith("$ "):
        raise ValueError("a console block starts with a `$ ` command line")
    while k < len(lines):
        command = lines[k][2:]
        while command.endswith("\\") and k + 1 < len(lines):
            k += 1
            command = command + "\n" + lines[k]
        k += 1
        start = k
        while k < len(lines) and not lines[k].startswith("$ "):
            k += 1
        commands.append(Command(command, lines[start:k]))
    return commands


def normalise(text: str, scratch: Path | None = None) -> str:
    """What may differ from run to run made equal: the scratch path, durations, dates, and
    trailing spaces."""
    if scratch is not None:
        text = text.replace(str(scratch) + os.sep, "").replace(str(scratch), ".")
    for pattern, replacement in VARYING:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.rstrip("\n").split("\n"))


def _pattern(shown: list[str]) -> re.Pattern[str]:
    parts = []
    for line in shown:
        if line.strip() == ELLIPSIS:
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            pieces = line.rstrip().split(ELLIPSIS)
            parts.append("[^\n]*".join(re.escape(p) for p in pieces) + "\n")
    return re.compile("".join(parts))


def output_matches(shown: list[str], actual: str) -> bool:
    """Does the output match the shown lines? A shown line `...` stands for any number of
    lines, and `...` within a line for any text on it; durations are normalised in both."""
    expected = [normalise(line) for line in shown]
    while expected and not expected[-1].strip():
        expected.pop()
    body = normalise(actual)
    body = body + "\n" if body else ""
    return _pattern(expected).fullmatch(body) is not None


def diff(shown: list[str], actual: str) -> str:
    return "\n".join(difflib.unified_diff(shown, normalise(actual).split("\n"), "shown",
                                          "actual", lineterm="", n=2))


# ----- the scratch directory ---------------------------------------------------------------

SHIM = "#!/bin/sh\nexec {command}\"$@\"\n"


def make_scratch(base: Path) -> tuple[Path, dict[str, str]]:
    """A working directory holding copies of the paths the pages name, and the environment
    the blocks run in: `linnet`, `python` and `python3` (and `.venv/bin/python`) run this
    checkout with the test's interpreter, on the CPU (the pages' transcripts are a CPU
    machine's: a GPU, where there is one, is hidden from torch and JAX), without the
    settings a user would not have (`TRITON_INTERPRET`, `LINNET_*` but the test cache).
    `linnet` and `python` run through a fork server (linnet/testing/fork_servers.py), which
    has the compiler imported already: `python -m ...` and `python -c ...` start there and
    act as in a fresh interpreter, and any other form (`python script.py`) starts one."""
    work = base / "work"
    shims = base / "bin"
    for name in COPIED:
        shutil.copytree(ROOT / name, work / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shims.mkdir(parents=True)
    (work / ".venv" / "bin").mkdir(parents=True)
    env = child_env(ROOT, drop=tuple(k for k in os.environ
                                     if k.startswith("LINNET_") and k != "LINNET_CACHE")
                    + ("TRITON_INTERPRET", "NO_COLOR", "FORCE_COLOR"),
                    PATH=f"{shims}{os.pathsep}{os.environ.get('PATH', '')}",
                    CUDA_VISIBLE_DEVICES="", JAX_PLATFORMS="cpu",
                    PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", COLUMNS="80")
    python = shlex.join(python_command(env))
    for path, command in ((shims / "linnet", f"{python} -m linnet "),
                          (shims / "python", f"{python} "), (shims / "python3", f"{python} "),
                          (work / ".venv" / "bin" / "python", f"{python} ")):
        path.write_text(SHIM.format(command=command))
        path.chmod(0o755)
    return work, env


def write_file(block: Block, work: Path) -> None:
    """A block that a later command reads: a `file NAME` marker names it (such a block is a
    file, not run itself); a `linnet` block lives at its module path (`module lib.act` ->
    `lib/act.linnet`)."""
    if block.marker and block.marker.kind == "file":
        path = work / block.marker.value
    else:
        module = MODULE.search(block.text)
        if not module:
            return
        path = work / Path(*module.group(1).split(".")).with_suffix(".linnet")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(block.text, encoding="utf-8")


def _run(argv: list[str], work: Path, env: dict[str, str]) -> tuple[int, str]:
    try:
        done = subprocess.run(argv, cwd=work, env=env, text=True, timeout=BLOCK_SECONDS,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
    except subprocess.TimeoutExpired as err:
        out = err.stdout if isinstance(err.stdout, str) else (err.stdout or b"").decode()
        return -1, f"{out}\n(timed out after {BLOCK_SECONDS} seconds)"
    return done.returncode, done.stdout


def run_block(block: Block, work: Path, env: dict[str, str]) -> list[str]:
    """Run one block in the scratch directory; the ways it fell short of the page."""
    if block.tag == "python":
        status, out = _run([*python_command(env), "-c", block.text], work, env)
        return [] if status == 0 else [f"exit status {status}:\n{out}"]
    if block.tag in SHELL_TAGS:
        status, out = _run(["bash", "-e", "-o", "pipefail", "-c", block.text], work, env)
        return [] if status == 0 else [f"exit status {status}:\n{out}"]
    return run_transcript(transcript(block.text), work, env)


def run_transcript(commands: list[Command], work: Path, env: dict[str, str]) -> list[str]:
    """The commands of a console block, in one bash session (so `cd` and `echo $?` work as
    they do at a prompt); each one's output must match what the page shows."""
    script = "".join(f"{c.text}\n__status=$?; printf '{STATUS}%d\\n' $__status; "
                     f"(exit $__status)\n" for c in commands)
    status, out = _run(["bash", "-o", "pipefail", "-c", script], work, env)
    parts = re.split(re.escape(STATUS) + r"(\d+)\n", out)
    outputs, statuses = parts[0::2], [int(s) for s in parts[1::2]]
    problems = [_judge(c, s, normalise(o, work))
                for c, s, o in zip(commands, statuses, outputs)]
    if len(statuses) < len(commands):
        c = commands[len(statuses)]
        problems.append(f"$ {c.text}\nthe session ended (status {status}) before it finished:"
                        f"\n{normalise(outputs[-1], work)}")
    return [p for p in problems if p]


def _judge(command: Command, status: int, out: str) -> str | None:
    """A console command's output must match the shown lines. It may fail (status 1 or 2)
    only where the page shows what it prints; an internal error (status 3) never passes."""
    shown_something = any(line.strip() and line.strip() != ELLIPSIS for line in command.shown)
    if status == 3 or "internal compiler error" in out or "Traceback" in out:
        return f"$ {command.text}\nexit status {status}:\n{out}"
    if status != 0 and not shown_something:
        return f"$ {command.text}\nexit status {status}, and the page shows no output:\n{out}"
    if not output_matches(command.shown, out):
        return f"$ {command.text}\nexit status {status}; output differs:\n" \
               f"{diff(command.shown, out)}"
    return None
