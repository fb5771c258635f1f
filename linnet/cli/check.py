"""`linnet check FILE...`: parse and check programs, printing every diagnostic (its options
are in `linnet/cli/options/check.py`)."""

from __future__ import annotations

import argparse
import sys

from ..check.frontend import check_program
from .io import program_files
from .report import Reporter, plural


def run_check(args: argparse.Namespace) -> int:
    """Check each program; the status is 1 when any has an error."""
    programs = program_files(args.files)
    report = Reporter(args, json_stream=sys.stdout)
    for program in programs:
        result = check_program(program.path, program.text)
        report.add(result.diagnostics, result.sources)
    report.finish(len(programs))
    if not report.json and not report.errors:
        print(f"ok: {plural(len(programs), 'file')} checked")
    return 1 if report.errors else 0
