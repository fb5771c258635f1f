"""The command line's boundary: input and output paths, stdin and stdout, directories,
missing optional packages and Ctrl-C are the user's business (exit 2 or 130), never an
internal compiler error (exit 3)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from linnet.cli.main import main
from linnet.testing.fork_servers import python_command

ROOT = Path(__file__).resolve().parents[2]
RELU = ROOT / "examples" / "relu.linnet"


def _wchan(pid: int, thread: int | None = None) -> str:
    """Where the kernel has the process (or one of its threads) asleep: `anon_pipe_read`
    on a pipe, `futex_wait_queue` on a lock; "" where /proc cannot tell."""
    path = f"/proc/{pid}/task/{thread}/wchan" if thread else f"/proc/{pid}/wchan"
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _main_thread_waits_on_another(pid: int) -> bool:
    """The main thread sleeps on a lock while the process has another thread: the
    command runs its work on a worker thread and waits for it."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    return len(threads) > 1 and "futex" in _wchan(pid, pid)


def wait_until(proc: subprocess.Popen, ready: Callable[[], bool], limit: float = 10.0) -> None:
    """Poll until `ready()`, the process ends, or `limit` seconds pass (where /proc says
    nothing, a fixed wait, as a sleep was before): a loaded machine may take seconds to
    start a process, and a quiet one need not wait for them."""
    deadline = time.monotonic() + limit
    while proc.poll() is None and not ready() and time.monotonic() < deadline:
        time.sleep(0.02)
SOFTMAX = ROOT / "examples" / "softmax.linnet"
BAD = "module m\n\nentry main(x: f32) -> f32 {\n    return x + true\n}\n"


def _run(*argv: str, stdin: str | None = None, env: dict | None = None,
         prelude: str = "") -> subprocess.CompletedProcess:
    """`python -m linnet ARGV` in a process of its own, from the worktree (optionally after
    `prelude`, Python run before the command line loads), through the fork server."""
    code = f"{prelude}\nimport runpy, sys\nsys.argv = ['linnet'] + {list(argv)!r}\n" \
           "runpy.run_module('linnet', run_name='__main__')"
    env = {**os.environ, **(env or {})}
    return subprocess.run([*python_command(env), "-c", code], input=stdin,
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


def test_output_in_a_missing_directory_is_a_mistake(tmp_path, capsys):
    out = tmp_path / "no" / "such" / "relu.py"
    assert main(["torch", str(RELU), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"directory {out.parent} does not exist" in err and "internal" not in err


def test_output_that_is_a_directory_is_a_mistake(tmp_path, capsys):
    assert main(["stablehlo", str(RELU), "-o", str(tmp_path)]) == 2
    assert "is a directory; name a file" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_output_in_a_read_only_directory_is_a_mistake(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert main(["torch", str(RELU), "-o", str(locked / "relu.py")]) == 2
        assert "cannot write there" in capsys.readouterr().err
    finally:
        locked.chmod(0o700)


def test_a_failed_write_is_a_mistake_not_a_crash(tmp_path, capsys, monkeypatch):
    def refuse(self, data):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(Path, "write_bytes", refuse)
    assert main(["torch", str(RELU), "-o", str(tmp_path / "relu.py")]) == 2
    err = capsys.readouterr().err
    assert "cannot write: Permission denied" in err and "internal" not in err


def test_output_never_overwrites_the_input(tmp_path, capsys):
    source = tmp_path / "relu.linnet"
    source.write_text(RELU.read_text())
    for target in ("torch", "jax", "onnx", "stablehlo"):
        assert main([target, str(source), "-o", str(source)]) == 2
        assert "is the input file" in capsys.readouterr().err
    (tmp_path / "link.linnet").symlink_to(source)  # the same file by another name
    assert main(["torch", str(source), "-o", str(tmp_path / "link.linnet")]) == 2
    assert source.read_text() == RELU.read_text()


def test_output_is_written(tmp_path):
    out = tmp_path / "relu.py"
    assert main(["torch", str(RELU), "-o", str(out)]) == 0
    assert "def main(*inputs):" in out.read_text()


def test_a_directory_as_the_program_is_a_mistake(capsys):
    assert main(["torch", str(ROOT / "examples")]) == 2
    err = capsys.readouterr().err
    assert "is a directory; give one .linnet file" in err and "linnet check" in err


def test_check_a_directory_checks_every_file_under_it(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.linnet").write_text(RELU.read_text())
    (tmp_path / "sub" / "b.linnet").write_text(BAD)
    (tmp_path / "notes.txt").write_text("not a program")
    assert main(["check", "--json", str(tmp_path)]) == 1
    import json
    (d,) = json.loads(capsys.readouterr().out)
    assert (d["code"], d["file"]) == ("E2103", str(tmp_path / "sub" / "b.linnet"))
    assert main(["check", str(ROOT / "examples")]) == 0
    count = len(list((ROOT / "examples").rglob("*.linnet")))  # examples/gpt too
    assert capsys.readouterr().out.strip() == f"ok: {count} files checked"


def test_check_an_empty_directory_is_a_mistake(tmp_path, capsys):
    assert main(["check", str(tmp_path)]) == 2
    assert f"no .linnet files under {tmp_path}" in capsys.readouterr().err


def test_missing_file_is_a_mistake(capsys):
    for argv in (["check", "nope.linnet"], ["torch", "nope.linnet"],
                 ["verify", "nope.linnet"], ["compile", "nope.linnet"]):
        assert main(argv) == 2
        assert "no such file: nope.linnet" in capsys.readouterr().err


def test_stdin_as_the_program(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RELU.read_bytes())))
    assert main(["torch", "-", "-o", "-"]) == 0
    assert "def main(*inputs):" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BAD.encode())))
    assert main(["check", "-"]) == 1
    err = capsys.readouterr().err
    assert "--> <stdin>:4:12" in err and "return x + true" in err


def test_stdin_and_stdout_in_a_fresh_process():
    done = _run("stablehlo", "-", "-o", "-", stdin=RELU.read_text())
    assert done.returncode == 0 and "func.func public @main" in done.stdout
    done = _run("jax", "-", stdin=BAD)
    assert done.returncode == 1 and "<stdin>:4:12" in done.stderr


def test_onnx_binary_model_to_stdout():
    done = subprocess.run([*python_command(), "-m", "linnet", "onnx", str(RELU), "-o", "-"],
                          capture_output=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0
    import onnx
    model = onnx.load_from_string(done.stdout)
    assert model.graph.output


@pytest.mark.parametrize("argv,module,extra", [
    (["onnx", str(RELU)], "onnx", "onnx"),
    (["verify", str(SOFTMAX)], "torch", "torch"),
    (["verify", str(SOFTMAX), "--target", "jax"], "jax", "jax"),
])
def test_a_missing_optional_package_names_its_extra(argv, module, extra):
    done = _run(*argv, prelude=f"import sys; sys.modules[{module!r}] = None")
    assert done.returncode == 2, done.stderr
    assert f"pip install 'linnet[{extra}]'" in done.stderr
    assert "internal compiler error" not in done.stderr and "Traceback" not in done.stderr


def interruptible() -> None:
    """Ctrl-C as a terminal's shell leaves it: a suite started in the background (`make test
    &` from a script) passes its children SIGINT ignored, and a Python started so never
    raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_exits_130_without_a_traceback():
    """Interrupted while it waits for a program on standard input (a real `python -m
    linnet`, as the next test and the interpreter's own start and exit have it)."""
    proc = subprocess.Popen([sys.executable, "-m", "linnet", "check", "-"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    wait_until(proc, lambda: "pipe_read" in _wchan(proc.pid))  # loaded, reads its input
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "linnet: interrupted"


def test_ctrl_c_during_a_command_in_process(monkeypatch, capsys):
    import linnet.check.frontend as frontend

    def interrupt(path, text=None):
        raise KeyboardInterrupt
    monkeypatch.setattr(frontend, "check_program", interrupt)
    assert main(["check", str(RELU)]) == 130
    assert capsys.readouterr().err.strip() == "linnet: interrupted"


def test_real_bugs_still_exit_3(monkeypatch, capsys):
    import linnet.pipeline as pipeline

    def crash(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'linnet.nowhere'", name="linnet.nowhere")
    monkeypatch.setattr(pipeline, "compile_source", crash)
    assert main(["torch", str(RELU)]) == 3
    assert "internal compiler error: ModuleNotFoundError" in capsys.readouterr().err


def test_verify_takes_several_files(capsys):
    layer_norm = ROOT / "examples" / "layer_norm.linnet"
    assert main(["verify", str(RELU), str(layer_norm), "--examples", "1", "--no-grad",
                 "--max-dim", "4"]) == 0
    out = capsys.readouterr().out
    assert "relu" in out and "layer_norm" in out


def test_dump_dir_that_cannot_be_made_is_a_mistake(tmp_path, capsys):
    afile = tmp_path / "plain.txt"
    afile.write_text("")
    assert main(["compile", str(RELU), "--dump-dir", str(afile)]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert main(["compile", str(RELU), "--dump-dir", str(afile / "sub")]) == 2
    assert "cannot make it" in capsys.readouterr().err
    made = tmp_path / "new" / "dumps"
    assert main(["compile", str(RELU), "--dump-dir", str(made), "--stop-after", "parse"]) == 0
    assert sorted(p.name for p in made.iterdir()) == ["01-parse.txt"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_reported(capsys):
    assert main(["torch", str(RELU), "-o", "/dev/full"]) == 2
    assert "cannot write: No space left on device" in capsys.readouterr().err


def test_ctrl_c_during_a_long_check_ends_at_once(tmp_path):
    """Interrupted while the checker runs on its worker thread: the process ends at once,
    with status 130, rather than wait for the check to finish."""
    items = "".join(f"fn f{k}(x: f32) -> f32 {{\n    return x * 2.0 + 1.0\n}}\n\n"
                    for k in range(40_000))
    big = tmp_path / "big.linnet"
    big.write_text("module big\n\n" + items)
    proc = subprocess.Popen([sys.executable, "-m", "linnet", "check", str(big)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    wait_until(proc, lambda: _main_thread_waits_on_another(proc.pid), limit=4.0)
    assert proc.poll() is None, "the check ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    start = time.perf_counter()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "linnet: interrupted"
    assert time.perf_counter() - start < 10


# ------------------------------------------------- control characters in one-line errors

ESC = "\x1b[31m"


@pytest.mark.parametrize("argv", [
    ["torch", str(RELU), "--bind", f"N{ESC}=3"],                         # --bind
    ["torch", str(RELU), "--entry", f"ma{ESC}in"],                       # --entry
    ["torch", str(RELU), "--tuning", f"/no/such{ESC}.json"],             # --tuning
    ["torch", str(RELU), "--entry", "main", "-o", f"/no/such{ESC}/x.py"],  # -o
    ["torch", f"/no/such{ESC}.linnet"],                                  # no such file
    ["check", f"/no/such\n{ESC}.linnet"],
])
def test_one_line_errors_escape_control_characters(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b[31m" in err
    assert err.count("\n") == 1, err  # one line: a newline in a name is escaped too


def test_argparse_errors_escape_control_characters(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["torch", str(RELU), f"--bogus{ESC}"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "unrecognized arguments: --bogus\\x1b[31m" in err
