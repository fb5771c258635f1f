"""The module cache: generated source is written to a file and imported from it.

Generated PyTorch is imported from a real file rather than `exec`-ed, because `@triton.jit`
reads a kernel's source from disk. The file lives in the cache directory (`$LINNET_CACHE`,
else `~/.cache/linnet`), named by a hash of the source, so the same source is written once
and imported once per process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

_LOCK = threading.Lock()
_MODULES: dict[str, ModuleType] = {}


def cache_dir() -> Path:
    """`$LINNET_CACHE`, or `~/.cache/linnet`; created on first use."""
    root = (os.environ.get("LINNET_CACHE")
            or os.path.join(os.path.expanduser("~"), ".cache", "linnet"))
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _safe(name: str) -> str:
    """A module-name fragment from any text: letters, digits and `_` only."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)[:40] or "module"
    return s if not s[0].isdigit() else "m" + s


def source_path(source: str, name: str, folder: str = "torch") -> Path:
    """Where `source` is cached: `<cache>/<folder>/<name>_<hash>.py` (the folder names the
    target: `torch` or `jax`)."""
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:24]
    return cache_dir() / folder / f"{_safe(name)}_{digest}.py"


def _write(path: Path, source: str) -> None:
    data = source.encode("utf-8")
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new one
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def import_generated(source: str, name: str, folder: str = "torch") -> ModuleType:
    """Write `source` to its cache file (if not there yet) and import the module from it.

    The same source gives the same module object within a process. `name` only makes the
    file and module names readable (it is reduced to `[A-Za-z0-9_]`).
    """
    path = source_path(source, name, folder)
    key = str(path)
    with _LOCK:
        module = _MODULES.get(key)
        if module is not None:
            return module
        _write(path, source)
        mod_name = f"linnet_generated_{path.stem}"
        spec = importlib.util.spec_from_file_location(mod_name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import generated module from {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module  # inspect.getsource (and so Triton) finds it there
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(mod_name, None)
            raise
        _MODULES[key] = module
        return module
