"""`linnet check FILE...`: its help and options (run by `linnet/cli/check.py`)."""

from __future__ import annotations

import argparse

from ..report import add_report_options
from ..std_option import add_std_option

CHECK_HELP = """\
Parse and type-check each FILE (and the modules it `use`s), printing every
diagnostic with its code, the source line and a caret. A directory stands for
every .linnet file under it; `-` reads a program from standard input.

examples:
  linnet check examples/softmax.linnet
  linnet check examples/                # every .linnet file under it
  linnet check --json model.linnet      # machine-readable, for editors and tools
  cat model.linnet | linnet check -

exit status: 0 no errors, 1 errors in the input, 2 a command-line mistake."""


def add_check(commands, name: str) -> argparse.ArgumentParser:
    """Add `check` to the subparsers of `linnet`'s parser."""
    p = commands.add_parser(name, help="parse and check programs", description=CHECK_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="a .linnet source file, a directory of them, or - (stdin)")
    add_report_options(p, json_help="print diagnostics as a JSON list on standard output "
                                    "(code, severity, message, file, line, column, end)")
    add_std_option(p)
    return p
