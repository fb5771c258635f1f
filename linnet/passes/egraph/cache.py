"""The e-graph passes' results kept between runs, so printing a module again needs no egglog.

Importing egglog and declaring the rule sets costs about a second, more than everything
else `linnet torch FILE` does. What `egraph-tiles` and `egraph-products` make of a program
depends only on the program (its IR and its state's records), the numerics (`Options`), egglog and the code the
pass runs: so their result is kept in the private cache (`linnet.privatecache`, folder
`egraph/`), named by a hash of the input, and a later run with the same input reads it back
instead of importing egglog.

An entry is a header line and the pickled result. The header holds the entry's key, a
hash of the result's bytes, and a hash of the source of every module of this package that
was loaded when the result was made (the pass's modules, the rules, the numerics policy
and whatever they import: the modules actually imported, not a list kept by hand). A read
trusts an entry only if all of these match: an entry copied over another's name, a torn
or corrupt file, or one made by code edited since, is ignored and the pass runs again.

Not kept: results under edited rule sets (`rules=`, `--rules`: a researcher's rules
change with every edit), and what a pass returns when egglog cannot run (the warning must
be given again, and egglog may be installed later).

Nor a program of more than `LARGEST` bindings: hashing it and reading its result back costs
more than the import it saves (a `static for` of 10^5 trips: 4.5 s against a 0.3 s pass).
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import pickle
import sys
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import Any, Callable

from ... import privatecache
from ...ir import tensor as ir
from ...ir.walk import all_binds
from ...version import __version__

FOLDER = "egraph"
LARGEST = 10_000  # bindings: about 45 us each to key and read back, against a 1 s import
_PACKAGE = Path(__file__).resolve().parents[2]
_PACKAGE_NAME = __name__.split(".")[0]
_FORMAT = "linnet-egraph-cache 2"


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
            _write(key, result, loaded_sources())
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
    h.update(_versions().encode())
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
def _versions() -> str:
    """The versions a result depends on besides its input and the package's source."""
    try:
        from importlib.metadata import version  # slow to import (email, zipfile, ...)
        egglog = version("egglog")
    except Exception:  # no egglog: nothing new is written anyway
        egglog = "no egglog"
    return f"{__version__}\0{egglog}"


def loaded_sources() -> dict[str, str]:
    """{path in the package: sha256 of its bytes} for every module of this package loaded
    now: after a pass ran, a superset of the code it ran. Only the modules named under the
    package are looked at: a test process has some 3,000 modules loaded (torch, Triton,
    JAX), and asking each for its file at every result written cost more than the pass."""
    out: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        if name != _PACKAGE_NAME and not name.startswith(_PACKAGE_NAME + "."):
            continue
        path = getattr(module, "__file__", None)
        if path and path.endswith(".py"):
            rel = _relative(path)
            if rel is not None:
                out[rel] = _source_hash(rel)
    return dict(sorted(out.items()))


@lru_cache(maxsize=None)
def _relative(path: str) -> str | None:
    """The module file's path in the package, or None outside it. Kept per path: resolving
    each of the ~1,500 modules a test process has loaded (torch, Triton, JAX) costs 60 ms,
    paid again at every result written."""
    try:
        return Path(path).resolve().relative_to(_PACKAGE).as_posix()
    except ValueError:
        return None


@lru_cache(maxsize=None)
def _source_hash(rel: str) -> str:
    """The hash of one source file of the package ("" when it cannot be read)."""
    try:
        return hashlib.sha256((_PACKAGE / rel).read_bytes()).hexdigest()
    except OSError:
        return ""


def _egglog_ran() -> bool:
    from . import run as egraph_run  # imports egglog: about a second
    return egraph_run.available()


def _path(key: str) -> Path | None:
    folder = privatecache.private_dir(FOLDER)
    return None if folder is None else folder / f"{key}.pickle"


def _read(key: str) -> Any | None:
    """The result kept under key, or None unless the entry proves it is that result, made
    by the code that runs now."""
    path = _path(key)
    data = None if path is None else privatecache.read_private(path)
    if data is None:
        return None
    head, _, payload = data.partition(b"\n")
    try:
        header = json.loads(head)
        ok = (isinstance(header, dict) and header.get("format") == _FORMAT
              and header.get("key") == key
              and header.get("result") == hashlib.sha256(payload).hexdigest()
              and _sources_unchanged(header.get("sources")))
        result = pickle.loads(payload) if ok else None
    except Exception:  # a file from another version or a torn write: run the pass
        return None
    return result if isinstance(result, ir.Program) else None


def _sources_unchanged(sources: Any) -> bool:
    return (isinstance(sources, dict) and bool(sources)
            and all(isinstance(rel, str) and _source_hash(rel) == digest
                    for rel, digest in sources.items()))


def _write(key: str, result: Any, sources: dict[str, str]) -> None:
    path = _path(key)
    if path is None:
        return
    try:
        payload = pickle.dumps(result, protocol=4)
    except (pickle.PicklingError, TypeError, AttributeError):
        return
    header = {"format": _FORMAT, "key": key, "result": hashlib.sha256(payload).hexdigest(),
              "sources": sources}
    privatecache.write_private(path, json.dumps(header).encode() + b"\n" + payload)
