"""The parser's LALR tables, built once per user and kept as JSON, never as pickle.

Building the tables from `linnet.lark` takes a few tenths of a second, which
every command would pay. lark's own cache (`cache=True`) would save that, but
it unpickles a file with a predictable name in the shared temporary directory:
another local user could plant that file and run code as whoever runs linnet.

So the tables are serialized here to JSON, which can only ever decode to data,
and written to the private per-user cache (`linnet.privatecache`: a 0700
directory checked for ownership, files checked on their descriptor). The file
name carries a hash of the grammar, lark's version and Python's, so a changed
grammar or library never reads stale tables. Anything wrong with the file
(missing, foreign, truncated, from another format) means the tables are built
in memory again, and the cache rewritten if it can be.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Callable

import lark
from lark import Lark
from lark.grammar import Rule
from lark.lark import _LOAD_ALLOWED_OPTIONS as LOAD_OPTIONS
from lark.lexer import TerminalDef

from ..privatecache import private_dir, read_private, write_private

FOLDER = "parser"
FORMAT = 1  # bump when the JSON layout below changes


def tables_name(grammar: str) -> str:
    """The cache file's name: a digest of everything the tables depend on."""
    key = f"{FORMAT}\0{grammar}\0{lark.__version__}\0{sys.version_info[:2]}"
    return f"tables-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def load_parser(grammar: str, build: Callable[[], Lark], classes: dict[str, type],
                transformer: Any) -> Lark:
    """The parser for grammar: from the private cache if a good copy is there, else built.

    `build` makes the parser from the grammar; `classes` names the classes the
    serialized tables refer to (the custom lexer), which JSON cannot hold;
    `transformer` is attached to a parser loaded from the cache, as `build` does.
    """
    folder = private_dir(FOLDER)
    path = folder / tables_name(grammar) if folder is not None else None
    if path is not None:
        cached = _from_file(path, classes, transformer)
        if cached is not None:
            return cached
    parser = build()
    if path is not None:
        write_private(path, dump_tables(parser, classes).encode("utf-8"))
    return parser


def _from_file(path: Path, classes: dict[str, type], transformer: Any) -> Lark | None:
    data = read_private(path)
    if data is None:
        return None
    try:
        return parser_from_tables(data.decode("utf-8"), classes, transformer)
    except Exception:  # noqa: BLE001 - any damage to a cache file means: build afresh
        return None


def dump_tables(parser: Lark, classes: dict[str, type]) -> str:
    """The parser's tables as JSON text."""
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    # As lark's own `save`: options given again at load time (the transformer) stay out.
    data["options"] = {k: v for k, v in data["options"].items() if k not in LOAD_OPTIONS}
    names = {cls: name for name, cls in classes.items()}
    return json.dumps(_encode({"data": data, "memo": memo}, names), separators=(",", ":"))


def parser_from_tables(text: str, classes: dict[str, type], transformer: Any) -> Lark:
    """A parser from JSON tables written by `dump_tables`."""
    decoded = _decode(json.loads(text), classes)
    return Lark._load_from_dict(decoded["data"], decoded["memo"], transformer=transformer)


# The encoding is exact: every dict becomes {"dict": [[key, value], ...]} (lark's
# tables have integer keys), every tuple {"tuple": [...]}, and a class one of the
# given names {"class": name}; lists, strings, numbers, booleans and None stay.

def _encode(value: Any, names: dict[type, str]) -> Any:
    if isinstance(value, dict):
        return {"dict": [[_encode(k, names), _encode(v, names)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, names) for v in value]}
    if isinstance(value, list):
        return [_encode(v, names) for v in value]
    if isinstance(value, type):
        if value not in names:
            raise TypeError(f"the parser tables refer to an unnamed class {value!r}")
        return {"class": names[value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot store {type(value).__name__} in the parser tables")


def _decode(value: Any, classes: dict[str, type]) -> Any:
    if isinstance(value, list):
        return [_decode(v, classes) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, body), = value.items()
    if tag == "dict":
        return {_decode(k, classes): _decode(v, classes) for k, v in body}
    if tag == "tuple":
        return tuple(_decode(v, classes) for v in body)
    if tag == "class":
        return classes[body]
    raise ValueError(f"unknown tag {tag!r} in the parser tables")
