"""The client of the fork server: `python -I -S fork_client.py SOCKET -m linnet ARGS...` acts
as `python -m linnet ARGS...` would, in about the time an empty interpreter takes to start.

It sends the server (linnet/testing/fork_server.py) its command line, working directory and
environment, and passes it its standard input, output and error (the file descriptors
themselves, so output goes straight where this process's goes); a child of the server, which
has the compiler imported already, runs the command; the client ends as the child ended:
with its exit status, or killed by the same signal. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent
to the client go on to the child; if the client is killed outright, the server kills the
child. Where the server cannot run the command as a fresh interpreter would (no server, other
startup settings), the client becomes that fresh interpreter (`exec`), so a failure of the
server never changes what the caller sees.

The standard library only, and no package of this checkout: it runs under `-I -S`. The wire
format is here, and the server imports it:
- request: a 4-byte length and the descriptors 0, 1, 2 (one `sendmsg`), then that many bytes
  of JSON `{"argv": [...], "cwd": ..., "env": {...}}`;
- then lines of JSON both ways: the client's `{"signal": N}` (forward N); the server's one
  answer, `{"exit": STATUS}`, `{"signal": N}` (the child died of N) or `{"fallback": WHY}`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
from typing import Iterator

HEADER = struct.Struct(">I")
STANDARD_FDS = (0, 1, 2)
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
LOST = 70
"""The client's status when the server went away before it answered."""


def send_request(conn: socket.socket, argv: list[str], cwd: str, env: dict[str, str],
                 fds: tuple[int, ...]) -> None:
    body = json.dumps({"argv": argv, "cwd": cwd, "env": env}).encode()
    socket.send_fds(conn, [HEADER.pack(len(body))], list(fds))
    conn.sendall(body)


def receive_request(conn: socket.socket) -> tuple[dict, list[int]]:
    """A request and the descriptors that came with it (the caller closes them)."""
    head, fds, _flags, _address = socket.recv_fds(conn, HEADER.size, len(STANDARD_FDS))
    try:
        head += receive_exactly(conn, HEADER.size - len(head))
        return json.loads(receive_exactly(conn, HEADER.unpack(head)[0])), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def receive_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the connection closed in the middle of a request")
        data += chunk
    return data


def send_message(conn: socket.socket, **message: object) -> None:
    conn.sendall(json.dumps(message).encode() + b"\n")


def messages(conn: socket.socket) -> Iterator[dict]:
    """The JSON lines that arrive on `conn`, until it closes."""
    pending = b""
    while True:
        chunk = conn.recv(4096)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield json.loads(line)


def run_for_real(python_args: list[str]) -> None:
    """Become `python PYTHON_ARGS` itself: the same interpreter, started afresh."""
    os.execv(sys.executable, [sys.executable, *python_args])


def die_like(signum: int) -> None:
    """End as a process killed by `signum` ends."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


def connect(path: str) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        raise
    return conn


def forward_signals(conn: socket.socket) -> None:
    def forward(signum: int, _frame: object) -> None:
        try:
            send_message(conn, signal=signum)
        except OSError:
            pass
    for signum in FORWARDED:
        signal.signal(signum, forward)


def main(argv: list[str]) -> None:
    socket_path, python_args = argv[0], argv[1:]
    try:
        conn = connect(socket_path)
        send_request(conn, python_args, os.getcwd(), dict(os.environ), STANDARD_FDS)
    except OSError:  # no server, or a standard descriptor closed: a fresh interpreter
        run_for_real(python_args)
    forward_signals(conn)
    answer = next(messages(conn), None)
    if answer is None:
        print("fork server: the server went away before the command ended", file=sys.stderr)
        os._exit(LOST)
    if "fallback" in answer:
        run_for_real(python_args)
    if "signal" in answer:
        die_like(answer["signal"])
    os._exit(answer["exit"])


if __name__ == "__main__":
    main(sys.argv[1:])
