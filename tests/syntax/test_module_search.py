"""Where a `use` line's module is found (module_search.py) and how a program loads them
(program.py): beside the root file, from the package's source root, from the standard
library; each file once, whatever path names it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from linnet.syntax.module_search import (PACKAGED_STD, STD_ENV, ModuleSearch, source_root,
                                         std_directory, std_override)
from linnet.syntax.program import load_program


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _lib(name: str, item: str = "one") -> str:
    return f"module {name}\n\npub fn {item}(x: f32) -> f32 {{\n    return x\n}}\n"


def test_the_source_root_is_src_beside_the_nearest_package_file(tmp_path):
    (tmp_path / "linnet.toml").write_text("")
    deep = tmp_path / "src" / "app" / "cmd"
    deep.mkdir(parents=True)
    assert source_root(deep) == tmp_path.resolve() / "src"
    alone = tmp_path.parent / f"{tmp_path.name}-alone"
    alone.mkdir()
    assert source_root(alone) == alone


def test_each_root_resolves_its_paths(tmp_path):
    search = ModuleSearch(tmp_path / "here", tmp_path / "src", tmp_path / "std")
    assert search.locate(("a", "b")).file == tmp_path / "here" / "a" / "b.linnet"
    assert search.locate(("crate", "a", "b")).file == tmp_path / "src" / "a" / "b.linnet"
    located = search.locate(("std", "nn", "norm"))
    assert (located.file, located.root) == (tmp_path / "std" / "nn" / "norm.linnet",
                                            "the standard library")


def test_the_standard_library_is_packaged_unless_overridden(tmp_path, monkeypatch):
    monkeypatch.delenv(STD_ENV, raising=False)
    assert std_directory() == PACKAGED_STD and (PACKAGED_STD / "selftest.linnet").is_file()
    monkeypatch.setenv(STD_ENV, str(tmp_path))
    assert std_directory() == tmp_path
    with std_override(tmp_path / "other"):
        assert std_directory() == (tmp_path / "other").resolve()
    assert os.environ[STD_ENV] == str(tmp_path)  # restored


def test_std_override_of_none_changes_nothing(monkeypatch):
    monkeypatch.delenv(STD_ENV, raising=False)
    with std_override(None):
        assert STD_ENV not in os.environ
    assert STD_ENV not in os.environ


def test_a_program_loads_from_all_three_roots(tmp_path):
    _write(tmp_path / "linnet.toml", "")
    root = _write(tmp_path / "src" / "main.linnet",
                  "module main\nuse util\nuse crate.deep.tool::{two}\nuse std.core::{three}\n")
    _write(tmp_path / "src" / "util.linnet", _lib("util"))
    _write(tmp_path / "src" / "deep" / "tool.linnet", _lib("deep.tool", "two"))
    std = tmp_path / "library"
    _write(std / "core.linnet", _lib("std.core", "three"))
    program = load_program(str(root), std=std)
    assert program.diagnostics == []
    assert list(program.modules) == [("main",), ("util",), ("deep", "tool"), ("std", "core")]
    assert program.links == {("util",): ("util",), ("crate", "deep", "tool"): ("deep", "tool"),
                             ("std", "core"): ("std", "core")}


def test_one_file_named_two_ways_loads_once(tmp_path):
    _write(tmp_path / "linnet.toml", "")
    root = _write(tmp_path / "src" / "main.linnet", "module main\nuse lib\nuse crate.lib\n")
    _write(tmp_path / "src" / "lib.linnet", _lib("lib"))
    program = load_program(str(root))
    assert list(program.modules) == [("main",), ("lib",)]
    assert program.links == {("lib",): ("lib",), ("crate", "lib"): ("lib",)}


def test_a_module_is_known_by_the_path_its_use_names(tmp_path):
    """A file whose module line names another path is still what the `use` loaded."""
    root = _write(tmp_path / "main.linnet", "module main\nuse a.b::{one}\n")
    _write(tmp_path / "a" / "b.linnet", _lib("elsewhere"))
    program = load_program(str(root))
    assert program.links[("a", "b")] == ("elsewhere",)
    assert program.used(program.root_module.uses[0]) == ("elsewhere",)


@pytest.mark.parametrize("line, where", [
    ("use std.nn.gone", "the standard library"),
    ("use crate.gone", "expected a file at"),
])
def test_a_missing_module_says_where_it_looked_and_what_is_there(tmp_path, line, where):
    std = tmp_path / "library"
    _write(std / "nn" / "norm.linnet", _lib("std.nn.norm"))
    _write(std / "nn" / "softmax.linnet", _lib("std.nn.softmax"))
    root = _write(tmp_path / "main.linnet", f"module main\n{line}\n")
    [found] = load_program(str(root), std=std).diagnostics
    assert found.code == "E1202" and where in found.help
    if "std" in line:
        assert found.help.endswith("that folder holds norm, softmax")
        assert str(std / "nn" / "gone.linnet") in found.help


def test_a_module_of_ones_own_never_stands_in_for_std(tmp_path):
    """The root file declaring `module std.core` is not what `use std.core` loads."""
    std = tmp_path / "library"
    _write(std / "core.linnet", _lib("std.core", "three"))
    root = _write(tmp_path / "main.linnet", "module std.core\nuse std.core::{three}\n")
    program = load_program(str(root), std=std)
    assert program.diagnostics == [] and len(program.modules) == 2
    assert program.files[program.used(program.root_module.uses[0])] == str(std / "core.linnet")
