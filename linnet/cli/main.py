"""The `linnet` command line: the top-level parser, built from the command table
(`linnet/cli/commands.py`), and the boundary every command runs inside (`guard.py`).

Exit status: 0 success, 1 errors in the input, 2 a command-line mistake (also a file that
cannot be read or written, or a missing optional package), 3 an internal compiler error (one
line; the traceback with LINNET_DEBUG=1), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..version import __version__
from .commands import add_commands
from .guard import interrupted, run_guarded
from .io import print_error
from .std_option import run_with_std

DESCRIPTION = """\
Linnet compiles a typed tensor language: op bodies in index notation, and tile
kernels that run through Triton (from PyTorch) and Pallas (from JAX).

commands:
  check FILE...    parse and check programs; print diagnostics
  torch FILE       generate a PyTorch module for an entry
  jax FILE         generate a JAX module for an entry (kernels through Pallas)
  onnx FILE        export an entry as an ONNX model (op bodies)
  stablehlo FILE   export an entry as StableHLO MLIR text (op bodies)
  compile FILE     run the pipeline with dumps, timings and stops (--list-passes)
  verify FILE      run each op's kernel against its body on random inputs
  tune FILE        try an op's kernel tiles and launch hints; record the fastest
  fuzz             random programs through every backend against an oracle
  inspect FILE     show a block program's parameter manifest (--parameters)

Run `linnet COMMAND --help` for a command's options and examples."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose one-line errors (`invalid choice: ...`) quote what was
    typed with its control characters escaped, as every other one-line error does."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        print_error(f"{self.prog}: error", message)
        self.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="linnet", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"linnet {__version__}")
    add_commands(parser.add_subparsers(dest="command", metavar="COMMAND"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help(sys.stderr)
            return 2
        return run_guarded(lambda: run_with_std(args), args.command)
    except KeyboardInterrupt:
        return interrupted()


if __name__ == "__main__":
    sys.exit(main())
