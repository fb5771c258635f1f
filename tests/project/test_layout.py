"""tests/ is laid out like linnet/: each pass of the pipeline is a module named after it, with
a test file named after the module in the mirrored folder (linnet/passes/middle/cse.py ->
tests/passes/middle/test_cse.py), and every folder of tests/ mirrors a package of linnet/,
holds a corpus, or is one of the few named for what cuts across packages."""

from __future__ import annotations

from pathlib import Path

from linnet.pipeline import BACK, FRONT, MIDDLE

ROOT = Path(__file__).resolve().parents[2]
LINNET = ROOT / "linnet"
TESTS = ROOT / "tests"

# the front end's three passes run from one module
FRONT_END = {"parse": "bind_generics", "check": "bind_generics", "bind-generics": "bind_generics"}
# folders of whole-program corpora, of what cuts across packages, and of shared helpers
CORPORA = {"spec", "equivalence", "golden", "bodies", "grad", "oracle"}
ACROSS = {"language", "runtimes", "project", "benchmarks", "helpers", "cases"}


def passes() -> list[str]:
    return [p.name for p in FRONT + MIDDLE + [p for target in BACK.values() for p in target]]


def pass_module(name: str) -> list[Path]:
    """The files that may implement the pass: linnet/passes/<stage>/<name>.py, a printer's
    linnet/emit/<target>.py."""
    if name in FRONT_END:
        return [LINNET / "passes" / "front" / f"{FRONT_END[name]}.py"]
    if name.startswith("emit-"):
        return [LINNET / "emit" / f"{name[len('emit-'):]}.py"]
    return sorted((LINNET / "passes").glob(f"*/{name.replace('-', '_')}.py"))


def mirrored(module: Path) -> Path:
    rel = module.relative_to(LINNET)
    return TESTS / rel.parent / f"test_{rel.name}"


def test_every_pass_is_one_module_named_after_it():
    found = {name: pass_module(name) for name in passes()}
    assert {name: files for name, files in found.items() if len(files) != 1} == {}


def test_every_pass_module_has_its_test_file():
    modules = {name: pass_module(name)[0] for name in passes()}
    missing = {name: str(mirrored(m).relative_to(ROOT)) for name, m in modules.items()
               if not mirrored(m).is_file()}
    assert missing == {}


def test_each_pass_test_file_tests_its_pass():
    """It imports the pass's module, or compiles through the pass and names it."""
    for name in passes():
        module = pass_module(name)[0]
        dotted = ".".join(module.relative_to(ROOT).with_suffix("").parts)
        text = mirrored(module).read_text()
        assert dotted in text or f'"{name}"' in text, (name, mirrored(module))


def test_every_folder_of_tests_mirrors_a_package_or_says_what_it_holds():
    packages = {p.parent.relative_to(LINNET).as_posix() for p in LINNET.rglob("__init__.py")}
    libraries = {p.relative_to(LINNET).parts[0] for p in LINNET.rglob("*.linnet")}  # std
    folders = {p.parent.relative_to(TESTS).as_posix() for p in TESTS.rglob("*.py")
               if "__pycache__" not in p.parts and p.parent != TESTS}
    strays = {f for f in folders if f.split("/")[0] not in CORPORA | ACROSS | libraries
              and f not in packages}
    assert strays == set()
    assert "unit" not in folders  # no flat folder of everything
