"""The package as people outside this repository get it: a wheel, installed elsewhere.

The wheel is built from this checkout (no build isolation, no dependencies: CI-speed),
installed into a scratch folder, and run from another scratch folder with that folder
first on the path, so nothing of the checkout can stand in for what the wheel lacks. It
must check and compile a program through its console script, and its demo must say that
the examples come with a source checkout rather than fail obscurely. Without egglog,
compiling a kernel warns on stderr.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = """module scale

pub fn double<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    let y[i] = x[i] * 2.0
    return y
}

entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    return double(x)
}
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """The wheel built and installed with `pip --target`; a scratch folder to run in."""
    base = tmp_path_factory.mktemp("wheel")
    source, wheels, site, work = base / "src", base / "dist", base / "site", base / "work"
    work.mkdir()
    # built from a copy: setuptools writes build/ and *.egg-info beside the sources, which
    # must not land in the checkout nor race with another test process building too
    source.mkdir()
    shutil.copytree(ROOT / "linnet", source / "linnet",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copyfile(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + ["wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels),
                          str(source)], check=True, capture_output=True, timeout=300)
    (wheel,) = wheels.glob("linnet-*.whl")
    subprocess.run(pip + ["install", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("LINNET_CACHE", None)
    return {"wheel": wheel, "site": site, "work": work, "env": env}


def run(installed: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=installed["work"], env=installed["env"],
                          capture_output=True, text=True, timeout=300)


def test_the_package_data_holds_every_standard_library_module() -> None:
    """pyproject's package data names linnet/std/**/*.linnet, which is every module of the
    library however deep (the wheel test below builds it to be sure)."""
    import tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["linnet"]
    assert "std/**/*.linnet" in patterns
    library = ROOT / "linnet" / "std"
    modules = {p for p in library.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert modules and modules == set((ROOT / "linnet").glob("std/**/*.linnet"))


def test_the_wheel_holds_the_grammar_and_the_license(installed) -> None:
    import zipfile
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    assert "linnet/syntax/linnet.lark" in names
    assert "linnet/std/selftest.linnet" in names
    assert any(n.endswith("licenses/LICENSE") for n in names)
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(installed["wheel"]).read(metadata).decode()
    assert "Requires-Dist: egglog" in text  # not optional: kernels need the e-graph
    for extra in ("torch", "jax", "onnx", "rules", "all"):
        assert f"Provides-Extra: {extra}" in text


def test_the_installed_console_script_checks_and_compiles(installed) -> None:
    (installed["work"] / "scale.linnet").write_text(PROGRAM)
    where = run(installed, sys.executable, "-c", "import linnet; print(linnet.__file__)")
    assert where.stdout.startswith(str(installed["site"])), where.stdout
    script = str(installed["site"] / "bin" / "linnet")
    checked = run(installed, script, "check", "scale.linnet")
    assert checked.returncode == 0, checked.stderr
    compiled = run(installed, script, "torch", "scale.linnet", "-o", "scale.py")
    assert compiled.returncode == 0, compiled.stderr
    assert "def main(" in (installed["work"] / "scale.py").read_text()


def test_the_installed_script_finds_the_packaged_standard_library(installed) -> None:
    (installed["work"] / "halves.linnet").write_text(
        "module halves\nuse std.selftest::{halve}\n\n"
        "entry main(x: Tensor[2, 6; f32]) -> Tensor[2, 3; f32] {\n    return halve(x)\n}\n")
    env = {k: v for k, v in installed["env"].items() if k != "LINNET_STD"}
    checked = subprocess.run([str(installed["site"] / "bin" / "linnet"), "check",
                              "halves.linnet"], cwd=installed["work"], env=env,
                             capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stderr


def test_the_installed_demo_says_where_its_examples_are(installed) -> None:
    done = run(installed, sys.executable, "-m", "linnet.demo")
    assert done.returncode == 2
    assert "source checkout" in done.stderr and "Traceback" not in done.stderr


HIDE_EGGLOG = """
import builtins, sys
real = builtins.__import__
def hidden(name, *args, **kwargs):
    if name == "egglog" or name.startswith("egglog."):
        raise ImportError("No module named 'egglog'")
    return real(name, *args, **kwargs)
builtins.__import__ = hidden
from linnet.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_compiling_a_kernel_without_egglog_warns_once(tmp_path) -> None:
    out = tmp_path / "softmax.py"
    env = dict(os.environ, LINNET_CACHE=str(tmp_path / "cache"))  # no e-graph results kept
    done = subprocess.run([sys.executable, "-c", HIDE_EGGLOG, "torch",
                           str(ROOT / "examples" / "softmax.linnet"), "--entry", "main",
                           "-o", str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("the e-graph passes cannot run") == 1, done.stderr
    assert "tl.dot" in done.stderr and "pip install 'linnet[rules]'" in done.stderr
