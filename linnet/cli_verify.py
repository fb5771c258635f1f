"""`linnet verify`: kernel-versus-body checks on random sizes and inputs (see `linnet/verify.py`).

Register it with `add_verify_command(commands)` beside the other commands of `linnet/cli.py`;
`main(argv)` here runs it alone (`python -m linnet.cli_verify FILE ...`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

VERIFY_HELP = """\
Check each op's kernel against the op's body, which is its definition. For every op
of FILE that binds a kernel (or only --op NAME, or the entry --entry NAME), draw
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

examples:
  linnet verify examples/softmax.linnet
  linnet verify examples/matmul.linnet --op matmul --examples 20 --seed 3
  linnet verify model.linnet --entry run --numerics fast
  linnet verify examples/softmax.linnet --target jax

exit status: 0 every kernel agrees with its body, 1 a disagreement (or errors in
the program), 2 a command-line mistake."""


def add_verify_command(commands) -> None:
    """Add `verify` to the subparsers of `linnet`'s parser."""
    p = commands.add_parser("verify", help="check kernels against op bodies on random inputs",
                            description=VERIFY_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--entry", metavar="E", help="verify this entry (its generics drawn "
                                                    "from its where clause)")
    which.add_argument("--op", metavar="NAME", help="verify only this op's kernel")
    p.add_argument("--target", choices=("torch", "jax"), default="torch",
                   help="the backend whose kernels run (torch: Triton; jax: Pallas)")
    p.add_argument("--examples", type=_positive, default=10, metavar="N",
                   help="sizes to try per op (default 10)")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="seed for sizes and inputs (default 0)")
    p.add_argument("--numerics", choices=("equivalent", "fast"), default="equivalent",
                   help="the kernel's numerics, against exact (default equivalent)")
    p.add_argument("--max-dim", type=_positive, metavar="N",
                   help="the largest size drawn for a dim (default 130 on the CPU, "
                        "2048 on a GPU)")
    p.add_argument("--max-elements", type=_positive, metavar="N",
                   help="the most elements of any input (default 2**18 on the CPU, 2**26 on "
                        "a GPU)")
    p.add_argument("--device", choices=("cpu", "cuda"),
                   help="where inputs live (default cuda when available)")
    p.add_argument("--no-grad", action="store_true", help="compare the forward pass only")
    p.set_defaults(run=run_verify_command)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive")
    return value


def prepare_triton(device: str | None) -> str:
    """Choose the device; with no CUDA device, set TRITON_INTERPRET=1 before Triton imports."""
    import torch  # importing torch does not import triton
    cuda = torch.cuda.is_available()
    if device == "cuda" and not cuda:
        raise ValueError("--device cuda: no CUDA device is available")
    device = device or ("cuda" if cuda else "cpu")
    if device == "cpu" and "triton" not in sys.modules:
        os.environ.setdefault("TRITON_INTERPRET", "1")
    return device


def prepare_pallas() -> str:
    """Without a GPU backend for JAX, run Pallas kernels in its interpreter."""
    import jax
    if jax.default_backend() != "gpu":
        os.environ["LINNET_PALLAS_INTERPRET"] = "1"
        return "cpu"
    return "cuda"


def run_verify_command(args: argparse.Namespace) -> int:
    from .diagnostics import render
    from .testing.harness import ProgramError, target_spec
    from .verify import run_verify
    if not os.path.isfile(args.file):
        print(f"linnet verify: no such file: {args.file}", file=sys.stderr)
        return 2
    try:
        device = prepare_pallas() if args.target == "jax" else prepare_triton(args.device)
    except ValueError as err:
        print(f"linnet verify: {err}", file=sys.stderr)
        return 2
    try:
        name = args.op or args.entry
        if name is not None:
            try:
                spec = target_spec(args.file, name)
            except KeyError:
                kind = "op" if args.op else "entry"
                print(f"linnet verify: no {kind} named `{name}` in {args.file}", file=sys.stderr)
                return 2
            if args.op and spec.kind != "op":
                print(f"linnet verify: `{name}` is an entry; use --entry {name}",
                      file=sys.stderr)
                return 2
            if args.entry and spec.kind != "entry":
                print(f"linnet verify: `{name}` is an op; use --op {name}", file=sys.stderr)
                return 2
            if args.op and spec.kernel is None:
                print(f"linnet verify: op `{name}` binds no kernel; nothing to verify",
                      file=sys.stderr)
                return 2
        return run_verify(args.file, op=args.op, entry=args.entry, examples=args.examples,
                          seed=args.seed, numerics=args.numerics, device=device,
                          grad=not args.no_grad, max_dim=args.max_dim, target=args.target,
                          max_elements=args.max_elements)
    except ProgramError as err:
        for d in err.diagnostics:
            print(render(d, err.sources) + "\n", file=sys.stderr)
        errors = sum(d.severity == "error" for d in err.diagnostics)
        print(f"{errors} error{'s' if errors != 1 else ''} in {args.file}", file=sys.stderr)
        return 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linnet")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_verify_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """`linnet verify ...` on its own, until `linnet/cli.py` registers the command:
    `main(["verify", FILE, ...])`; the leading "verify" may be left out."""
    from .cli import run_guarded
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "verify":
        argv = ["verify"] + argv
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return run_guarded(lambda: args.run(args))


if __name__ == "__main__":
    sys.exit(main())
