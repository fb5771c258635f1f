"""`linnet verify FILE...`: its help and options (run by `linnet/cli/verify.py`)."""

from __future__ import annotations

import argparse

from ...ir.numerics import DEFAULT as DEFAULT_NUMERICS, KERNEL_MODES
from ..io import duration, positive_int
from ..report import add_report_options
from ..std_option import add_std_option
from .presence import add_presence_options

VERIFY_HELP = """\
Check each op's kernel against the op's body, which is its definition. For every op
of each FILE (a directory: every .linnet file under it) that binds a kernel (or only --op NAME, or the entry --entry NAME), draw
sizes that satisfy both the op's and the kernel's `where` clauses (all ones first,
then ragged edges around the tile sizes, then random sizes up to --max-dim), run
random inputs through the op compiled with --numerics exact (the body) and with
--numerics equivalent (the kernel), forward and gradient, and print a table per
op: the sizes tried, the worst absolute and relative errors, and the verdict. On
a disagreement the sizes are shrunk to the smallest that still disagree.

Kernels run with Triton on the GPU when CUDA is present, else in the Triton
interpreter on the CPU (TRITON_INTERPRET=1 is set for this process). With
--target jax they run through Pallas: on a GPU backend, else in Pallas's
interpreter (LINNET_PALLAS_INTERPRET=1 is set for this process).

The sizes run in a child process, one for the whole command: a kernel that
kills it (a store out of bounds corrupting the heap: SIGABRT; a segfault) or
runs past --seconds (it is killed) gets the verdict `crashed: SIGABRT` (or
`crashed: timed out after 600 s`) at its sizes, which are shrunk like a
disagreement's, and a new child runs the rest. --in-process runs them in the
command's own process (for a debugger: a native crash then ends the command).

examples:
  linnet verify examples/softmax.linnet
  linnet verify examples/matmul.linnet --op matmul --examples 20 --seed 3
  linnet verify model.linnet --entry run --numerics fast
  linnet verify examples/softmax.linnet --target jax
  linnet verify examples/softmax.linnet examples/layer_norm.linnet
  linnet verify examples/
  linnet verify examples/block_model.linnet --root Model --bind L=2
  linnet verify examples/optional_model.linnet --entry main --present head.up \
      --present head.down

A block entry (--root BLOCK: each of its entries, or the one --entry names) takes
random weights for every param, buffer and state of the block's tree as inputs after
its own; the root's generics take --bind values, else their defaults, and the entry's
are drawn. --present/--weights say which optional members are there.

exit status: 0 every kernel agrees with its body, 1 a disagreement or a crash (or
errors in the program), 2 a command-line mistake (also: torch, or jax for --target jax, not
installed), 130 interrupted."""


def add_verify(commands, name: str) -> argparse.ArgumentParser:
    """Add `verify` to the subparsers of `linnet`'s parser."""
    p = commands.add_parser(name, help="check kernels against op bodies on random inputs",
                            description=VERIFY_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="a .linnet file or a directory of them; several may be given")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--entry", metavar="E", help="verify this entry (its generics drawn "
                                                    "from its where clause)")
    which.add_argument("--op", metavar="NAME", help="verify only this op's kernel")
    p.add_argument("--root", metavar="BLOCK", help="verify the entries of this block (or "
                   "the one --entry names), its parameters as random inputs")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=VALUE",
                   help="a value for a generic of the root block (default: its default)")
    add_presence_options(p)
    p.add_argument("--target", choices=("torch", "jax"), default="torch",
                   help="the backend whose kernels run (torch: Triton; jax: Pallas)")
    p.add_argument("--examples", type=positive_int, default=10, metavar="N",
                   help="sizes to try per op (default 10)")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="seed for sizes and inputs (default 0)")
    p.add_argument("--numerics", choices=KERNEL_MODES, default=DEFAULT_NUMERICS,
                   help="the kernel's numerics, against exact (default equivalent)")
    p.add_argument("--max-dim", type=positive_int, metavar="N",
                   help="the largest size drawn for a dim (default 130 on the CPU, "
                        "2048 on a GPU)")
    p.add_argument("--max-elements", type=positive_int, metavar="N",
                   help="the most elements of any input (default 2**18 on the CPU, 2**26 on "
                        "a GPU)")
    p.add_argument("--device", choices=("cpu", "cuda"),
                   help="where inputs live (default cuda when available)")
    p.add_argument("--no-grad", action="store_true", help="compare the forward pass only")
    p.add_argument("--tuning", metavar="PATH",
                   help="kernel choices recorded by `linnet tune` (default: $LINNET_TUNING, "
                        "else linnet.tuning.json beside FILE if there is one)")
    p.add_argument("--no-tuning", action="store_true",
                   help="use the kernel choices of the op headers only")
    p.add_argument("--seconds", type=duration, metavar="T",
                   help="time limit of each size, past which its process is killed and the "
                        "size is a crash (default 600; 90s, 10m)")
    p.add_argument("--in-process", action="store_true",
                   help="run the sizes in this process, not in a child (for a debugger: a "
                        "native crash then ends the command)")
    add_report_options(p)
    add_std_option(p)
    return p
