"""The fork servers of one test process, and `python_command`: the command that runs
`python -m linnet ...` (or `python -c ...`) through one, in a fraction of the time a fresh
interpreter takes to import the compiler.

A server (linnet/testing/fork_server.py) starts on first use, one for each set of startup
settings asked for (the docs' scratch environment is one, the test process's own another),
and stops when the test process exits; under pytest-xdist each worker has its own. Where one
cannot start, `python_command` names the plain interpreter, and a client that finds its
server gone or unable to run a command starts the plain interpreter itself: the server
changes how long a command takes, never what it does. `LINNET_TEST_FORK_SERVER=0` in the
test process's environment turns the servers off.
"""

from __future__ import annotations

import atexit
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Mapping

from . import fork_client
from .fork_server import startup_env

CLIENT = Path(fork_client.__file__)
SWITCH = "LINNET_TEST_FORK_SERVER"
READY_S = 120.0
"""How long a server may take to import the compiler (minutes on a loaded machine)."""


class ForkServers:
    """Servers started by this process, by their startup settings; None where one failed."""

    def __init__(self) -> None:
        self.sockets: dict[tuple[tuple[str, str], ...], Path | None] = {}
        self.processes: list[subprocess.Popen] = []
        self.folders: list[Path] = []
        self.owner = os.getpid()
        self.lock = threading.Lock()

    def socket_for(self, env: Mapping[str, str]) -> Path | None:
        """The socket of a server for clients with `env`, started if there is none yet."""
        key = tuple(sorted(startup_env(env).items()))
        with self.lock:
            if key not in self.sockets:
                self.sockets[key] = self.start(env)
            return self.sockets[key]

    def start(self, env: Mapping[str, str]) -> Path | None:
        folder = Path(tempfile.mkdtemp(prefix="linnet-fork-"))
        self.folders.append(folder)
        path = folder / "socket"
        with open(folder / "server.log", "wb") as log:
            server = subprocess.Popen(
                [sys.executable, "-m", "linnet.testing.fork_server", str(path)], cwd=folder,
                env=server_env(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=log, start_new_session=True)
        self.processes.append(server)
        if _first_line(server, READY_S) == b"ready\n":
            return path
        server.kill()
        return None

    def stop(self) -> None:
        """End every server this process started, and remove their folders."""
        if os.getpid() != self.owner:  # a forked copy of the test process
            return
        for server in self.processes:
            server.terminate()
        for server in self.processes:
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)
        self.processes.clear()
        self.sockets.clear()


def server_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with PYTHONPATH's relative entries made absolute against this process's working
    directory (the server runs in a folder of its own)."""
    out = dict(env)
    entries = [e for e in env.get("PYTHONPATH", "").split(os.pathsep) if e]
    if entries:
        out["PYTHONPATH"] = os.pathsep.join(os.path.abspath(e) for e in entries)
    return out


def _first_line(server: subprocess.Popen, timeout: float) -> bytes:
    """The server's first line of output, or b"" if none comes in `timeout` seconds."""
    with selectors.DefaultSelector() as selector:
        selector.register(server.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            return b""
    return server.stdout.readline()


SERVERS = ForkServers()
atexit.register(SERVERS.stop)


def python_command(env: Mapping[str, str] | None = None) -> list[str]:
    """The argv prefix that runs `python ARGS` (`-m linnet ...` or `-c CODE ...`) in an
    environment `env` (default: this process's) as this interpreter would: through a fork
    server when one runs for `env`, else this interpreter itself."""
    env = os.environ if env is None else env
    socket = None if os.environ.get(SWITCH) == "0" else SERVERS.socket_for(env)
    if socket is None:
        return [sys.executable]
    return [sys.executable, "-I", "-S", str(CLIENT), str(socket)]
