"""The command table of `linnet`: for each command, the function that adds its parser and,
named as data, the function that runs it.

Every run of `linnet` builds the parser of every command (argparse needs them all to read
the command line), but runs one command. The parsers come from `linnet/cli/options/`,
which imports nothing heavy; a command's run function is written `"module:function"` and
its module is imported only when that command runs, importing at its top what it needs
(the compiler, the fuzzer, the tuner). So `linnet --help` and `linnet check` load neither
the pipeline nor the harness, and a new command is one row here, one options module and
one run module.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import Any, Callable

from .options.check import add_check
from .options.compile import TARGETS, add_compile, add_target
from .options.fuzz import add_fuzz
from .options.inspect import add_inspect
from .options.tune import add_tune
from .options.verify import add_verify

Run = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    """A row of the table: the command's name, the function that adds its parser to the
    subparsers of `linnet`'s, and where its run function lives (`"module:function"`)."""

    name: str
    add_parser: Callable[[Any, str], argparse.ArgumentParser]
    run: str

    def load(self) -> Run:
        """The run function, its module imported now (once: Python caches it)."""
        module, _, function = self.run.partition(":")
        return getattr(importlib.import_module(module), function)

    def __call__(self, args: argparse.Namespace) -> int:
        """Run the command: the parsed arguments' `run` is its row."""
        return self.load()(args)


COMMANDS: tuple[Command, ...] = (
    Command("check", add_check, "linnet.cli.check:run_check"),
    Command("compile", add_compile, "linnet.cli.compile:run_compile"),
    *(Command(target, add_target, "linnet.cli.compile:run_target") for target in TARGETS),
    Command("verify", add_verify, "linnet.cli.verify:run_verify_command"),
    Command("tune", add_tune, "linnet.cli.tune:run_tune_command"),
    Command("fuzz", add_fuzz, "linnet.cli.fuzz:run_fuzz_command"),
    Command("inspect", add_inspect, "linnet.cli.inspect:run_inspect"),
)
"""The commands in the order `linnet --help` lists them."""


def add_commands(subparsers: Any) -> None:
    """Add every command's parser; each parsed command's `args.run` is its row."""
    for command in COMMANDS:
        command.add_parser(subparsers, command.name).set_defaults(run=command)
