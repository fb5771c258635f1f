"""`python -m MODULE ARGS` or `python -c CODE ARGS`, run inside a process that is already
started, and ended as the interpreter would end it.

The fork server's children (linnet/testing/fork_server.py) run a command line here instead of
in a fresh interpreter. What the caller sees must not change, so this follows the
interpreter's own start and exit: `sys.argv` and `sys.path[0]` as `-m` and `-c` set them,
standard streams opened on fds 0, 1 and 2 as at startup (line-buffered on a terminal,
unbuffered under PYTHONUNBUFFERED), and at the end the exit status a real process would
have: `SystemExit`'s code (None is 0, a non-integer is printed and is 1), a traceback and
status 1 for an uncaught exception, death by SIGINT for an uncaught KeyboardInterrupt, then
the non-daemon threads joined, the `atexit` functions run and the streams flushed (status
120 when standard output cannot be).
"""

from __future__ import annotations

import atexit
import io
import os
import runpy
import signal
import sys
import threading
import types
from dataclasses import dataclass

FLUSH_FAILED = 120
"""The interpreter's exit status when it cannot flush standard output at exit."""


@dataclass(frozen=True)
class Ending:
    """How the run ended: an exit status, or death by a signal (as an uncaught
    KeyboardInterrupt ends a real interpreter: by SIGINT)."""
    status: int = 0
    signal: int | None = None


def command_form(argv: list[str]) -> str | None:
    """What is wrong with `argv` as `-m MODULE ...` or `-c CODE ...`; None if nothing."""
    if len(argv) < 2 or argv[0] not in ("-m", "-c"):
        return "only `-m MODULE ...` and `-c CODE ...` are run here"
    return None


def python_path(argv: list[str], cwd: str, env: dict[str, str]) -> list[str]:
    """The first entries of `sys.path` that `python ARGV` started in `cwd` with `env` would
    have, before the interpreter's own (standard library, site-packages): the working
    directory (`''` for `-c`) unless PYTHONSAFEPATH is set, then PYTHONPATH's entries made
    absolute, empty ones dropped."""
    first = [] if env.get("PYTHONSAFEPATH") else [cwd if argv[0] == "-m" else ""]
    entries = [e for e in env.get("PYTHONPATH", "").split(os.pathsep) if e]
    return first + [os.path.normpath(os.path.join(cwd, e)) for e in entries]


def open_standard_streams() -> None:
    """New `sys.stdin`, `sys.stdout` and `sys.stderr` on fds 0, 1 and 2 (whatever they are
    now), made as the interpreter makes them at startup, in the encoding it chose then
    (and unbuffered, as it made them, under PYTHONUNBUFFERED)."""
    unbuffered = sys.stdout.write_through
    for name, fd in (("stdin", 0), ("stdout", 1), ("stderr", 2)):
        old = getattr(sys, name)
        errors = "backslashreplace" if fd == 2 else old.errors
        stream = _stream(fd, old.encoding, errors, unbuffered)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
        KEPT.append(old)  # never collected: closing it would close the fd


KEPT: list[object] = []
"""The streams replaced by `open_standard_streams`, kept so that they are never closed."""


def _stream(fd: int, encoding: str, errors: str, unbuffered: bool) -> io.TextIOWrapper:
    if fd == 0:
        raw = io.FileIO(fd, "rb", closefd=False)
        return io.TextIOWrapper(io.BufferedReader(raw), encoding, errors, newline="\n")
    raw = io.FileIO(fd, "wb", closefd=False)
    binary = raw if unbuffered else io.BufferedWriter(raw)
    line_buffered = not unbuffered and (fd == 2 or os.isatty(fd))
    return io.TextIOWrapper(binary, encoding, errors, newline="\n",
                            line_buffering=line_buffered, write_through=unbuffered)


def run(argv: list[str]) -> Ending:
    """Run `-m MODULE ARGS` or `-c CODE ARGS` in this process (whose working directory,
    environment, `sys.path` and streams are already the command's); how it ended, after the
    interpreter's exit sequence."""
    ending = _main(argv)
    _finish()
    if not _flushed(sys.stdout) and ending.signal is None:
        ending = Ending(FLUSH_FAILED)
    _flushed(sys.stderr)
    return ending


def _main(argv: list[str]) -> Ending:
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]  # runpy puts the module's file in sys.argv[0]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = ["-c", *argv[2:]]
            _run_code(argv[1])
    except SystemExit as stop:
        return Ending(exit_status(stop.code))
    except KeyboardInterrupt as stop:
        _report(stop)
        return Ending(1, signal.SIGINT)
    except BaseException as err:  # noqa: BLE001 - what the interpreter itself does with it
        _report(err)
        return Ending(1)
    return Ending(0)


def _report(err: BaseException) -> None:
    """The traceback the interpreter prints for an uncaught exception, from the command's
    own frames on (this module's are left out)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    sys.excepthook(type(err), err.with_traceback(tb), tb)


def _run_code(code: str) -> None:
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    exec(compile(code, "<string>", "exec"), main.__dict__)  # noqa: S102 - `python -c`


def exit_status(code: object) -> int:
    """The status `raise SystemExit(code)` gives a real process: None is 0, an integer is
    itself (modulo 256, as the system reports it), anything else is printed and is 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish() -> None:
    """The interpreter's exit: join the threads that are not daemons (running the
    callbacks registered for that, as `concurrent.futures` does), then run `atexit`."""
    threading._shutdown()  # noqa: SLF001 - the interpreter's own first step at exit
    atexit._run_exitfuncs()  # noqa: SLF001 - and its second


def _flushed(stream: io.TextIOBase | None) -> bool:
    """Flush a standard stream at exit; False if it could not be, said on standard error as
    the interpreter says it (a closed stream is skipped, as the interpreter skips it)."""
    try:
        if stream is not None and not stream.closed:
            stream.flush()
    except (OSError, ValueError) as err:
        if stream is not sys.stderr:
            print(f"Exception ignored in: {stream!r}\n{type(err).__name__}: {err}",
                  file=sys.stderr, flush=True)
        return False
    return True
