"""Calls in a child process, so that a native crash is an answer and not the end of the caller.

Why: a kernel or a backend can die in native code (a segfault in a JIT, `free(): invalid
pointer` after a kernel wrote out of bounds, an abort in a runtime), and a process that
dies takes whatever it was running with it. `Worker` runs calls one after another in one
spawned child, which outlives them (importing Triton or JAX once, not once per call), and
answers `Died` for a call the child died in (or ran past its timeout in: the child is
killed); the next call starts a fresh child. `isolated` is one call in a child of its own.

Children are not forks of the caller: nothing is shared with the parent but what is sent
(the function by name, its argument pickled) and the environment at the moment the child
starts (`TRITON_INTERPRET`, `LINNET_PALLAS_INTERPRET` are read there), and the main script
is imported again there (a script using this needs the `if __name__ == "__main__":` guard).
They are spawned, or, for `isolated` and the fuzzer's pool, forked by a fork server
(`process_context`) where the platform has one: it imports torch and the compiler once, so
that a child starts in a fraction of a second rather than the seconds those imports take (a
fuzz run that finds a crash starts a child for each program, run and reduction candidate it
retries). A forked child ends without the interpreter's teardown (`os._exit`), so memory a
call corrupted cannot abort it as it ends: `Worker.close` reports that of spawned children
only, which is why `linnet verify`'s child is spawned.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
from dataclasses import dataclass
from typing import Any, Callable
from .backends import STUCK_EXIT

__all__ = ["Died", "StartFailed", "Worker", "isolated", "can_spawn", "process_context",
           "take_environment", "PROCESS", "PRELOAD"]

PROCESS = "process "
"""How the signature of every `Died` begins: a finding whose signature begins so is a
process that ended, not an exception (see `Died.signature`)."""


PRELOAD = ("torch", "linnet.fuzz.driver")
"""What the fork server imports before it forks any child: the slow imports every child
makes. Not Triton nor JAX: where their kernels run is read from the environment when they
are imported (in the child), and JAX's threads do not survive a fork. A module that fails
to import is left out."""


def process_context() -> multiprocessing.context.BaseContext:
    """Where forked children come from: a fork server with `PRELOAD` imported, else
    spawning (a platform without fork). The server starts with the first child, and each
    child takes the environment its parent has when it starts (`_serve`), not the
    server's."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    return context


class StartFailed(RuntimeError):
    """A process died before it began the call: the environment is at fault (a script
    that cannot be imported again, rules that do not load), not a program."""


@dataclass(frozen=True)
class Died:
    """A process that ended without an answer: its exit code (minus the signal number when
    a signal ended it, as `multiprocessing` reports); `timeout`, the seconds after which
    the parent killed it, when it ran past them."""
    exitcode: int | None
    timeout: float | None = None

    @property
    def stuck(self) -> bool:
        """Did it end itself, stuck in a stage long past its time limit?"""
        return self.exitcode == STUCK_EXIT

    @property
    def kind(self) -> str:
        return "hang" if self.stuck or self.timeout is not None else "crash"

    @property
    def cause(self) -> str:
        """What ended it, free of values but the time limit: `SIGABRT`, `exit status 3`,
        `timed out after 60 s`, `stuck past the time limit`."""
        if self.timeout is not None:
            return f"timed out after {self.timeout:g} s"
        if self.stuck:
            return "stuck past the time limit"
        if self.exitcode is not None and self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                return f"signal {-self.exitcode}"
        return f"exit status {self.exitcode}"

    @property
    def signature(self) -> str:
        """Value-free, for the class key: the signal's name or the exit status."""
        if self.stuck:
            return PROCESS + self.cause
        if self.timeout is not None:
            return PROCESS + "timed out"
        return f"{PROCESS}died: {self.cause}"

    def __str__(self) -> str:
        if self.stuck:
            return "the process running it was stuck in native code past the time limit"
        if self.timeout is not None:
            return f"the process running it {self.cause} and was killed"
        return f"the process running it died ({self.cause})"


class Worker:
    """Calls run one at a time in a spawned child that serves them until it dies or the
    worker is closed. `init(init_arg)` runs first in each new child (a failure there is
    `StartFailed`, raised by `call`). Use it as a context manager, or call `close`."""

    def __init__(self, init: Callable[[Any], None] | None = None, init_arg: Any = None,
                 what: str = "worker process", forked: bool = False) -> None:
        self.init, self.init_arg, self.what = init, init_arg, what
        self.forked = forked  # children from the fork server (see the module's docstring)
        self.starts = 0  # children started so far (tests and reports read it)
        self.served = 0  # calls the current child answered
        self._busy = False
        self._process: Any = None
        self._requests: Any = None
        self._answers: Any = None

    def call(self, fn: Callable[[Any], Any], arg: Any, timeout: float | None = None) -> Any:
        """`fn(arg)` in the child: its result, or `Died` when the child ended without one
        (or ran past `timeout` seconds, and was killed). An exception `fn` raises is
        raised here."""
        if self._process is None:
            self._start()
        self._busy = True  # till the answer comes: a KeyboardInterrupt here leaves it so
        try:
            self._requests.send((fn, arg))
        except (BrokenPipeError, ConnectionResetError, EOFError):
            return self._lost(None)
        if timeout is not None and not self._answers.poll(timeout):
            return self._lost(timeout)
        answer = _receive(self._answers)
        if answer is None:
            return self._lost(None)
        self._busy = False
        self.served += 1
        ok, value = answer
        if not ok:
            raise value
        return value

    def close(self) -> Died | None:
        """Ask the child to stop, and wait for it (killing it if it does not). `Died` when
        it ended badly all the same: memory an earlier call corrupted can abort a process
        only when it frees it, at exit."""
        if self._process is None:
            return None
        if self._busy:  # interrupted while the child runs a call: no waiting for it
            self._forget()
            return None
        try:
            self._requests.send(None)
        except OSError:
            pass
        self._process.join(5)
        exitcode = self._process.exitcode
        self._forget()
        return Died(exitcode) if exitcode else None

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def fresh(self) -> bool:
        """Will the next call be the first its child runs (nothing before it to blame)?"""
        return self._process is None or self.served == 0

    def _start(self) -> None:
        context = process_context() if self.forked else multiprocessing.get_context("spawn")
        requests_out, requests_in = context.Pipe(duplex=False)
        answers_out, answers_in = context.Pipe(duplex=False)
        process = context.Process(target=_serve, args=(requests_out, answers_in, self.init,
                                                       self.init_arg, dict(os.environ)))
        process.start()
        requests_out.close()
        answers_in.close()
        self._process, self._requests, self._answers = process, requests_in, answers_out
        self.starts += 1
        self.served = 0
        started = _receive(answers_out)
        if started != _STARTED:
            process.join()
            exitcode = process.exitcode
            self._forget()
            cause = started[1] if isinstance(started, tuple) else None
            raise StartFailed(f"a {self.what} could not start: " + (
                f"{type(cause).__name__}: {cause}" if cause is not None else
                f"it died first (exit status {exitcode}; its error is above)")) from cause

    def _lost(self, timeout: float | None) -> Died:
        """The child ended (or is killed, past `timeout`): why, and no child until the
        next call."""
        process = self._process
        if timeout is not None:
            process.kill()
        process.join()
        died = Died(process.exitcode, timeout)
        self._forget()
        return died

    def _forget(self) -> None:
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        for end in (self._requests, self._answers):
            end.close()
        self._process = self._requests = self._answers = None
        self._busy = False


def isolated(fn: Callable[[Any], Any], arg: Any, rules: str | None = None,
             init: Callable[[str | None], None] | None = None,
             what: str = "fuzz worker") -> Any:
    """`fn(arg)` in a new process of its own, after `init(rules)` there; its result, or
    `Died` when the process ends without one. An exception `fn` raises is raised here;
    `StartFailed` when the process could not begin the call. The process is forked by the
    fork server: a death as it ends, after the answer, is not asked about."""
    with Worker(init, rules, what, forked=True) as worker:
        return worker.call(fn, arg)


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
    except (EOFError, OSError):
        return None


def _serve(requests: Any, answers: Any, init: Callable[[Any], None] | None,
           init_arg: Any, environment: dict[str, str]) -> None:
    """The child: the parent's environment, `init`, then each call sent until told to stop
    (None) or the parent goes away. Ctrl-C is the parent's to handle (it stops the child):
    the child, in the terminal's process group too, ignores it rather than die with a
    traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    take_environment(environment)
    try:
        if init is not None:
            init(init_arg)
    except BaseException as err:  # noqa: BLE001 - sent to the parent, raised there
        answers.send(("failed", _sendable(err)))
        return
    answers.send(_STARTED)
    while True:
        job = _receive(requests)
        if job is None:
            return
        fn, arg = job
        try:
            answer = (True, fn(arg))
        except BaseException as err:  # noqa: BLE001 - sent to the parent, raised there
            answer = (False, _sendable(err))
        try:
            answers.send(answer)
        except Exception as err:  # noqa: BLE001 - a result that does not pickle
            answers.send((False, RuntimeError(f"the answer could not be sent back: "
                                              f"{type(err).__name__}: {err}")))


def _sendable(err: BaseException) -> BaseException:
    """`err`, or a RuntimeError saying what it was when it would not arrive whole (an
    exception whose constructor takes other arguments than it keeps)."""
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(err).__name__}: {err}")


def take_environment(environment: dict[str, str]) -> None:
    """Make this process's environment `environment`: a forked child has its fork
    server's, from when the server started, and must see its parent's as it is now."""
    if environment != os.environ:
        os.environ.clear()
        os.environ.update(environment)
