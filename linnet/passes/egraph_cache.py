"""The e-graph passes' results kept between runs, so printing a module again needs no egglog.

Importing egglog and declaring the rule sets costs about a second, more than everything
else `linnet torch FILE` does. What `egraph-tiles` and `egraph-products` make of a program
depends only on the program (its IR, meta included), the numerics, the library's rule sets
and the code of the passes: so their result is kept in the private cache
(`linnet.privatecache`, folder `egraph/`), under a hash of all of those, and a later run
with the same input reads it back instead of importing egglog.

Not kept: results under edited rule sets (`rules=`, `--rules`: a researcher's rules
change with every edit), and what a pass returns when egglog cannot run (the warning must
be given again, and egglog may be installed later). A file that cannot be read or
unpickled is ignored; the pass then runs.

Nor a program of more than `LARGEST` bindings: hashing it and reading its result back costs
more than the import it saves (a `static for` of 10^5 trips: 4.5 s against a 0.3 s pass).
"""

from __future__ import annotations

import hashlib
import importlib
import io
import pickle
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any, Callable

from .. import privatecache
from ..ir.walk import all_binds

FOLDER = "egraph"
LARGEST = 10_000  # bindings: about 45 us each to key and read back, against a 1 s import
_PACKAGE = Path(__file__).resolve().parents[1]
# the code an e-graph pass's result depends on (the IR's definition, the passes, the rules)
_SOURCES = ("ir/*.py", "passes/egraph.py", "passes/egraph_products.py",
            "passes/egraph_run.py", "passes/egraph_translate.py", "passes/dce.py",
            "passes/traverse.py", "rules/*.py")


def cached_pass(module: str, function: str) -> Callable[[Any, Any], Any]:
    """The pass `module.function(program, options)`, its result kept in the cache."""
    def run(program: Any, options: Any) -> Any:
        key = _key(function, program, options)
        if key is not None:
            hit = _read(key)
            if hit is not None:
                return hit
        result = getattr(importlib.import_module(module), function)(program, options)
        if key is not None and _egglog_ran():
            _write(key, result)
        return result
    run.__name__ = function
    return run


def _key(function: str, program: Any, options: Any) -> str | None:
    """The hash naming this input's result; None when it must not be cached."""
    if getattr(options, "rules", None) is not None or _larger_than(program, LARGEST):
        return None
    try:
        ir_bytes = _canonical(program)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None
    h = hashlib.sha256(ir_bytes)
    h.update(f"\0{function}\0{getattr(options, 'numerics', None)}\0".encode())
    h.update(_fingerprint().encode())
    return h.hexdigest()


def _larger_than(program: Any, most: int) -> bool:
    """Has the program more than `most` bindings? (Counts no further than that.)"""
    binds = (b for f in getattr(program, "funcs", ()) for b in all_binds(f.body))
    return next(islice(binds, most, None), None) is not None


def _canonical(program: Any) -> bytes:
    """The program's value as bytes, the same for equal programs: a pickle without its memo.
    (With it, an object met twice is written once and referred to after: equal programs
    whose passes happened to share different objects would pickle differently.)"""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=4)
    pickler.fast = True
    pickler.dump(program)
    return buffer.getvalue()


@lru_cache(maxsize=1)
def _fingerprint() -> str:
    """The version of everything a result depends on besides its input."""
    from .. import __version__
    h = hashlib.sha256(__version__.encode())
    for pattern in _SOURCES:
        for path in sorted(_PACKAGE.glob(pattern)):
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    try:
        from importlib.metadata import version
        h.update(version("egglog").encode())
    except Exception:  # no egglog: nothing new is written anyway
        h.update(b"no egglog")
    return h.hexdigest()


def _egglog_ran() -> bool:
    from . import egraph_run
    return egraph_run.available()


def _path(key: str) -> Path | None:
    folder = privatecache.private_dir(FOLDER)
    return None if folder is None else folder / f"{key}.pickle"


def _read(key: str) -> Any | None:
    path = _path(key)
    data = None if path is None else privatecache.read_private(path)
    if data is None:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # a file from another version or a torn write: run the pass
        return None


def _write(key: str, result: Any) -> None:
    path = _path(key)
    if path is not None:
        try:
            privatecache.write_private(path, pickle.dumps(result, protocol=4))
        except (pickle.PicklingError, TypeError, AttributeError):
            pass
