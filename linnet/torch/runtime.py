"""The module cache: generated source is kept in a file and imported from what was generated.

`@triton.jit` reads a kernel's source through `inspect`, so a generated module needs a
file name whose lines `inspect` can find. The module is written to the private
per-user cache (`linnet.privatecache`: `$LINNET_CACHE`, else `$XDG_CACHE_HOME/linnet`,
else `~/.cache/linnet`, in a 0700 folder per target), named by a hash of the source.

What is executed is never read back from that folder: the module is compiled from the
source text the compiler just generated, with no `.pyc` written or read (so a forged
`__pycache__` entry is never run), and `linecache` is given that same text, so `inspect`
and Triton see exactly what runs, whatever the file now holds. The file is compared
with the source and rewritten when it differs (truncated, edited, forged), and a cache
folder that is missing, read-only or not private costs only the file: the module is
then imported under a name that is not a path, its lines still known to `linecache`.
The same source gives the same module object within a process.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.util
import linecache
import os
import re
import sys
import threading
from pathlib import Path
from types import ModuleType

from ..privatecache import cache_root, private_dir, read_private, write_private
from .triton_reduce import install as install_sliced_reduce

_LOCK = threading.Lock()
_MODULES: dict[str, ModuleType] = {}


def cache_dir() -> Path:
    """The cache root: `$LINNET_CACHE`, else `$XDG_CACHE_HOME/linnet`, else `~/.cache/linnet`.

    Created on first use if it can be; each target keeps its modules in a private
    folder below it (`torch/`, `jax/`)."""
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # no cache then: modules are imported from memory
    return root


def _safe(name: str) -> str:
    """A module-name fragment from any text: letters, digits and `_` only."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)[:40] or "module"
    return s if not s[0].isdigit() else "m" + s


def _file_name(source: str, name: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:24]
    return f"{_safe(name)}_{digest}.py"


def source_path(source: str, name: str, folder: str = "torch") -> Path:
    """Where `source` is cached: `<cache>/<folder>/<name>_<hash>.py` (the folder names the
    target: `torch` or `jax`)."""
    return cache_root() / folder / _file_name(source, name)


def _store(source: str, name: str, folder: str) -> str:
    """Keep source in its cache file if the folder is private; returns the file name to use.

    The file is rewritten unless it already holds exactly this source. Without a usable
    folder the name is `<linnet-generated:...>`, which no file can have."""
    where = private_dir(folder)
    if where is None:
        return f"<linnet-generated:{folder}/{_file_name(source, name)}>"
    path = where / _file_name(source, name)
    data = source.encode("utf-8")
    if read_private(path) != data:
        write_private(path, data)
    return str(path)


class _GeneratedLoader(importlib.abc.InspectLoader):
    """Executes the generated source it holds; never reads bytecode or the file back."""

    def __init__(self, source: str, filename: str) -> None:
        self.source, self.filename = source, filename

    def get_source(self, fullname: str) -> str:
        return self.source

    def get_code(self, fullname: str):
        return compile(self.source, self.filename, "exec", dont_inherit=True)

    def exec_module(self, module: ModuleType) -> None:
        exec(self.get_code(module.__name__), module.__dict__)


def _remember_lines(filename: str, source: str) -> None:
    """Give linecache the generated text for filename; a None mtime makes it never reread."""
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)


def import_generated(source: str, name: str, folder: str = "torch") -> ModuleType:
    """Import the generated `source` as a module, keeping a copy in its cache file.

    The same source gives the same module object within a process. `name` only makes the
    file and module names readable (it is reduced to `[A-Za-z0-9_]`). A PyTorch module
    imported under `TRITON_INTERPRET=1` first gets the interpreter's reductions folded a
    slice at a time (`triton_reduce`: the same bits, in a fraction of the time).
    """
    if folder == "torch" and os.environ.get("TRITON_INTERPRET") == "1":
        install_sliced_reduce()
    key = f"{folder}/{_file_name(source, name)}"
    with _LOCK:
        module = _MODULES.get(key)
        if module is not None:
            return module
        filename = _store(source, name, folder)
        mod_name = f"linnet_generated_{folder}_{Path(_file_name(source, name)).stem}"
        loader = _GeneratedLoader(source, filename)
        spec = importlib.util.spec_from_loader(mod_name, loader, origin=filename)
        assert spec is not None
        spec.has_location = filename.endswith(".py")  # sets __file__ when it is a real path
        module = importlib.util.module_from_spec(spec)
        _remember_lines(filename, source)
        sys.modules[mod_name] = module  # inspect.getsource (and so Triton) finds it there
        try:
            loader.exec_module(module)
        except BaseException:
            sys.modules.pop(mod_name, None)
            raise
        _MODULES[key] = module
        return module
