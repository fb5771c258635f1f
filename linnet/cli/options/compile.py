"""`linnet compile` and the per-target commands (`linnet torch`, `jax`, `onnx`, `stablehlo`):
their help and options (run by `linnet/cli/compile.py`).

The targets are named here rather than read from `linnet.pipeline`, whose import loads the
whole compiler: printing `linnet --help` should not. `tests/cli/test_command_table.py`
checks that they are the pipeline's `TARGETS`.
"""

from __future__ import annotations

import argparse

from ...ir.numerics import DEFAULT as DEFAULT_NUMERICS, MODES
from ..report import add_report_options
from ..std_option import add_std_option
from .presence import PRESENCE_EPILOG, add_presence_options

COMPILE_HELP = """\
Compile FILE for a target, showing any stage of the pipeline.

examples:
  linnet compile --list-passes
  linnet compile examples/softmax.linnet --target torch --entry main \\
      --dump-after=lower-index-notation
  linnet compile model.linnet --target torch --bind R=8 --bind C=40 --dump-after=all
  linnet compile model.linnet --target onnx --bind R=8 --bind C=40 \\
      --stop-after=cse --dump-dir stages --time-passes

--dump-after/--dump-before take pass names separated by commas, or `all`.
Each dump starts with a banner naming the pass and its IR language. A name
that is no pass of the target's pipeline is a command-line mistake (exit
status 2); the message says so of a pass of another target's pipeline
(emit-onnx under --target torch).""" + PRESENCE_EPILOG

TARGET_HELP = """\
Compile FILE's entry to {what} and print it (or write it with -o).

examples:
  linnet {target} examples/softmax.linnet --entry main
  linnet {target} model.linnet --entry run --bind R=8 --bind C=40 -o run.{suffix}
  cat model.linnet | linnet {target} - --entry run --bind R=8 --bind C=40 -o -
  linnet {target} examples/block_model.linnet --root Model --entry main \
      --bind L=2 --bind H=4 --bind V=8 --bind B=3

--bind binds every generic of the entry: dims as integers (R=8), dtypes by
name (T=f32), shape packs as comma-separated integers (S=2,3).{tuning}
--grad exports the entry's reverse mode instead: it must return one floating
scalar (the loss); the export returns the loss, then its gradient with respect
to every floating input, in order.

A block entry (--root names the block when several have entries) takes its own
inputs, then every param, buffer and state of the block's tree in manifest
order (`linnet inspect --parameters`), and returns its results, then the next
value of each state it assigns.{presence}{extra}"""

TUNING_HELP = """
Kernel tile sizes and launch hints come from the op headers, or from a tuning
file written by `linnet tune` where it records a choice for the op at the
bound sizes (--tuning PATH, $LINNET_TUNING, else linnet.tuning.json beside
FILE; --device NAME picks a device's choices when it records several). The
module's header says, per op, which was used."""

ONNX_EXTRA = """

The model's readable text form goes to stdout; -o model.onnx writes the
binary model instead (load it with onnx.load or onnxruntime). Inputs and
outputs are named after the entry's parameters and results (x, result,
result_0, ...). A Dim generic that --bind leaves unbound is symbolic: one
model for every size (E2190 where the graph would depend on the size; bind
it then). See docs/exports.md."""


GENERATING: dict[str, tuple[str, str, str]] = {
    "torch": ("a PyTorch module", "py", ""),
    "jax": ("a JAX module", "py", ""),
    "onnx": ("an ONNX model", "onnx", ONNX_EXTRA),
    "stablehlo": ("a StableHLO module (MLIR text)", "mlir", ""),
}
"""Each target's generating command: what it makes, its file suffix in the examples, and
what its help adds."""

TARGETS = tuple(GENERATING)
"""The targets `--target` chooses from: the pipeline's (`linnet.pipeline.TARGETS`)."""


def add_compile(commands, name: str) -> argparse.ArgumentParser:
    """Add `compile` to the subparsers of `linnet`'s parser."""
    compile_ = commands.add_parser(name, help="compile with dumps, timings and stops",
                                   description=COMPILE_HELP,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    compile_.add_argument("file", nargs="?", metavar="FILE", help="a .linnet file, or - (stdin)")
    compile_.add_argument("--target", choices=TARGETS, default="torch",
                          help="whose pipeline to run (default torch); --list-passes "
                               "lists the passes of every target")
    _add_common(compile_)
    compile_.add_argument("--dump-after", default="", metavar="PASS[,PASS]|all",
                          help="print the IR after each named pass (or every pass), under "
                               "a banner")
    compile_.add_argument("--dump-before", default="", metavar="PASS[,PASS]|all",
                          help="print the IR before each named pass (or every pass)")
    compile_.add_argument("--stop-after", metavar="PASS",
                          help="end the pipeline after PASS (with no dump, nothing is "
                               "printed)")
    compile_.add_argument("--dump-dir", metavar="DIR",
                          help="write the IR after each pass to DIR/NN-PASS.txt")
    compile_.add_argument("--time-passes", action="store_true",
                          help="print each pass's time to stderr")
    compile_.add_argument("--verify-each", action="store_true",
                          help="check each pass's output belongs to its IR language")
    compile_.add_argument("--list-passes", action="store_true",
                          help="list the passes, one per line, and exit")
    _add_tuning(compile_)
    return compile_


def add_target(commands, name: str) -> argparse.ArgumentParser:
    """Add the generating command of target `name` (`linnet torch`, ...)."""
    what, suffix, extra = GENERATING[name]
    command = commands.add_parser(name, help=f"generate {what}",
                                  description=TARGET_HELP.format(
                                      what=what, target=name, extra=extra, suffix=suffix,
                                      presence=PRESENCE_EPILOG, tuning=TUNING_HELP),
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    command.add_argument("file", metavar="FILE", help="a .linnet file, or - (stdin)")
    _add_common(command)
    _add_tuning(command)  # every generating command takes the same tuning options
    command.set_defaults(target=name)
    return command


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--entry", metavar="NAME", help="the entry to compile (optional when the "
                                                  "file has one)")
    p.add_argument("--root", metavar="BLOCK", help="the root block whose entry to compile "
                   "(optional when one block of the file has entries)")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=VALUE",
                   help="a value for a generic of the entry; repeat for each")
    add_presence_options(p)
    p.add_argument("--numerics", choices=MODES,
                   default=DEFAULT_NUMERICS, help="exact: op bodies only; equivalent (default): "
                   "kernels where they apply; fast: also TF32 tile products")
    p.add_argument("--grad", action="store_true",
                   help="export the loss and its gradient with respect to every floating "
                        "input (reverse mode; op bodies and grad clauses, no kernels)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the result to OUT (- for standard output); never the input")
    add_report_options(p)
    add_std_option(p)


def _add_tuning(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tuning", metavar="PATH",
                   help="kernel choices recorded by `linnet tune` (default: $LINNET_TUNING, "
                        "else linnet.tuning.json beside FILE if there is one)")
    p.add_argument("--device", metavar="NAME",
                   help="whose recorded choices apply, as `linnet tune` names devices "
                        "(\"NVIDIA H200\", \"cpu\"); default: the only device recorded")
    p.add_argument("--no-tuning", action="store_true",
                   help="use the kernel choices of the op headers only")
