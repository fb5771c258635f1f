"""Where the command line's programs come from and where its results go.

Every mistake here is the user's, reported in one line with exit status 2 (`CliError`),
never as an internal compiler error: a missing file, a directory where one file is
expected, an output whose directory is missing or not writable, an output that would
overwrite the program it was made from, a missing optional package. `-` stands for
standard input as FILE and for standard output as `-o`, as in most Unix tools.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import visible

STDIO = "-"
STDIN_NAME = "<stdin>"
"""The file name diagnostics give a program read from standard input. Its `use` lines find
modules relative to the current directory."""

EXTRAS = {"torch": "torch", "triton": "torch", "jax": "jax", "jaxlib": "jax",
          "onnx": "onnx", "onnxruntime": "onnx", "egglog": "rules", "ml_dtypes": "jax"}
"""The optional package (`pip install 'linnet[EXTRA]'`) that provides each import."""


def print_error(prefix: str, message: object) -> None:
    """One line on standard error, `PREFIX: MESSAGE`, its control characters escaped as
    diagnostics escape them (`\\x1b`, `\\x0a`): a file name, a `--bind` value or a key of a
    tuning file can hold any character, and none may move the cursor, recolour the
    terminal or start a second line that looks like another message. An empty prefix
    prints the message alone (a continuation line of a list)."""
    print(visible(f"{prefix}: {message}" if prefix else str(message)), file=sys.stderr)


class CliError(Exception):
    """A mistake on the command line or with the files it names: one line, exit status 2."""

    status = 2


@dataclass(frozen=True)
class ProgramInput:
    """A program to compile: its path (`<stdin>` for `-`) and, from stdin, its text."""

    path: str
    text: str | None = None

    @property
    def from_stdin(self) -> bool:
        return self.text is not None


def read_program(arg: str) -> ProgramInput:
    """The one program a generating command compiles: a file, or `-` for standard input."""
    if arg == STDIO:
        return ProgramInput(STDIN_NAME, _read_stdin())
    path = Path(arg)
    if path.is_dir():
        raise CliError(f"{arg} is a directory; give one .linnet file "
                       f"(`linnet check {arg}` checks every file under it)")
    _require_readable(arg)
    return ProgramInput(arg)


def program_files(args: list[str], allow_stdin: bool = True) -> list[ProgramInput]:
    """The programs that `check` and `verify` take: files, directories (every `.linnet`
    file under them, in sorted order, each a program of its own) and `-` (standard input,
    once)."""
    out: list[ProgramInput] = []
    for arg in args:
        if arg == STDIO:
            if not allow_stdin:
                raise CliError("reads programs from files, not standard input (-)")
            if any(p.from_stdin for p in out):
                raise CliError("standard input (-) given twice")
            out.append(ProgramInput(STDIN_NAME, _read_stdin()))
        elif Path(arg).is_dir():
            found = sorted(str(p) for p in Path(arg).rglob("*.linnet") if p.is_file())
            if not found:
                raise CliError(f"no .linnet files under {arg}")
            out.extend(ProgramInput(p) for p in found)
        else:
            _require_readable(arg)
            out.append(ProgramInput(arg))
    return out


def _require_readable(arg: str) -> None:
    if not os.path.exists(arg):
        raise CliError(f"no such file: {arg}")
    if not os.path.isfile(arg):
        raise CliError(f"{arg} is not a regular file")
    if not os.access(arg, os.R_OK):
        raise CliError(f"cannot read {arg}: permission denied")


def _read_stdin() -> str:
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data


def check_output(output: str | None, program: ProgramInput) -> None:
    """Refuse, before any work, an `-o` that cannot be written or that is the input."""
    if output is None or output == STDIO:
        return
    path = Path(output)
    if path.is_dir():
        raise CliError(f"-o {output}: is a directory; name a file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise CliError(f"-o {output}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists()
                                                    and not os.access(path, os.W_OK)):
        raise CliError(f"-o {output}: cannot write there (permission denied)")
    if not program.from_stdin and path.exists() and _same_file(path, Path(program.path)):
        raise CliError(f"-o {output}: is the input file; it would be overwritten")


def prepare_dir(directory: str, option: str) -> Path:
    """A directory the command writes files into (`--dump-dir`): made if missing, refused
    (exit 2) if it cannot be made or written."""
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise CliError(f"{option} {directory}: is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CliError(f"{option} {directory}: cannot make it: {err.strerror or err}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise CliError(f"{option} {directory}: cannot write there (permission denied)")
    return path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def write_text(text: str, output: str | None) -> None:
    """Text to `-o OUT`, or to standard output (no `-o`, or `-o -`), ending in a newline."""
    text = text if text.endswith("\n") else text + "\n"
    if output is None or output == STDIO:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    _write(Path(output), text.encode("utf-8"), output)


def write_bytes(data: bytes, output: str) -> None:
    """Bytes (a binary model) to `-o OUT`, or to standard output for `-o -`."""
    if output == STDIO:
        sys.stdout.flush()
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:
            raise CliError("-o -: standard output does not take binary data here")
        stream.write(data)
        stream.flush()
        return
    _write(Path(output), data, output)


def _write(path: Path, data: bytes, shown: str) -> None:
    try:
        path.write_bytes(data)
    except OSError as err:
        raise CliError(f"-o {shown}: cannot write: {err.strerror or err}") from None


def missing_extra(err: ModuleNotFoundError) -> str | None:
    """The message for an optional package that is not installed, or None when the missing
    module is not one (a missing module of Linnet itself is a bug)."""
    top = (err.name or "").partition(".")[0]
    extra = EXTRAS.get(top)
    if extra is None:
        return None
    return (f"this needs the `{top}` package, which is not installed; "
            f"install it with: pip install 'linnet[{extra}]'")


def positive_int(text: str) -> int:
    """argparse type of a count such as --jobs or --count: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value


def duration(text: str) -> float:
    """argparse type of a time such as `linnet fuzz --time` or `--seconds`: seconds, or a
    number with the unit s, m or h (30, 90s, 10m, 1h); positive."""
    units = {"s": 1, "m": 60, "h": 3600}
    scale = units.get(text[-1:], 1)
    try:
        value = float(text[:-1] if text[-1:] in units else text) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (30, 90s, 10m, 1h)") \
            from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not positive")
    return value
