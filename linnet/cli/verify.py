"""`linnet verify`: kernel-versus-body checks on random sizes and inputs (see
`linnet/fuzz/verify.py`); its options are in `linnet/cli/options/verify.py`.

`main(argv)` here runs it alone (`python -m linnet.cli.verify FILE ...`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from ..errors import UsageError, suggest
from ..fuzz.harness import ProgramError, entries, kernel_ops, target_spec
from ..fuzz.verify import report_deaths, run_verify
from ..fuzz.verify_trials import DEFAULT_SECONDS, ChildTrials, InProcessTrials
from ..tuning.records import TuningFileError
from .arguments import bind_values, tuning_argument
from .devices import prepare_pallas, prepare_triton
from .guard import run_guarded
from .io import print_error, program_files
from .options.verify import add_verify
from .presence import presence
from .report import Reporter
from .std_option import run_with_std


def run_verify_command(args: argparse.Namespace) -> int:
    """Verify each file in turn; the status is the worst of theirs (a mistake on the command
    line stops at once)."""
    programs = program_files(args.files, allow_stdin=False)
    if args.tuning and not os.path.isfile(args.tuning):
        print_error("linnet verify", f"no such tuning file: {args.tuning}")
        return 2
    try:
        device = prepare_pallas() if args.target == "jax" else prepare_triton(args.device)
    except ValueError as err:
        print_error("linnet verify", err)
        return 2
    report, status = Reporter(args), 0
    trials = InProcessTrials() if args.in_process else \
        ChildTrials(args.seconds or DEFAULT_SECONDS)
    try:
        for program in programs:
            status = max(status, _verify_file(args, program.path, device, report, trials))
            if status == 2:
                return 2
    finally:
        trials.close()
    status = max(status, report_deaths(trials))
    report.finish(len(programs))
    return status


def _verify_file(args: argparse.Namespace, path: str, device: str, report, trials) -> int:
    try:
        block = _block_request(args, path)
        if block is not None:
            return run_verify(path, entry=args.entry, examples=args.examples, seed=args.seed,
                              numerics=args.numerics, device=device, grad=not args.no_grad,
                              max_dim=args.max_dim, target=args.target,
                              max_elements=args.max_elements, block=block,
                              tuning=tuning_argument(args), trials=trials)
        name = args.op or args.entry
        if name is not None:
            problem = _target_problem(args, path, name)
            if problem:
                print_error("linnet verify", problem)
                return 2
        return run_verify(path, op=args.op, entry=args.entry, examples=args.examples,
                          seed=args.seed, numerics=args.numerics, device=device,
                          grad=not args.no_grad, max_dim=args.max_dim, target=args.target,
                          max_elements=args.max_elements, tuning=tuning_argument(args),
                          trials=trials)
    except TuningFileError as err:
        print_error("linnet verify", err)
        return 1
    except ProgramError as err:
        report.add(err.diagnostics, err.sources)
        return 1
    except UsageError as err:
        print_error("linnet verify", err.command_line)
        return 2
    except KeyError:
        if args.root:
            print_error("linnet verify", f"no entry named `{args.entry}` in the block `{args.root}`")
        else:
            print_error("linnet verify", _unknown_target(args, path, args.entry))
        return 2


def _block_request(args: argparse.Namespace, path: str) -> dict | None:
    """The block entry to verify: with --root, or an --entry that names no module-level
    entry (the root block's, then); None for ops and module-level entries."""
    if args.op is not None:
        return None
    if args.root is None:
        if args.entry is None:
            return None
        try:
            if target_spec(path, args.entry).block is None:
                return None
        except KeyError:
            pass
    return {"root": args.root, "bind": bind_values(args.bind), "present": presence(args)}


def _target_problem(args: argparse.Namespace, path: str, name: str) -> str:
    """Why --op/--entry NAME cannot be verified in the file at path ("" when it can)."""
    try:
        spec = target_spec(path, name)
    except KeyError:
        return _unknown_target(args, path, name)
    if args.op and spec.kind != "op":
        return f"`{name}` is an entry; use --entry {name}"
    if args.entry and spec.kind != "entry":
        return f"`{name}` is an op; use --op {name}"
    if args.op and spec.kernel is None:
        return f"op `{name}` binds no kernel; nothing to verify"
    return ""


def _unknown_target(args: argparse.Namespace, path: str, name: str) -> str:
    """"no op named `softmx` in FILE; its ops with a kernel: softmax (did you mean
    `softmax`?)", as the generating commands answer an unknown --entry."""
    kind = "op" if args.op else "entry"
    names = kernel_ops(path) if args.op else entries(path)
    listed = ", ".join(names) or "none"
    what = "ops with a kernel" if args.op else "entries"
    return f"no {kind} named `{name}` in {path}; its {what}: {listed}{suggest(name, names)}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linnet")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_verify(commands, "verify").set_defaults(run=run_verify_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """`linnet verify ...` on its own, until `linnet/cli/main.py` registers the command:
    `main(["verify", FILE, ...])`; the leading "verify" may be left out."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "verify":
        argv = ["verify"] + argv
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return run_guarded(lambda: run_with_std(args), "verify")


if __name__ == "__main__":
    sys.exit(main())
