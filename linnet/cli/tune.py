"""`linnet tune`: try an op's kernel at other tiles and launch hints; record the fastest that
agrees with the op's body (see `linnet/tune/`).

Register it with `add_tune_command(commands)` beside the other commands of `linnet/cli/main.py`.
"""

from __future__ import annotations

import argparse
import json
import sys

from .io import print_error
from .std_option import add_std_option
from ..ir.numerics import DEFAULT as DEFAULT_NUMERICS, KERNEL_MODES
from .verify import prepare_triton

TUNE_HELP = """\
Tune the kernel of op NAME of FILE for one binding of its generics: try its
tile generics (those none of its parameter or result types mentions, which
the header binds to literals or expressions of the op's sizes) and its
launch hints over a declared candidate set, check each candidate against the
op's body on random inputs of the bound shapes, time those that agree, and
record the fastest in the tuning file, which compiling then reads.

Candidates: --try NAME=v,... per tunable generic (default: the header's value,
half and double), --warps (default 4,8) and --stages (default 2,3,4), plus the
kernel's own hints; the header's choice is always tried, as the baseline.
Combinations that the compiler would refuse at the bound sizes (the kernel's
where clause, tile sizes that are not powers of two) are left out and listed;
the rest are tried nearest the header's choice first, at most --max-candidates.

Kernels run with Triton on the GPU when CUDA is present, timed warm by
triton.testing.do_bench; else in the Triton interpreter on the CPU
(TRITON_INTERPRET=1 is set for this process), timed by the wall clock: that
checks the tool and the candidates, not which tiles are fast.

The tuning file: --tuning PATH, else $LINNET_TUNING, else linnet.tuning.json
beside FILE. Records are keyed by device name, op (module path and name),
binding and numerics; rerunning replaces the record.

examples:
  linnet tune examples/matmul.linnet --op matmul --bind M=4096 --bind N=4096 \\
      --bind K=4096 --numerics fast
  linnet tune examples/matmul.linnet --op matmul_bf16 --bind M=16 --bind N=8192 \\
      --bind K=8192 --try BM=16,32,64 --try BN=64,128,256 --warps 4 --stages 3,4
  linnet tune examples/matmul.linnet --op matmul --bind M=64 --bind N=64 \\
      --bind K=64 --list

exit status: 0 a winner was recorded (or --list), 1 no candidate agreed with
the body (or errors in the program, or a tuning file that cannot be read),
2 a command-line mistake."""


def add_tune_command(commands) -> None:
    """Add `tune` to the subparsers of `linnet`'s parser."""
    p = commands.add_parser("tune", help="tune an op's kernel tiles and launch hints",
                            description=TUNE_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE")
    p.add_argument("--op", required=True, metavar="NAME", help="the op whose kernel to tune")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=VALUE",
                   help="a value for each generic of the op (the sizes to tune for)")
    p.add_argument("--try", dest="tries", action="append", default=[], metavar="NAME=V,...",
                   help="values to try for a tunable generic of the kernel; repeat for each")
    p.add_argument("--warps", type=_integers, metavar="W,...",
                   help="num_warps values to try (default 4,8 and the kernel's)")
    p.add_argument("--stages", type=_integers, metavar="S,...",
                   help="num_stages values to try (default 2,3,4 and the kernel's)")
    p.add_argument("--numerics", choices=KERNEL_MODES, default=DEFAULT_NUMERICS,
                   help="the numerics to tune under (fast: TF32 tile products)")
    p.add_argument("--max-candidates", type=int, default=64, metavar="N",
                   help="try at most N candidates, nearest the header's choice first "
                        "(default 64)")
    p.add_argument("--checks", type=int, default=2, metavar="N",
                   help="random inputs each candidate is checked on (default 2)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed for the inputs")
    p.add_argument("--device", choices=("cpu", "cuda"),
                   help="where inputs live (default cuda when available)")
    p.add_argument("--tuning", metavar="PATH", help="the tuning file to update")
    p.add_argument("--list", action="store_true",
                   help="print the candidates and those left out, and run nothing")
    p.add_argument("--no-record", action="store_true",
                   help="tune and print, but write no tuning file")
    p.add_argument("--json", action="store_true",
                   help="print the run as JSON (diagnostics too, on standard error)")
    from .report import add_report_options
    add_report_options(p, json_help=False)
    add_std_option(p)
    p.set_defaults(run=run_tune_command)


def _integers(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: write integers separated by commas") \
            from None
    if not values:
        raise argparse.ArgumentTypeError("give at least one value")
    return values


def _tries(items: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for item in items:
        name, eq, values = item.partition("=")
        if not eq or not name.strip():
            raise ValueError(f"--try {item}: write NAME=V,V,..., such as BM=64,128")
        try:
            out.setdefault(name.strip(), []).extend(_integers(values))
        except argparse.ArgumentTypeError as err:
            raise ValueError(f"--try {item}: {err}") from None
    return out


def _fail(message: str, status: int) -> int:
    print_error("linnet tune", message)
    return status


def run_tune_command(args: argparse.Namespace) -> int:
    from .compile import bind_values
    from .io import read_program
    from ..passes.front.bind_generics import UsageError
    from ..fuzz.harness import ProgramError
    from ..tune.records import TuningFileError
    from ..tune.tuner import TuneError
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
        from .report import Reporter
        report = Reporter(args)
        report.add(err.diagnostics, err.sources)
        report.finish(1)
        return 1


def _run(args: argparse.Namespace, bind: dict, tries: dict, device: str | None) -> int:
    from ..tune.report import format_result, format_space, result_json, space_json
    from ..tune.tuner import plan, tune
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
