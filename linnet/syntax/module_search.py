"""Where the module of a `use` line is found.

    use a.b          a/b.linnet beside the root file (the file given to the compiler)
    use crate.a.b    a/b.linnet in the package's source root: the `src/` beside the nearest
                     `linnet.toml` at or above the root file's directory, else that directory
    use std.a.b      a/b.linnet in the standard library: the directory given explicitly
                     (`--std DIR`), else $LINNET_STD, else the library shipped in the
                     package (linnet/std)

The three roots are fixed once per program, from its root file, so a `use` line means the
same file in every module of the program (used modules included).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

STD_ENV = "LINNET_STD"
"""The environment variable naming a standard library directory to use instead of the
packaged one."""
PACKAGED_STD = Path(__file__).resolve().parent.parent / "std"
"""The standard library shipped inside the package (wheel included)."""
PACKAGE_FILE = "linnet.toml"
"""The file that marks a package's directory; its sources sit in `src/` beside it."""
BESIDE, CRATE, STD = "beside the root file", "the package's source root", "the standard library"
"""The three roots a `use` path is found from, as messages name them."""


def std_directory() -> Path:
    """The standard library in force: $LINNET_STD where set, else the packaged one."""
    chosen = os.environ.get(STD_ENV)
    return Path(chosen) if chosen else PACKAGED_STD


@contextmanager
def std_override(directory: str | os.PathLike | None) -> Iterator[None]:
    """Use `directory` as the standard library while the block runs (nothing changes for
    None). It is set as $LINNET_STD, so processes the command starts (the fuzzer's and the
    verifier's workers) find the same library, and restored afterwards, so a command run
    in-process leaves no trace."""
    if directory is None:
        yield
        return
    before = os.environ.get(STD_ENV)
    os.environ[STD_ENV] = str(Path(directory).resolve())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(STD_ENV, None)
        else:
            os.environ[STD_ENV] = before


def source_root(root_dir: Path) -> Path:
    """The package's source root for a root file in root_dir: `src/` beside the nearest
    `linnet.toml` at or above it, else root_dir itself."""
    for folder in (root_dir.resolve(), *root_dir.resolve().parents):
        if (folder / PACKAGE_FILE).is_file():
            return folder / "src"
    return root_dir


@dataclass(frozen=True)
class Located:
    """Where a `use` path points: the file, the directory it was looked for in, and what
    that directory is (for the message when the file is missing)."""
    file: Path
    directory: Path
    root: str  # BESIDE, CRATE or STD


@dataclass(frozen=True)
class ModuleSearch:
    """The three directories a program's `use` lines are resolved against."""
    beside: Path
    crate: Path
    std: Path

    @classmethod
    def of(cls, root_file: str, std: Path | None = None) -> "ModuleSearch":
        beside = Path(root_file).parent
        return cls(beside, source_root(beside), std if std is not None else std_directory())

    def locate(self, path: tuple[str, ...]) -> Located:
        """The file of a `use` path as written (`crate` or `std` first, or neither)."""
        head, rest = path[0], path[1:]
        if head == "std" and rest:
            return Located(self.std.joinpath(*rest).with_suffix(".linnet"), self.std, STD)
        if head == "crate" and rest:
            return Located(self.crate.joinpath(*rest).with_suffix(".linnet"), self.crate,
                           CRATE)
        return Located(self.beside.joinpath(*path).with_suffix(".linnet"), self.beside,
                       BESIDE)


def neighbours(file: Path, limit: int = 12) -> list[str]:
    """The modules in the folder where file was looked for (their last path component,
    sorted, at most `limit`), for a message that says what exists there."""
    folder = file.parent
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.linnet"))[:limit]
