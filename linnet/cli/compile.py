"""`linnet compile` and the per-target commands (`linnet torch`, `jax`, `onnx`, `stablehlo`).

Both run the pipeline of `linnet.pipeline`; `compile` adds the instruments a
compiler researcher wants: dumps before and after passes, one file per pass,
timings, verification of each pass's output, and early stops.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..ir.numerics import DEFAULT as DEFAULT_NUMERICS, MODES
from .io import (ProgramInput, check_output, prepare_dir, print_error, read_program, write_bytes,
                 write_text)
from .presence import PRESENCE_EPILOG, add_presence_options, presence, presence_problem
from .report import Reporter, add_report_options
from .std_option import add_std_option

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


def add_commands(commands) -> None:
    from ..pipeline import TARGETS
    compile_ = commands.add_parser("compile", help="compile with dumps, timings and stops",
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
    compile_.set_defaults(run=run_compile)
    for target, what, suffix, extra in (
            ("torch", "a PyTorch module", "py", ""), ("jax", "a JAX module", "py", ""),
            ("onnx", "an ONNX model", "onnx", ONNX_EXTRA),
            ("stablehlo", "a StableHLO module (MLIR text)", "mlir", "")):
        command = commands.add_parser(target, help=f"generate {what}",
                                      description=TARGET_HELP.format(
                                          what=what, target=target, extra=extra, suffix=suffix,
                                          presence=PRESENCE_EPILOG, tuning=TUNING_HELP),
                                      formatter_class=argparse.RawDescriptionHelpFormatter)
        command.add_argument("file", metavar="FILE", help="a .linnet file, or - (stdin)")
        _add_common(command)
        _add_tuning(command)  # every generating command takes the same tuning options
        command.set_defaults(run=run_target, target=target)


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


def tuning_argument(args: argparse.Namespace) -> object:
    """compile_source's `tuning=` for the command's --tuning / --no-tuning."""
    if getattr(args, "no_tuning", False):
        return False
    return getattr(args, "tuning", None)


def bind_values(items: list[str]) -> dict[str, str]:
    """`--bind NAME=VALUE` items as {name: value} (every command that takes `--bind`)."""
    from ..passes.front.bind_generics import UsageError
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise UsageError(f"--bind {item}: write NAME=VALUE, such as R=8 or T=f32")
        out[name.strip()] = value.strip()
    return out


def _names(text: str) -> frozenset[str]:
    return frozenset(n.strip() for n in text.split(",") if n.strip())


def run_compile(args: argparse.Namespace) -> int:
    from ..passes.front.bind_generics import UsageError
    from ..passes.manager import Instrumentation
    from ..pipeline import all_passes, check_pass_names, passes_for
    if args.list_passes:
        for p in all_passes():
            print(f"{p.name:<22} {p.source} -> {p.target}: {p.description}{p.state_note()}")
        return 0
    if args.file is None:
        print("linnet compile: FILE is required (or --list-passes)", file=sys.stderr)
        return 2
    asked = _names(args.dump_after) | _names(args.dump_before) | (
        {args.stop_after} if args.stop_after else set())
    try:
        check_pass_names(asked, passes_for(args.target), args.target)
    except UsageError as err:
        print_error("linnet compile", err.command_line)
        return 2
    shown = Instrumentation(
        dump_before=_names(args.dump_before), dump_after=_names(args.dump_after),
        dump_dir=prepare_dir(args.dump_dir, "--dump-dir") if args.dump_dir else None,
        stop_after=args.stop_after,
        verify_each=args.verify_each)
    return _compile(args, shown, final=not args.stop_after and not args.dump_after)


def run_target(args: argparse.Namespace) -> int:
    from ..passes.manager import Instrumentation
    return _compile(args, Instrumentation(), final=True)


def _compile(args: argparse.Namespace, shown, final: bool) -> int:
    from ..diagnostics import CompileError
    from ..errors import MissingGeneric
    from ..passes.front.bind_generics import UsageError
    from ..passes.manager import timing_table
    from ..pipeline import compile_source
    from ..tune.records import TuningFileError
    program = read_program(args.file)
    check_output(args.output, program)
    if getattr(args, "tuning", None) and not os.path.isfile(args.tuning):
        print_error(f"linnet {args.command}", f"no such tuning file: {args.tuning}")
        return 2
    report = Reporter(args)
    try:
        options = dict(entry=args.entry, root=args.root, bind=bind_values(args.bind),
                       present=presence(args), numerics=args.numerics, grad=args.grad,
                       shown=shown, tuning=tuning_argument(args))
        try:
            compiled = compile_source(program.text, path=program.path, target=args.target,
                                      device=getattr(args, "device", None), **options)
        except MissingGeneric as missing:
            if args.target != "onnx":
                raise
            from .onnx_symbolic import export_symbolic  # an unbound Dim stays symbolic
            compiled = export_symbolic(program.text, program.path, missing, **options)
    except UsageError as err:  # its command-line wording (`--bind R=8`), not the library's
        print_error(f"linnet {args.command}", err.command_line)
        return 2
    except TuningFileError as err:
        print_error(f"linnet {args.command}", err)
        return 1
    except CompileError as err:
        report.add(err.diagnostics, _sources(program, err))
        report.finish(1)
        return 1
    report.finish(1)
    problem = presence_problem(args, compiled.parameters)
    if problem is not None:  # a head line, then one line per problem, as the library says
        status, err = problem
        print_error(f"linnet {args.command}", str(err).split("\n")[0])
        for line in err.problems:
            print_error("", f"  {line}")
        return status
    if getattr(args, "time_passes", False):
        print(timing_table(compiled.result), file=sys.stderr)
    if final and isinstance(compiled.text, str):
        write_text(compiled.text, args.output)
    elif final and compiled.text is not None:  # an ONNX model
        _write_model(compiled.text, args.output)
    return 0


def _sources(program: ProgramInput, err) -> dict:
    """The files the diagnostics are in (a program from stdin: its text)."""
    from ..diagnostics import SourceFile
    files = {d.span.file for d in err.diagnostics}
    out = {f: SourceFile.of(f, Path(f).read_text(encoding="utf-8", errors="replace"))
           for f in files if f != program.path and Path(f).is_file()}
    if program.path in files:
        text = program.text if program.from_stdin else Path(program.path).read_text(
            encoding="utf-8", errors="replace")
        out[program.path] = SourceFile.of(program.path, text)
    return out


def _write_model(model, output: str | None) -> None:
    """An ONNX model: the binary to OUT (or to stdout, `-o -`), else its readable text form
    to stdout."""
    if output is None:
        import onnx
        write_text(onnx.printer.to_text(model), None)
    else:
        write_bytes(model.SerializeToString(), output)
