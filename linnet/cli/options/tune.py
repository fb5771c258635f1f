"""`linnet tune FILE --op NAME`: its help and options (run by `linnet/cli/tune.py`)."""

from __future__ import annotations

import argparse

from ...ir.numerics import DEFAULT as DEFAULT_NUMERICS, KERNEL_MODES
from ..report import add_report_options
from ..std_option import add_std_option

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


def add_tune(commands, name: str) -> argparse.ArgumentParser:
    """Add `tune` to the subparsers of `linnet`'s parser."""
    p = commands.add_parser(name, help="tune an op's kernel tiles and launch hints",
                            description=TUNE_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE")
    p.add_argument("--op", required=True, metavar="NAME", help="the op whose kernel to tune")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=VALUE",
                   help="a value for each generic of the op (the sizes to tune for)")
    p.add_argument("--try", dest="tries", action="append", default=[], metavar="NAME=V,...",
                   help="values to try for a tunable generic of the kernel; repeat for each")
    p.add_argument("--warps", type=integers, metavar="W,...",
                   help="num_warps values to try (default 4,8 and the kernel's)")
    p.add_argument("--stages", type=integers, metavar="S,...",
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
    add_report_options(p, json_help=False)
    add_std_option(p)
    return p


def integers(text: str) -> list[int]:
    """argparse type of `--warps`, `--stages` (and the values of `--try`): integers
    separated by commas, at least one."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: write integers separated by commas") \
            from None
    if not values:
        raise argparse.ArgumentTypeError("give at least one value")
    return values
