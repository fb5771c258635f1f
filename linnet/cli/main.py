"""The `linnet` command line.

Exit status: 0 success, 1 errors in the input, 2 a command-line mistake (also a file that
cannot be read or written, or a missing optional package), 3 an internal compiler error (one
line; the traceback with LINNET_DEBUG=1), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..version import __version__
from .compile import add_commands
from .fuzz import add_fuzz_command
from .guard import interrupted, run_guarded
from .inspect import add_inspect_command
from .io import print_error, program_files
from .report import Reporter, add_report_options, plural
from .std_option import add_std_option, run_with_std
from .tune import add_tune_command
from .verify import add_verify_command

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
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "check", help="parse and check programs", description=CHECK_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("files", nargs="+", metavar="FILE",
                       help="a .linnet source file, a directory of them, or - (stdin)")
    add_report_options(check, json_help="print diagnostics as a JSON list on standard output "
                                        "(code, severity, message, file, line, column, end)")
    add_std_option(check)
    check.set_defaults(run=run_check)
    add_commands(commands)
    add_verify_command(commands)
    add_tune_command(commands)
    add_fuzz_command(commands)
    add_inspect_command(commands)
    return parser


def run_check(args: argparse.Namespace) -> int:
    from ..check.frontend import check_program
    programs = program_files(args.files)
    report = Reporter(args, json_stream=sys.stdout)
    for program in programs:
        result = check_program(program.path, program.text)
        report.add(result.diagnostics, result.sources)
    report.finish(len(programs))
    if not report.json and not report.errors:
        print(f"ok: {plural(len(programs), 'file')} checked")
    return 1 if report.errors else 0


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
