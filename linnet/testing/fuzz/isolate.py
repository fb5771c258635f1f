"""Running one call in a fresh process, so that a native crash becomes a finding.

Why: a backend can die in native code (a segfault in a JIT, an abort in a runtime), and
a process that dies takes every program it was running with it. The driver runs programs
in worker processes; when one dies, it runs each program it was given again here, alone,
to learn which one killed it and on which target, and reduces that program with a
predicate that runs each candidate here too.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Died", "StartFailed", "isolated", "can_spawn", "PROCESS"]

PROCESS = "process "
"""How the signature of every `Died` begins: a finding whose signature begins so is a
process that ended, not an exception (see `Died.signature`)."""


class StartFailed(RuntimeError):
    """A process died before it began the call: the environment is at fault (a script
    that cannot be imported again, rules that do not load), not a program."""


@dataclass(frozen=True)
class Died:
    """A process that ended without an answer: its exit code (minus the signal number when
    a signal ended it, as `multiprocessing` reports)."""
    exitcode: int | None

    @property
    def stuck(self) -> bool:
        """Did it end itself, stuck in a stage long past its time limit?"""
        from ..backends import STUCK_EXIT
        return self.exitcode == STUCK_EXIT

    @property
    def kind(self) -> str:
        return "hang" if self.stuck else "crash"

    @property
    def signature(self) -> str:
        """Value-free, for the class key: the signal's name or the exit status."""
        if self.stuck:
            return PROCESS + "stuck past the time limit"
        if self.exitcode is not None and self.exitcode < 0:
            try:
                return f"{PROCESS}died: {signal.Signals(-self.exitcode).name}"
            except ValueError:
                return f"{PROCESS}died: signal {-self.exitcode}"
        return f"{PROCESS}died: exit status {self.exitcode}"

    def __str__(self) -> str:
        if self.stuck:
            return "the process running it was stuck in native code past the time limit"
        return f"the process running it died ({self.signature.split(': ', 1)[1]})"


def isolated(fn: Callable[[Any], Any], arg: Any, rules: str | None = None,
             init: Callable[[str | None], None] | None = None) -> Any:
    """`fn(arg)` in a new process (spawned, so no state is shared), after `init(rules)`
    there; its result, or `Died` when the process ends without one. An exception `fn`
    raises is raised here; `StartFailed` when the process could not begin the call."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, fn, arg, rules, init))
    process.start()
    send.close()
    try:
        started = _receive(receive)
        answer = _receive(receive) if started == _STARTED else None
    finally:
        receive.close()
    process.join()
    if started != _STARTED:
        cause = started[1] if isinstance(started, tuple) else None
        raise StartFailed("a fuzz worker could not start: " + (
            f"{type(cause).__name__}: {cause}" if cause is not None else
            f"it died first (exit status {process.exitcode}; its error is above)")) from cause
    if answer is None:
        return Died(process.exitcode)
    ok, value = answer
    if not ok:
        raise value
    return value


def can_spawn() -> bool:
    """Can a spawned process start here? Not when the main script cannot be read again
    (a script given on standard input): spawning imports it in the new process."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return path is None or os.path.exists(path)


_STARTED = "started"


def _receive(connection: Any) -> Any:
    try:
        return connection.recv()
    except EOFError:
        return None


def _child(send: Any, fn: Callable[[Any], Any], arg: Any, rules: str | None,
           init: Callable[[str | None], None] | None) -> None:
    try:
        if init is not None:
            init(rules)
    except BaseException as err:  # noqa: BLE001 - sent to the parent, raised there
        send.send(("failed", err))
        return
    send.send(_STARTED)
    try:
        answer = (True, fn(arg))
    except BaseException as err:  # noqa: BLE001 - sent to the parent, raised there
        answer = (False, err)
    send.send(answer)
    send.close()
