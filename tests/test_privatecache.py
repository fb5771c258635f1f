"""The caches kept between runs are private and never trusted: parser tables and modules.

Parser tables live as JSON (never pickle) in a 0700 per-user folder, not in the shared
temporary directory; generated modules are executed from the source the compiler made,
never from a `.pyc` or from what the cache file holds; a damaged, foreign or missing
cache costs only time.
"""

from __future__ import annotations

import importlib._bootstrap_external as bootstrap
import inspect
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from linnet import privatecache
from linnet.syntax import parser, tables
from linnet.testing.child_env import child_env
from linnet.torch import runtime
from linnet.torch.runtime import import_generated

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = "module m\nfn f(x: f32) -> f32 {\n    return x * 2.0 + 1.0\n}\n"
PARSE = ("import sys\nfrom linnet.syntax.parser import parse\n"
         f"module, diags = parse({PROGRAM!r}, 'm.linnet')\n"
         "assert module is not None and not diags, diags\nprint('parsed')\n")


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = child_env(ROOT, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=full, timeout=120)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# ------------------------------------------------------------------ parser tables

class _Payload:
    """Unpickling this creates the marker file: proof that a planted pickle ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def test_a_pickle_planted_in_the_temporary_directory_never_runs(tmp_path):
    shared, marker = tmp_path / "shared-tmp", tmp_path / "PWNED"
    shared.mkdir()
    env = {"TMPDIR": str(shared), "LINNET_CACHE": str(tmp_path / "cache")}
    assert _run(PARSE, env).stdout == "parsed\n"
    import pickle
    for planted in shared.iterdir():  # whatever a parser cache left where others can write
        planted.write_bytes(b"x\n" + pickle.dumps(_Payload(marker)))
    assert _run(PARSE, env).stdout == "parsed\n"
    assert not marker.exists()
    assert list(shared.iterdir()) == []  # nothing is kept in the shared folder at all


def test_tables_are_json_in_a_private_folder(tmp_path):
    env = {"LINNET_CACHE": str(tmp_path / "cache")}
    assert _run(PARSE, env).stdout == "parsed\n"
    folder = tmp_path / "cache" / "parser"
    assert _mode(folder) == 0o700
    (file,) = folder.iterdir()
    assert file.name.startswith("tables-") and file.suffix == ".json"
    assert _mode(file) == 0o600
    assert set(json.loads(file.read_text())) == {"dict"}
    # the second run reads them (a broken file would be replaced by the same bytes)
    before = file.stat().st_mtime_ns
    assert _run(PARSE, env).stdout == "parsed\n"
    assert file.stat().st_mtime_ns == before


@pytest.mark.parametrize("damage", ["truncated", "garbage", "wrong tag", "empty"])
def test_damaged_tables_are_rebuilt_and_rewritten(tmp_path, damage):
    env = {"LINNET_CACHE": str(tmp_path / "cache")}
    assert _run(PARSE, env).returncode == 0
    (file,) = (tmp_path / "cache" / "parser").iterdir()
    good = file.read_bytes()
    broken = {"truncated": good[: len(good) // 2], "garbage": b"\x80\x04not json",
              "wrong tag": b'{"eval": "__import__(\'os\')"}', "empty": b""}[damage]
    file.write_bytes(broken)
    result = _run(PARSE, env)
    assert result.stdout == "parsed\n", result.stderr
    rewritten = file.read_text()  # whole tables again (their order varies from run to run)
    assert rewritten.encode() != broken and len(rewritten) > len(good) // 2
    tables.parser_from_tables(rewritten, {"linnet-token-list": parser._TokenList}, parser._Build())


def test_a_named_pipe_at_the_tables_path_is_not_waited_on(tmp_path):
    """A FIFO where the tables live made every command hang (opening it waits for a
    writer): only regular files are opened, and the tables are built and put in its place."""
    env = {"LINNET_CACHE": str(tmp_path / "cache")}
    assert _run(PARSE, env).returncode == 0
    (file,) = (tmp_path / "cache" / "parser").iterdir()
    file.unlink()
    os.mkfifo(file, 0o600)
    result = _run(PARSE, env)  # timeout=120: a hang fails the test
    assert result.stdout == "parsed\n", result.stderr
    assert stat.S_ISREG(os.lstat(file).st_mode)


def test_tables_round_trip_through_json():
    grammar = (Path(parser.__file__).parent / "linnet.lark").read_text()
    built = parser._build_lark(grammar)
    classes = {"linnet-token-list": parser._TokenList}
    text = tables.dump_tables(built, classes)
    loaded = tables.parser_from_tables(text, classes, parser._Build())
    source = (ROOT / "examples" / "mlp.linnet").read_text()
    tokens = parser.tokenize(source, "mlp.linnet").tokens
    assert loaded.parse(list(tokens)) == built.parse(list(tokens))
    assert tables.dump_tables(loaded, classes) == text


def test_tables_name_depends_on_the_grammar():
    assert tables.tables_name("a") != tables.tables_name("b")
    assert tables.tables_name("a") == tables.tables_name("a")


def test_parsing_works_without_a_usable_cache(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {"LINNET_CACHE": str(blocker / "cache")}  # below a file: cannot be created
    result = _run(PARSE, env)
    assert result.stdout == "parsed\n", result.stderr


# ------------------------------------------------------------------ the private folder

def test_private_dir_is_made_0700_and_tightened(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path / "root"))
    folder = privatecache.private_dir("things")
    assert folder == tmp_path / "root" / "things" and _mode(folder) == 0o700
    os.chmod(folder, 0o777)  # as an older version (or umask) may have left it
    assert privatecache.private_dir("things") == folder and _mode(folder) == 0o700


def test_a_linked_folder_is_not_private(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path / "root"))
    real = tmp_path / "elsewhere"
    real.mkdir(mode=0o700)
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "things").symlink_to(real)
    assert privatecache.private_dir("things") is None


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give files to another user")
def test_files_and_folders_of_another_user_are_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path / "root"))
    folder = privatecache.private_dir("things")
    file = folder / "data"
    assert privatecache.write_private(file, b"ours")
    assert privatecache.read_private(file) == b"ours"
    os.chown(file, 65534, 65534)
    assert privatecache.read_private(file) is None
    os.chown(folder, 65534, 65534)
    assert privatecache.private_dir("things") is None
    assert not privatecache.write_private(folder / "more", b"x")


def test_files_others_may_write_are_not_read(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path / "root"))
    file = privatecache.private_dir("things") / "data"
    assert privatecache.write_private(file, b"ours") and _mode(file) == 0o600
    os.chmod(file, 0o666)
    assert privatecache.read_private(file) is None
    os.chmod(file, 0o600)
    link = file.parent / "link"
    link.symlink_to(file)
    assert privatecache.read_private(link) is None


def test_default_root_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.delenv("LINNET_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert privatecache.cache_root() == tmp_path / "xdg" / "linnet"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert privatecache.cache_root() == tmp_path / "home" / ".cache" / "linnet"


# ------------------------------------------------------------------ generated modules

MODULE = "def main(*inputs):\n    return (sum(inputs) + 1,)\n"


def _fresh_import(source: str, env: dict[str, str], folder: str = "torch") -> subprocess.CompletedProcess:
    code = ("import inspect\nfrom linnet.torch.runtime import import_generated\n"
            f"m = import_generated({source!r}, 'entry', {folder!r})\n"
            "print(m.main(1, 2)[0])\nprint(inspect.getsource(m.main).splitlines()[0])\n")
    return _run(code, env)


def _pyc_for(py: Path, code_text: str) -> Path:
    """A `.pyc` that CPython's source loader accepts for py (its mtime and size), holding
    code_text's code instead."""
    info = py.stat()
    code = compile(code_text, str(py), "exec")
    data = bootstrap._code_to_timestamp_pyc(code, int(info.st_mtime), info.st_size)
    pyc = Path(bootstrap.cache_from_source(str(py)))
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(bytes(data))
    return pyc


def _cached_file(env: dict[str, str], folder: str = "torch") -> Path:
    assert _fresh_import(MODULE, env, folder).stdout.splitlines()[0] == "4"
    (py,) = (Path(env["LINNET_CACHE"]) / folder).glob("*.py")
    return py


@pytest.mark.parametrize("folder", ["torch", "jax"])
def test_a_forged_pyc_is_never_run(tmp_path, folder):
    env = {"LINNET_CACHE": str(tmp_path / "cache")}
    py = _cached_file(env, folder)
    marker = tmp_path / "PWNED"
    _pyc_for(py, f"import os\nos.mkdir({str(marker)!r})\ndef main(*inputs):\n    return (666,)\n")
    result = _fresh_import(MODULE, env, folder)
    assert result.stdout.splitlines() == ["4", "def main(*inputs):"], result.stderr
    assert not marker.exists()


def test_a_truncated_pyc_does_not_break_later_loads(tmp_path):
    env = {"LINNET_CACHE": str(tmp_path / "cache")}
    py = _cached_file(env)
    pyc = _pyc_for(py, MODULE)
    pyc.write_bytes(pyc.read_bytes()[:20])  # a valid header, then half a code object
    for _ in range(2):
        result = _fresh_import(MODULE, env)
        assert result.stdout.splitlines() == ["4", "def main(*inputs):"], result.stderr


@pytest.mark.parametrize("damage", [b"", b"def main(*inputs):\n    return (666,)\n",
                                    MODULE.encode()[:15]])
def test_a_damaged_module_file_is_rewritten_and_not_run(tmp_path, damage):
    env = {"LINNET_CACHE": str(tmp_path / "cache")}
    py = _cached_file(env)
    py.write_bytes(damage)
    result = _fresh_import(MODULE, env)
    assert result.stdout.splitlines() == ["4", "def main(*inputs):"], result.stderr
    assert py.read_text() == MODULE


def test_modules_import_without_a_usable_cache_folder(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = _fresh_import(MODULE, {"LINNET_CACHE": str(blocker / "cache")})
    assert result.stdout.splitlines() == ["4", "def main(*inputs):"], result.stderr


def test_a_folder_that_is_not_private_is_not_written(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "torch").symlink_to(tmp_path)  # somewhere others could reach
    source = MODULE + "# not private\n"
    module = import_generated(source, "shared")
    assert module.main(1, 2) == (4,)
    assert getattr(module, "__file__", None) is None
    assert inspect.getsource(module.main).startswith("def main(*inputs):")
    assert not list(tmp_path.glob("*.py"))


def test_cached_modules_live_in_a_private_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path / "cache"))
    module = import_generated(MODULE + "# private\n", "private")
    path = Path(module.__file__)
    assert path.parent == tmp_path / "cache" / "torch" and _mode(path.parent) == 0o700
    assert _mode(path) == 0o600
    assert not (path.parent / "__pycache__").exists()
    assert runtime.source_path(MODULE + "# private\n", "private") == path
