"""The `linnet` command line.

Exit status: 0 success, 1 errors in the input, 2 a command-line mistake,
3 an internal compiler error (one line; the traceback with LINNET_DEBUG=1).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Callable, Sequence

from . import __version__
from .diagnostics import render, to_json
from .cli_compile import add_commands
from .cli_fuzz import add_fuzz_command
from .cli_tune import add_tune_command
from .cli_verify import add_verify_command
from .frontend import check_program

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

Run `linnet COMMAND --help` for a command's options and examples."""

CHECK_HELP = """\
Parse and type-check each FILE (and the modules it `use`s), printing every
diagnostic with its code, the source line and a caret.

examples:
  linnet check examples/softmax.linnet
  linnet check --json model.linnet      # machine-readable, for editors and tools

exit status: 0 no errors, 1 errors in the input, 2 a command-line mistake."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="linnet", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"linnet {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "check", help="parse and check programs", description=CHECK_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("files", nargs="+", metavar="FILE", help="a .linnet source file")
    check.add_argument("--json", action="store_true",
                       help="print diagnostics as a JSON list (code, severity, message, "
                            "file, line, column, end)")
    check.set_defaults(run=run_check)
    add_commands(commands)
    add_verify_command(commands)
    add_tune_command(commands)
    add_fuzz_command(commands)
    return parser


def run_check(args: argparse.Namespace) -> int:
    all_diagnostics, sources = [], {}
    missing = [path for path in args.files if not os.path.isfile(path)]
    if missing:
        print(f"linnet check: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    for path in args.files:
        result = check_program(path)
        all_diagnostics.extend(result.diagnostics)
        sources.update(result.sources)
    if args.json:
        print(to_json(all_diagnostics, sources))
    else:
        for diagnostic in all_diagnostics:
            print(render(diagnostic, sources) + "\n", file=sys.stderr)
        errors = sum(d.severity == "error" for d in all_diagnostics)
        if errors:
            print(f"{errors} error{'s' if errors != 1 else ''} in {len(args.files)} "
                  f"file{'s' if len(args.files) != 1 else ''}", file=sys.stderr)
        else:
            print(f"ok: {len(args.files)} file{'s' if len(args.files) != 1 else ''} checked")
    return 1 if any(d.severity == "error" for d in all_diagnostics) else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return 2
    return run_guarded(lambda: args.run(args))


def run_guarded(job: Callable[[], int]) -> int:
    """Run a command; report a crash of the compiler itself in one line (exit 3)."""
    try:
        return job()
    except BrokenPipeError:  # the reader went away (`linnet ... | head`): not our error
        sys.stderr.close()
        return 0
    except Exception as err:  # noqa: BLE001 - the boundary of the program
        if os.environ.get("LINNET_DEBUG") == "1":
            traceback.print_exc()
        print(f"linnet: internal compiler error: {type(err).__name__}: {err}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
