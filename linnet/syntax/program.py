"""Loading a program: the root file and every module it `use`s, parsed.

`use a.b` loads `a/b.linnet` beside the root file. Each file is parsed once;
a module used twice (or in a cycle) is loaded once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Diagnostic, SourceFile, Span
from . import tree as t
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

    @property
    def root_module(self) -> t.Module | None:
        return next(iter(self.modules.values()), None)

    def __str__(self) -> str:
        """The surface trees printed back as source (`--dump-after=parse`)."""
        return "\n\n".join(print_module(m) for m in self.modules.values())


def load_program(path: str, text: str | None = None) -> Program:
    """Parse the file at path (or the given text) and the modules it uses."""
    program = Program(path)
    if text is None:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    base = Path(path).parent
    pending: list[tuple[str, str, Span | None]] = [(path, text, None)]
    seen: set[str] = set()
    while pending:
        file, source, _ = pending.pop(0)
        if file in seen:
            continue
        seen.add(file)
        module = _parse_file(program, file, source)
        if module is not None:
            pending.extend(_used_files(program, module, base))
    return program


def _parse_file(program: Program, file: str, text: str) -> t.Module | None:
    program.sources[file] = SourceFile.of(file, text)
    module, diagnostics = parse(text, file)
    program.diagnostics.extend(diagnostics)
    if module is not None:
        key = module.path if module.path not in program.modules else (file,)
        program.modules[key] = module
        program.files[key] = file
    return module


def _used_files(program: Program, module: t.Module, base: Path) -> list[tuple[str, str, Span]]:
    found = []
    for use in module.uses:
        target = base.joinpath(*use.path).with_suffix(".linnet")
        if use.path in program.modules:
            continue
        if not target.is_file():
            program.diagnostics.append(Diagnostic(
                "E1202", f"module `{'.'.join(use.path)}` not found", use.span,
                "no such module", help=f"expected a file at {target}"))
            continue
        found.append((str(target), target.read_text(encoding="utf-8", errors="replace"),
                      use.span))
    return found
