"""The fork server runs `python -m linnet ...` and `python -c ...` as a fresh interpreter
would: the same exit status, output, standard input, working directory and environment,
tracebacks and signals; clients at once do not wait for each other; a client killed leaves
no child behind; and what it cannot run as a fresh process would, a fresh process runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from linnet.testing import fork_server, python_entry
from linnet.testing.fork_servers import CLIENT, SERVERS, ForkServers, python_command

ROOT = Path(__file__).resolve().parents[2]
RELU = ROOT / "examples" / "relu.linnet"
BAD = "module m\n\nentry main(x: f32) -> f32 {\n    return x + true\n}\n"
FORKED = "import sys; print('linnet.pipeline' in sys.modules)"  # True only in a child


def forked(*args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env or {})}
    command = python_command(env)
    assert command[1:3] == ["-I", "-S"], "no fork server started"
    return subprocess.run([*command, *args], env=env, capture_output=True, text=True,
                          cwd=kwargs.pop("cwd", ROOT), timeout=120, **kwargs)


def fresh(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, **kwargs)


def outcome(done: subprocess.CompletedProcess) -> tuple[int, str, str]:
    return done.returncode, done.stdout, done.stderr


# ----- as a fresh interpreter -------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("-m", "linnet", "check", str(RELU)),                                  # 0
    ("-m", "linnet", "check", "no/such.linnet"),                           # 2
    ("-c", "import sys; print('out'); sys.exit('a message')"),             # 1, printed
    ("-c", "import sys\nprint(sys.argv)\nraise RuntimeError('boom')", "x"),  # a traceback
], ids=["ok", "mistake", "exit-message", "traceback"])
def test_a_command_ends_as_in_a_fresh_process(args):
    assert outcome(forked(*args)) == outcome(fresh(*args))


def test_exit_statuses():
    assert forked("-m", "linnet", "check", "-", input=BAD).returncode == 1
    assert forked("-c", "import sys; sys.exit(300)").returncode == 300 % 256
    assert forked("-c", "raise SystemExit").returncode == 0
    assert forked("-c", FORKED).stdout == "True\n"


def test_an_internal_error_is_status_3():
    crash = ("import runpy, sys, linnet.pipeline as p\n"
             "def crash(*a, **k): raise RuntimeError('planted')\n"
             "p.compile_source = crash\n"
             "sys.argv = ['linnet', 'torch', sys.argv[1]]\n"
             "runpy.run_module('linnet', run_name='__main__')")
    done = forked("-c", crash, str(RELU))
    assert done.returncode == 3
    assert done.stderr == "linnet: internal compiler error: RuntimeError: planted\n"


def test_an_uncaught_ctrl_c_kills_with_sigint():
    done = forked("-c", "raise KeyboardInterrupt")
    assert done.returncode == -signal.SIGINT
    assert done.stderr.startswith("Traceback") and done.stderr.endswith("KeyboardInterrupt\n")


def test_standard_input_reaches_the_command():
    done = forked("-m", "linnet", "check", "-", input=BAD)
    assert "--> <stdin>:4:12" in done.stderr
    assert forked("-c", "import sys; print(sys.stdin.read()[::-1])", input="abc").stdout \
        == "cba\n"


def test_output_and_errors_to_one_pipe_keep_their_order():
    script = ("import sys\nprint('one')\nprint('two', file=sys.stderr)\nprint('three')\n"
              "sys.stdout.flush()\nprint('four', file=sys.stderr)")
    for unbuffered in ({}, {"PYTHONUNBUFFERED": "1"}):
        env = {**os.environ, **unbuffered}
        done = subprocess.run([*python_command(env), "-c", script], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        real = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert done.stdout == real.stdout
    assert done.stdout == "one\ntwo\nthree\nfour\n"  # unbuffered: as written


def test_the_working_directory_and_sys_path(tmp_path):
    show = "import os, sys; print(os.getcwd()); print(sys.path[0])"
    assert forked("-c", show, cwd=tmp_path).stdout == f"{tmp_path}\n\n"
    (tmp_path / "probe.py").write_text(show)
    assert forked("-m", "probe", cwd=tmp_path).stdout == f"{tmp_path}\n{tmp_path}\n"


def test_the_environment_is_the_clients_each_time():
    show = "import os; print(os.environ.get('LINNET_PROBE'), os.environ.get('HOME'))"
    assert forked("-c", show, env={"LINNET_PROBE": "set"}).stdout.split()[0] == "set"
    assert forked("-c", show).stdout.split()[0] == "None"
    env = {k: v for k, v in os.environ.items() if k != "LINNET_CACHE"}
    done = subprocess.run([*python_command(env), "-c", "import os; print('LINNET_CACHE' in "
                           "os.environ)"], env=env, capture_output=True, text=True)
    assert done.stdout == "False\n"


# ----- clients at once, clients gone ------------------------------------------------------

def test_two_clients_at_once():
    """The first waits for its input while the second runs to its end."""
    env = dict(os.environ)
    first = subprocess.Popen([*python_command(env), "-c", "import sys; print(sys.stdin.read())"],
                             env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    second = forked("-m", "linnet", "check", str(RELU))
    assert second.returncode == 0 and second.stdout == "ok: 1 file checked\n"
    assert first.poll() is None
    out, _ = first.communicate("first", timeout=60)
    assert (first.returncode, out) == (0, "first\n")


def test_a_killed_client_leaves_no_child(tmp_path):
    pid_file = tmp_path / "pid"
    script = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); " \
             "time.sleep(600)"
    env = dict(os.environ)
    client = subprocess.Popen([*python_command(env), "-c", script], env=env)
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    child = int(pid_file.read_text())
    client.kill()
    client.wait(10)
    while _alive(child):
        assert time.monotonic() < deadline + 10, "the child outlived its client"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_reaches_the_command():
    env = dict(os.environ)
    client = subprocess.Popen([*python_command(env), "-m", "linnet", "check", "-"], env=env,
                              stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)  # the child waits for its input
    client.send_signal(signal.SIGINT)
    _, err = client.communicate(timeout=60)
    assert client.returncode == 130 and err == "linnet: interrupted\n"


# ----- what a fresh process runs instead ---------------------------------------------------

def test_other_startup_settings_get_a_fresh_process():
    socket = python_command()[-1]
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    done = subprocess.run([sys.executable, "-I", "-S", str(CLIENT), socket, "-c", FORKED],
                          env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.stdout == "False\n"


def test_a_module_found_elsewhere_gets_a_fresh_process(tmp_path):
    (tmp_path / "lark.py").write_text("print('the local lark')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = forked("-c", "import lark; " + FORKED, cwd=tmp_path, env=env)
    assert done.stdout == "the local lark\nFalse\n"


def test_without_a_server_a_fresh_process(tmp_path):
    done = subprocess.run([sys.executable, "-I", "-S", str(CLIENT), str(tmp_path / "none"),
                           "-c", FORKED], capture_output=True, text=True, cwd=ROOT)
    assert (done.returncode, done.stdout) == (0, "False\n")


def test_a_server_that_cannot_start_is_none(tmp_path):
    servers = ForkServers()
    try:
        assert servers.socket_for({**os.environ, "PYTHONHOME": str(tmp_path)}) is None
        assert servers.processes[0].wait(10) != 0
    finally:
        servers.stop()
    assert not any(folder.exists() for folder in servers.folders)


def test_the_servers_of_this_process_are_its_own():
    assert all(server.poll() is None for server in SERVERS.processes)
    assert all(Path(p).exists() for p in SERVERS.sockets.values() if p)


# ----- the parts -----------------------------------------------------------------------------

def test_startup_settings_are_the_interpreters_and_the_caches():
    env = {"PYTHONPATH": "/x", "PYTHONHASHSEED": "1", "LC_ALL": "C", "LANG": "C", "HOME": "/h",
           "LINNET_CACHE": "/c", "LINNET_DEBUG": "1", "TRITON_INTERPRET": "1", "PATH": "/bin"}
    assert fork_server.startup_env(env) == {"PYTHONHASHSEED": "1", "LC_ALL": "C", "LANG": "C",
                                            "HOME": "/h", "LINNET_CACHE": "/c"}


def test_python_path_is_a_fresh_interpreters():
    env = {"PYTHONPATH": os.pathsep.join([".", "", "/abs", "rel/../lib"])}
    assert python_entry.python_path(["-m", "m"], "/w", env) == ["/w", "/w", "/abs", "/w/lib"]
    assert python_entry.python_path(["-c", "1"], "/w", {}) == [""]
    assert python_entry.python_path(["-c", "1"], "/w", {"PYTHONSAFEPATH": "1"}) == []


def test_exit_status_of_system_exit(capsys):
    assert [python_entry.exit_status(c) for c in (None, 0, 2, 256 + 3, True)] == [0, 0, 2, 3, 1]
    assert python_entry.exit_status("why") == 1 and capsys.readouterr().err == "why\n"
    assert python_entry.command_form(["-m", "linnet"]) is None
    assert python_entry.command_form(["script.py"]) is not None


def test_no_fork_where_a_module_read_the_environment(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", object())
    assert "jax" in fork_server.fork_hazard()
