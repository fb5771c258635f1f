"""`linnet check FILE...`: parse and check programs, printing every diagnostic (its options
are in `linnet/cli/options/check.py`).

The checker is called through its module, `frontend.check_program`, looked up at each call
as when it was imported inside the function: a test (or a tool) that replaces it there is
heard."""

from __future__ import annotations

import argparse
import sys

from ..check import frontend
from .io import program_files
from .report import Reporter, plural


def run_check(args: argparse.Namespace) -> int:
    """Check each program; the status is 1 when any has an error."""
    programs = program_files(args.files)
    report = Reporter(args, json_stream=sys.stdout)
    for program in programs:
        result = frontend.check_program(program.path, program.text)
        report.add(result.diagnostics, result.sources)
    report.finish(len(programs))
    if not report.json and not report.errors:
        print(f"ok: {plural(len(programs), 'file')} checked")
    return 1 if report.errors else 0
