"""Loading a program: the root file and every module it `use`s, parsed.

`use a.b` loads `a/b.linnet` beside the root file, `use crate.a.b` from the package's
source root and `use std.a.b` from the standard library (module_search.py says where).
Each file is parsed once; a module used twice (or in a cycle, or under two paths that name
the same file) is loaded once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Diagnostic, SourceFile, Span
from . import tree as t
from .module_search import BESIDE, Located, ModuleSearch, neighbours
from .parser import parse
from .printer import print_module


@dataclass
class Program:
    """The parsed modules of one program, the root first."""

    root: str
    modules: dict[tuple[str, ...], t.Module] = field(default_factory=dict)
    files: dict[tuple[str, ...], str] = field(default_factory=dict)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    links: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    """Each `use` path as written (`crate.a.b`, `std.nn.norm`) to the key in `modules` of
    the module it loaded."""

    def used(self, use: t.Use) -> tuple[str, ...]:
        """The key of the module a `use` line loaded (its path as written, when none)."""
        return self.links.get(use.path, use.path)

    def dependency_order(self) -> list[tuple[str, ...]]:
        """The modules' keys, each after every module it uses (depth first from the root;
        a cycle of `use` lines is cut where it closes). Load order is breadth first, so a
        module the root uses directly may be loaded before a module that uses it too:
        reversing load order is not enough."""
        order: list[tuple[str, ...]] = []
        seen: set[tuple[str, ...]] = set()

        def visit(key: tuple[str, ...]) -> None:
            if key in seen or key not in self.modules:
                return
            seen.add(key)
            for use in self.modules[key].uses:
                visit(self.used(use))
            order.append(key)

        for key in self.modules:
            visit(key)
        return order

    @property
    def root_module(self) -> t.Module | None:
        return next(iter(self.modules.values()), None)

    def __str__(self) -> str:
        """The surface trees printed back as source (`--dump-after=parse`)."""
        return "\n\n".join(print_module(m) for m in self.modules.values())


def load_program(path: str, text: str | None = None, std: Path | None = None) -> Program:
    """Parse the file at path (or the given text) and the modules it uses; `std` is the
    standard library's directory (by default $LINNET_STD, else the packaged one)."""
    program = Program(path)
    if text is None:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    search = ModuleSearch.of(path, std)
    pending: list[tuple[str, str, tuple[str, ...] | None]] = [(path, text, None)]
    loaded: dict[Path, tuple[str, ...] | None] = {}  # each file read, by its real path
    while pending:
        file, source, written = pending.pop(0)
        real = Path(file).resolve()
        if real not in loaded:
            loaded[real] = _parse_file(program, file, source)
            if loaded[real] is not None:
                pending.extend(_used_files(program, program.modules[loaded[real]], search))
        if written is not None and loaded[real] is not None:
            program.links.setdefault(written, loaded[real])
    return program


def _parse_file(program: Program, file: str, text: str) -> tuple[str, ...] | None:
    """Parse one file into the program; its key in `modules` (None after a syntax error)."""
    program.sources[file] = SourceFile.of(file, text)
    module, diagnostics = parse(text, file)
    program.diagnostics.extend(diagnostics)
    if module is None:
        return None
    key = module.path if module.path not in program.modules else (file,)
    program.modules[key] = module
    program.files[key] = file
    return key


def _used_files(program: Program, module: t.Module, search: ModuleSearch
                ) -> list[tuple[str, str, tuple[str, ...]]]:
    """The files the module's `use` lines name and no module loaded yet stands for."""
    found = []
    for use in module.uses:
        if use.path in program.links:
            continue
        located = search.locate(use.path)
        if located.root == BESIDE and use.path in program.modules:
            continue  # a loaded module declares that path; `std.` paths are never shadowed
        if not located.file.is_file():
            program.diagnostics.append(_missing(use, located))
            continue
        found.append((str(located.file),
                      located.file.read_text(encoding="utf-8", errors="replace"), use.path))
    return found


def _missing(use: t.Use, located: Located) -> Diagnostic:
    """E1202, naming where the module was looked for and what that folder holds."""
    where = f"expected a file at {located.file}"
    if located.root != BESIDE:
        where += f" ({located.root}: {located.directory})"
    there = neighbours(located.file)
    if there:
        where += f"; that folder holds {', '.join(there)}"
    return Diagnostic("E1202", f"module `{'.'.join(use.path)}` not found", use.span,
                      "no such module", help=where)
