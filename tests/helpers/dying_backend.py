"""A rules module for the driver's tests: in a process that imports it, running a
program on ONNX kills the process with SIGSEGV, as a native crash in a backend would.
With `LINNET_TEST_DIE_ONCE` naming a file, only the first such run dies (it creates the
file): a crash that does not happen again when the program runs alone. With
`LINNET_TEST_STICK` set, the run instead waits forever with SIGALRM blocked, as native code
spinning on a GPU does, and the worker's hard limit is 2 s past a stage's limit.

It adds no rule; `linnet fuzz --rules` imports it in each worker, which is how the
tests plant the crash where the workers run."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from linnet.fuzz import backends

RULE_SET: list = []

_real = backends.loader


if os.environ.get("LINNET_TEST_STICK"):
    backends.HARD_LIMIT = 2.0


def _die() -> None:
    if os.environ.get("LINNET_TEST_STICK"):
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
        signal.sigwait([signal.SIGUSR2])  # never sent
    once = os.environ.get("LINNET_TEST_DIE_ONCE")
    if once:
        if Path(once).exists():
            return
        Path(once).touch()
    os.kill(os.getpid(), signal.SIGSEGV)


def _dying(target: str):
    if target != "onnx":
        return _real(target)

    def load(compiled, name):
        main = _real(target)(compiled, name)

        def run(*inputs):
            _die()
            return main(*inputs)
        return run
    return load


backends.loader = _dying
