"""A fork server for the tests' `linnet` processes: `python -m linnet.testing.fork_server
SOCKET` imports the compiler once, then forks a child per command line a client sends, which
runs it as `python -m linnet ...` would run in a fresh process.

A fresh `python -m linnet check` spends most of its second importing the compiler; the tests
start hundreds of them (the docs' transcripts, the `--help` examples). The client is
linnet/testing/fork_client.py; linnet/testing/fork_servers.py starts servers for a test
process and names the command that runs `linnet` through them.

What a child must not inherit from the server is what a fresh process would have decided
differently:
- the environment: replaced by the client's. The compiler reads its settings when it runs
  (`LINNET_DEBUG`, `LINNET_TUNING`, `NO_COLOR`, ...; no module of linnet/ reads one at
  import), and the server imports nothing that reads one at import: not torch, triton, jax or
  onnx (`TRITON_INTERPRET`, `CUDA_VISIBLE_DEVICES`, `JAX_PLATFORMS` differ between runs); a
  child imports those afresh, under the client's environment. What the interpreter and the
  modules imported here read at startup (`PYTHON*` but PYTHONPATH, the locale, numpy's
  threads, the cache the parser's tables come from) must equal the server's, or the server
  answers "fallback" and the client starts a real interpreter;
- `sys.path`: the client's working directory and PYTHONPATH go first, as in a fresh
  process; where they would find another file for a module imported here, "fallback";
- the streams, `sys.argv`, the working directory, and the exit (linnet/testing/
  python_entry.py).
Each child runs in a process group of its own, killed when its client's connection closes
before it ends (a client killed by a timeout leaves nothing behind). The server ends when
its parent does.
"""

from __future__ import annotations

import importlib
import json
import os
import selectors
import signal
import socket
import sys
import threading
import traceback
from dataclasses import dataclass
from importlib.machinery import PathFinder
from typing import Mapping

from ..syntax.parser import parse
from . import fork_client as wire
from . import python_entry

PRELOADED = ("linnet.cli.main", "linnet.cli.check", "linnet.cli.compile", "linnet.cli.inspect",
             "linnet.pipeline", "linnet.check.frontend")
"""What `linnet`'s commands import before they start work (the command line, the checker,
the pipeline with lark and numpy): imported once, here. Not egglog, which starts a thread of
its own when imported (numpy's BLAS threads stop and restart around a fork by themselves);
the commands that run the e-graph stage import it. Not the commands of the harness (`fuzz`,
`tune`, `verify`), whose oracle imports ml_dtypes: their children import them."""

WARM_UP = "module warm\n"
"""A program parsed once here, so that children find the parser built."""

NEVER_PRELOADED = ("torch", "triton", "jax", "jaxlib", "onnx", "ml_dtypes")
"""Modules that read the environment when imported: a child imports them itself."""

STARTUP_PREFIXES = ("PYTHON", "LC_", "OPENBLAS_", "OMP_", "MKL_", "NPY_", "NUMPY_")
STARTUP_NAMES = ("LANG", "LANGUAGE", "HOME", "LINNET_CACHE", "XDG_CACHE_HOME")
"""The variables read before a command runs: by the interpreter (`PYTHON*` but PYTHONPATH,
which `python_entry.python_path` applies; the locale), by numpy's import, and where the
parser's tables built at warm-up are cached (HOME, LINNET_CACHE, XDG_CACHE_HOME)."""

PARENT_POLL_S = 1.0


def startup_env(env: Mapping[str, str]) -> dict[str, str]:
    """The part of `env` a process has read before it runs a command; a client's must
    equal the server's."""
    return {k: v for k, v in env.items() if k != "PYTHONPATH"
            and (k in STARTUP_NAMES or k.startswith(STARTUP_PREFIXES))}


def preload() -> None:
    """Import the compiler and build the parser, as every command would. (A module of the
    list that is gone, renamed by a change to the command line, is left out: the server only
    loses some speed.)"""
    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name != name:
                raise
    parse(WARM_UP, "<warm-up>")


def fork_hazard() -> str | None:
    """Why forking this process would not give a child a fresh process's state: a module
    that reads the environment at import got imported, or a thread is running (a fork
    copies only the thread that forks)."""
    loaded = [m for m in NEVER_PRELOADED if m in sys.modules]
    if loaded:
        return f"imported {', '.join(loaded)}, which read the environment at import"
    if threading.active_count() > 1:
        return f"{threading.active_count()} threads run"
    return None


def shadowing(prefix: list[str], own_prefix: list[str]) -> str | None:
    """A module imported here that `sys.path` starting with `prefix` would find elsewhere
    than the server's own path did: its name, or None."""
    for name in sorted({m.partition(".")[0] for m in list(sys.modules)}):
        here = getattr(sys.modules.get(name), "__file__", None)
        if here is None:
            continue  # built in, frozen, or a namespace package
        # Found by neither prefix, a module comes from the rest of the path (site-packages,
        # an editable install's finder): the file imported here. A checkout installed
        # editable is found by a client's working directory and by the server's finder
        # alike: the same file, no shadowing.
        theirs = _origin(name, prefix) or here
        ours = _origin(name, own_prefix) or here
        if os.path.realpath(theirs) != os.path.realpath(ours):
            return name
    return None


def _origin(name: str, path: list[str]) -> str | None:
    spec = PathFinder.find_spec(name, path)
    return spec.origin if spec else None


@dataclass(frozen=True)
class Start:
    """How the server itself was started, read before it imported anything."""
    startup: dict[str, str]  # startup_env of its environment
    prefix: list[str]  # the entries of sys.path from its working directory and PYTHONPATH
    tail: list[str]  # the rest: the interpreter's own (standard library, site-packages)

    @classmethod
    def now(cls) -> Start:
        own = python_entry.python_path(["-m", "linnet.testing.fork_server"], os.getcwd(),
                                         dict(os.environ))
        return cls(startup_env(os.environ), own, sys.path[len(own):])


class Server:
    """Accepts clients on `listener`, forks a child per request, and answers each client
    with its child's ending."""

    def __init__(self, listener: socket.socket, start: Start) -> None:
        self.listener = listener
        self.start = start
        self.selector = selectors.DefaultSelector()
        self.wake_read, self.wake_write = socket.socketpair()
        self.children: dict[int, socket.socket | None] = {}  # pid -> its client
        self.clients: dict[socket.socket, int] = {}  # client -> its child's pid
        self.parent = os.getppid()

    # ----- the loop ----------------------------------------------------------------------

    def serve(self) -> None:
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.wake_write.setblocking(False)
        self.selector.register(self.wake_read, selectors.EVENT_READ)
        signal.set_wakeup_fd(self.wake_write.fileno())
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
        signal.signal(signal.SIGTERM, _stop)
        try:
            while os.getppid() == self.parent:
                for key, _events in self.selector.select(PARENT_POLL_S):
                    self.ready(key.fileobj)
                self.reap()
        finally:
            for pid in self.children:
                _kill_group(pid)

    def ready(self, source: object) -> None:
        if source is self.listener:
            self.accept()
        elif source is self.wake_read:
            self.wake_read.recv(4096)
        else:
            self.from_client(source)

    def accept(self) -> None:
        try:
            conn, _address = self.listener.accept()
        except BlockingIOError:
            return
        conn.setblocking(True)
        conn.settimeout(10)
        try:
            request, fds = wire.receive_request(conn)
        except (OSError, ValueError):
            conn.close()
            return
        try:
            why = self.refusal(request)
            if why:
                wire.send_message(conn, fallback=why)
                conn.close()
                return
            self.start_child(conn, request, fds)
        except (OSError, LookupError, TypeError):  # a client gone, or a malformed request
            conn.close()
        finally:
            for fd in fds:
                os.close(fd)

    def refusal(self, request: dict) -> str | None:
        """Why a fresh interpreter would run the request otherwise than a child of this
        server; None when it would not."""
        argv, cwd, env = request["argv"], request["cwd"], request["env"]
        wrong = python_entry.command_form(argv)
        if wrong:
            return wrong
        theirs = startup_env(env)
        ours = self.start.startup
        if theirs != ours:
            names = sorted(k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k))
            return f"started with other settings: {', '.join(names)}"
        prefix = [entry or cwd for entry in python_entry.python_path(argv, cwd, env)]
        shadowed = shadowing(prefix, self.start.prefix)
        if shadowed:
            return f"its sys.path finds another {shadowed}"
        return None

    def start_child(self, conn: socket.socket, request: dict, fds: list[int]) -> None:
        try:
            pid = os.fork()
        except OSError as err:  # out of processes or memory: a fresh interpreter may not be
            wire.send_message(conn, fallback=f"cannot fork: {err}")
            conn.close()
            return
        if pid == 0:
            conn.close()
            self.become_child(request, fds)
        try:
            os.setpgid(pid, pid)
        except OSError:  # the child did it first, or has ended
            pass
        conn.setblocking(False)
        self.children[pid] = conn
        self.clients[conn] = pid
        self.selector.register(conn, selectors.EVENT_READ)

    def from_client(self, conn: socket.socket) -> None:
        """A client sent a signal to forward, or went away (then its child is killed)."""
        pid = self.clients[conn]
        try:
            data = conn.recv(4096)
        except OSError:
            data = b""
        if not data:
            _kill_group(pid)
            self.forget(conn)
            self.children[pid] = None
            return
        for line in data.splitlines():
            try:
                signum = json.loads(line).get("signal")
            except (ValueError, AttributeError):
                continue
            if isinstance(signum, int):
                try:
                    os.kill(pid, signum)
                except ProcessLookupError:
                    pass

    def reap(self) -> None:
        """Answer the clients whose children have ended."""
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            try:
                if os.WIFSIGNALED(status):
                    wire.send_message(conn, signal=os.WTERMSIG(status))
                else:
                    wire.send_message(conn, exit=os.waitstatus_to_exitcode(status))
            except OSError:
                pass
            self.forget(conn)

    def forget(self, conn: socket.socket) -> None:
        self.selector.unregister(conn)
        del self.clients[conn]
        conn.close()

    # ----- in the child ------------------------------------------------------------------

    def become_child(self, request: dict, fds: list[int]) -> None:
        """Turn this fresh fork into the client's process, run its command, and exit: a
        child never returns to the server's loop."""
        status = wire.LOST
        try:
            os.setpgid(0, 0)
            self.leave_server()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            sys.path[:] = python_entry.python_path(request["argv"], request["cwd"],
                                                   request["env"]) + self.start.tail
            python_entry.open_standard_streams()
            ending = python_entry.run(request["argv"])
            if ending.signal is not None:
                wire.die_like(ending.signal)
            status = ending.status
        except BaseException:  # noqa: BLE001 - the fork server's own failure: say it
            traceback.print_exc()
        finally:
            os._exit(status)

    def leave_server(self) -> None:
        """What belongs to the server closed, and the signals as a fresh process has them."""
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.selector.close()
        for sock in (self.listener, self.wake_read, self.wake_write, *self.clients):
            sock.close()


def _stop(_signum: int, _frame: object) -> None:
    raise SystemExit(0)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def main(argv: list[str]) -> int:
    """Import the compiler, listen on the socket named in argv, say `ready` on standard
    output, and serve until the parent process ends (or SIGTERM)."""
    start = Start.now()
    preload()
    hazard = fork_hazard()
    if hazard:
        print(f"fork server: cannot fork safely: {hazard}", file=sys.stderr)
        return 1
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(argv[0])
    listener.listen(64)
    server = Server(listener, start)
    print("ready", flush=True)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    try:
        server.serve()
    finally:
        listener.close()
        os.unlink(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
