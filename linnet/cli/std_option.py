"""`--std DIR`: the standard library a command compiles against.

Every command that compiles a program takes it. The directory replaces the library
shipped with linnet (and $LINNET_STD) while the command runs: `use std.a.b` then loads
`DIR/a/b.linnet`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..syntax.module_search import STD_ENV, std_override

STD_HELP = (f"the standard library's directory: `use std.a.b` loads DIR/a/b.linnet (default: "
            f"${STD_ENV} where set, else the library shipped with linnet)")


def add_std_option(p: argparse.ArgumentParser) -> None:
    """Add `--std DIR` to a command's parser."""
    p.add_argument("--std", type=_directory, metavar="DIR", help=STD_HELP)


def _directory(text: str) -> str:
    """A directory that exists: a mistyped one is a command-line mistake (exit 2), not a
    missing module later."""
    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"not a directory: {text!r}")
    return text


def run_with_std(args: argparse.Namespace) -> int:
    """Run the parsed command with its `--std` directory (if any) in force (`args.run`: a
    row of the command table, `linnet/cli/commands.py`, which imports the command's module
    now)."""
    with std_override(getattr(args, "std", None)):
        return args.run(args)
