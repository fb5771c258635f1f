"""`linnet compile` and the per-target commands (`linnet torch`, `jax`, `onnx`, `stablehlo`):
what they do (their options: `linnet/cli/options/compile.py`).

Both run the pipeline of `linnet.pipeline`; `compile` adds the instruments a
compiler researcher wants: dumps before and after passes, one file per pass,
timings, verification of each pass's output, and early stops. `pipeline.compile_source` is
looked up at each call, as when it was imported inside the function, so that replacing it
there (a test planting a crash) is heard.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..diagnostics import CompileError, SourceFile
from ..errors import MissingGeneric, UsageError
from ..passes.manager import Instrumentation, timing_table
from .. import pipeline
from ..pipeline import all_passes, check_pass_names, passes_for
from ..tuning.records import TuningFileError
from .arguments import bind_values, tuning_argument
from .io import (ProgramInput, check_output, prepare_dir, print_error, read_program, write_bytes,
                 write_text)
from .onnx_symbolic import export_symbolic
from .presence import presence, presence_problem
from .report import Reporter


def _names(text: str) -> frozenset[str]:
    return frozenset(n.strip() for n in text.split(",") if n.strip())


def run_compile(args: argparse.Namespace) -> int:
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
    return _compile(args, Instrumentation(), final=True)


def _compile(args: argparse.Namespace, shown, final: bool) -> int:
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
            compiled = pipeline.compile_source(
                program.text, path=program.path, target=args.target,
                device=getattr(args, "device", None), **options)
        except MissingGeneric as missing:
            if args.target != "onnx":
                raise
            # an unbound Dim stays symbolic
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
