"""`linnet verify`: kernel-versus-body checks on random sizes and inputs (see `linnet/fuzz/verify.py`).

Register it with `add_verify_command(commands)` beside the other commands of `linnet/cli/main.py`;
`main(argv)` here runs it alone (`python -m linnet.cli.verify FILE ...`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from .compile import tuning_argument
from .guard import run_guarded
from .io import duration, positive_int, print_error
from .presence import add_presence_options, presence
from .std_option import add_std_option, run_with_std
from ..ir.numerics import DEFAULT as DEFAULT_NUMERICS, KERNEL_MODES

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


def add_verify_command(commands) -> None:
    """Add `verify` to the subparsers of `linnet`'s parser."""
    p = commands.add_parser("verify", help="check kernels against op bodies on random inputs",
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
    from .report import add_report_options
    add_report_options(p)
    add_std_option(p)
    p.set_defaults(run=run_verify_command)


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
    """Verify each file in turn; the status is the worst of theirs (a mistake on the command
    line stops at once)."""
    from .io import program_files
    from .report import Reporter
    programs = program_files(args.files, allow_stdin=False)
    if args.tuning and not os.path.isfile(args.tuning):
        print_error("linnet verify", f"no such tuning file: {args.tuning}")
        return 2
    try:
        device = prepare_pallas() if args.target == "jax" else prepare_triton(args.device)
    except ValueError as err:
        print_error("linnet verify", err)
        return 2
    from ..fuzz.verify_trials import DEFAULT_SECONDS, ChildTrials, InProcessTrials
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
    from ..fuzz.verify import report_deaths
    status = max(status, report_deaths(trials))
    report.finish(len(programs))
    return status


def _verify_file(args: argparse.Namespace, path: str, device: str, report, trials) -> int:
    from ..errors import UsageError
    from ..fuzz.harness import ProgramError, target_spec
    from ..tune.records import TuningFileError
    from ..fuzz.verify import run_verify
    try:
        block = _block_request(args, path, target_spec)
        if block is not None:
            return run_verify(path, entry=args.entry, examples=args.examples, seed=args.seed,
                              numerics=args.numerics, device=device, grad=not args.no_grad,
                              max_dim=args.max_dim, target=args.target,
                              max_elements=args.max_elements, block=block,
                              tuning=tuning_argument(args), trials=trials)
        name = args.op or args.entry
        if name is not None:
            problem = _target_problem(args, path, name, target_spec)
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


def _block_request(args: argparse.Namespace, path: str, target_spec) -> dict | None:
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
    from .compile import bind_values
    return {"root": args.root, "bind": bind_values(args.bind), "present": presence(args)}


def _target_problem(args: argparse.Namespace, path: str, name: str, target_spec) -> str:
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
    from ..errors import suggest
    from ..fuzz.harness import entries, kernel_ops
    kind = "op" if args.op else "entry"
    names = kernel_ops(path) if args.op else entries(path)
    listed = ", ".join(names) or "none"
    what = "ops with a kernel" if args.op else "entries"
    return f"no {kind} named `{name}` in {path}; its {what}: {listed}{suggest(name, names)}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linnet")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_verify_command(commands)
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
