"""The command table (`linnet/cli/commands.py`): each command's parser comes from a light
module and its run function is loaded only when it runs, so `linnet --help` and `linnet
check` load neither the pipeline nor the harness (checked in a fresh process, whose
`sys.modules` is the record of what was imported)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from linnet.cli.commands import COMMANDS
from linnet.cli.main import build_parser
from linnet.cli.options.compile import TARGETS
from linnet.pipeline import TARGETS as PIPELINE_TARGETS

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import contextlib, importlib, io, json, sys
main = importlib.import_module("linnet.cli.main").main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        status = main(sys.argv[1:])
    except SystemExit as exit_:
        status = exit_.code
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""
HEAVY = ("linnet.pipeline", "linnet.fuzz", "linnet.tune.tuner", "linnet.checkpoint", "numpy")


def _loaded(*argv: str) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    return seen["status"], set(seen["modules"])


def test_the_compile_options_name_the_pipelines_targets() -> None:
    assert TARGETS == PIPELINE_TARGETS


def test_the_parser_has_the_tables_commands_in_its_order() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [c.name for c in COMMANDS] == [
        "check", "compile", "torch", "jax", "onnx", "stablehlo", "verify", "tune", "fuzz",
        "inspect"]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_each_command_runs_the_function_its_row_names(command) -> None:
    args = build_parser().parse_args([command.name] + _required(command.name))
    assert args.run is command
    run = command.load()
    assert callable(run) and f"{run.__module__}:{run.__name__}" == command.run


def _required(name: str) -> list[str]:
    """The fewest arguments that parse for a command."""
    return {"compile": [], "fuzz": [], "tune": ["x.linnet", "--op", "f"]}.get(name,
                                                                             ["x.linnet"])


def test_help_loads_no_compiler() -> None:
    status, modules = _loaded("--help")
    assert status == 0
    assert "linnet.cli.commands" in modules
    assert [m for m in HEAVY if m in modules] == []
    assert not any(m.startswith("linnet.check") for m in modules)


def test_check_loads_the_checker_but_not_the_pipeline() -> None:
    status, modules = _loaded("check", "examples/softmax.linnet")
    assert status == 0
    assert "linnet.check.frontend" in modules and "linnet.cli.check" in modules
    assert [m for m in HEAVY if m in modules and m != "numpy"] == []


def test_the_demo_imports_neither_torch_nor_triton() -> None:
    """`linnet.demo.main` chooses Triton's interpreter (TRITON_INTERPRET=1) when it runs,
    which works only if importing the demo has imported no Triton."""
    code = ("import sys, linnet.demo; "
            "print([m for m in ('torch', 'triton', 'jax') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
