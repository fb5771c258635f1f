"""`linnet tune`: try an op's kernel at other tiles and launch hints; record the fastest that
agrees with the op's body (see `linnet/tune/`). Its options are in
`linnet/cli/options/tune.py`.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import UsageError
from ..fuzz.harness import ProgramError
from ..tuning.records import TuningFileError
from ..tune.report import format_result, format_space, result_json, space_json
from ..tune.tuner import TuneError, plan, tune
from .arguments import bind_values
from .devices import prepare_triton
from .io import print_error, read_program
from .options.tune import integers
from .report import Reporter


def _tries(items: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for item in items:
        name, eq, values = item.partition("=")
        if not eq or not name.strip():
            raise ValueError(f"--try {item}: write NAME=V,V,..., such as BM=64,128")
        try:
            out.setdefault(name.strip(), []).extend(integers(values))
        except argparse.ArgumentTypeError as err:
            raise ValueError(f"--try {item}: {err}") from None
    return out


def _fail(message: str, status: int) -> int:
    print_error("linnet tune", message)
    return status


def run_tune_command(args: argparse.Namespace) -> int:
    if args.file == "-":
        return _fail("FILE must be a file, not standard input (its tuning file is beside it)", 2)
    read_program(args.file)  # a missing file, or a directory, is a command-line mistake
    if args.max_candidates < 1 or args.checks < 1:
        return _fail("--max-candidates and --checks take positive integers", 2)
    try:
        bind, tries = bind_values(args.bind), _tries(args.tries)
        device = None if args.list else prepare_triton(args.device)
    except (UsageError, ValueError) as err:
        return _fail(str(err), 2)
    try:
        return _run(args, bind, tries, device)
    except TuneError as err:
        return _fail(str(err), 2)
    except TuningFileError as err:
        return _fail(str(err), 1)
    except ProgramError as err:
        report = Reporter(args)
        report.add(err.diagnostics, err.sources)
        report.finish(1)
        return 1


def _run(args: argparse.Namespace, bind: dict, tries: dict, device: str | None) -> int:
    options = dict(candidates=tries, warps=args.warps, stages=args.stages,
                   numerics=args.numerics, max_candidates=args.max_candidates)
    if args.list:
        space = plan(args.file, args.op, bind, **options)
        print(json.dumps(space_json(space, args.numerics), indent=2) if args.json
              else format_space(space, args.numerics))
        return 0

    def progress(k: int, n: int, trial) -> None:
        time = f"{trial.time_ms:.4g} ms" if trial.time_ms is not None else "-"
        verdict = "ok" if trial.ok else (trial.problem or "failed")
        print(f"[{k}/{n}] {trial.candidate.describe()}: {time}, {verdict}", file=sys.stderr)

    result = tune(args.file, args.op, bind, tuning=args.tuning, device=device,
                  checks=args.checks, seed=args.seed, record=not args.no_record,
                  progress=progress, **options)
    print(json.dumps(result_json(result), indent=2) if args.json else format_result(result))
    return 0 if result.ok else 1
