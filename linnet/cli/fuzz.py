"""`linnet fuzz`: random programs through every backend against the oracle (see
`linnet/fuzz/`). Its options are in `linnet/cli/options/fuzz.py`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from ..fuzz import fuzz, load_rules
from ..fuzz.isolate import StartFailed
from ..fuzz.negative import check_negative
from .io import print_error


class _Line:
    """The one-line progress display on stderr (rewritten in place on a terminal)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.tty, self.width = stream, stream.isatty(), 0

    def __call__(self, progress) -> None:
        line = "fuzz: " + progress.line()
        if self.tty:
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        elif progress.programs % 25 == 0:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.width:
            self.stream.write("\n")
            self.stream.flush()


def run_fuzz_command(args: argparse.Namespace) -> int:
    if args.negative:
        return _run_negative(args)
    if args.in_process and args.jobs > 1:
        print("linnet fuzz: --in-process runs one program at a time: leave out --jobs",
              file=sys.stderr)
        return 2
    if args.rules:
        try:
            load_rules(args.rules)
        except (ImportError, ValueError) as err:
            print_error("linnet fuzz", f"--rules {args.rules}: {err}")
            return 2
    line = _Line(sys.stderr)
    try:
        report = fuzz(seed=args.seed, count=args.count, time=args.time, targets=args.targets,
                      kernels=args.kernels, grad=args.grad, block_grad=args.block_grad,
                      jobs=args.jobs, out=args.out,
                      rules=args.rules, progress=line, seconds=args.seconds,
                      isolate=not args.in_process)
    except StartFailed as err:
        print_error("linnet fuzz", err)
        return 2
    finally:
        line.close()
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        print(report.summary())
    return 1 if report.failed else 0


def _run_negative(args: argparse.Namespace) -> int:
    """`--negative N`: the negative corpus through `linnet check`; 1 when check accepted
    one (or a finding of another kind), else 0."""
    report = check_negative(args.seed, args.negative, args.out)
    print(json.dumps(report.to_json(), indent=1) if args.json else report.summary())
    return 1 if report.failed else 0
