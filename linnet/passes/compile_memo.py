"""Compilations remembered by what they read.

The same program is compiled again and again with the same options: a loader called from
several places with inputs of one shape, `linnet verify` and the tests compiling an entry
for every target and numerics mode, a model's entries sharing their ops. What a
compilation makes depends on the program's modules, its options and the compiler alone,
and what it returns (every stage's IR, the generated text) is immutable. So a compilation
that succeeded is remembered under the identity of the parsed trees it read (the parser
gives equal texts the same trees: `syntax.parser`; `check.analysis_memo.program_key`) and
the value of its options; the same request returns it again instead of running the passes.
An edited file parses to new trees and misses. An entry keeps the trees it was made from,
so their identities are not reused while it is remembered.

Not remembered: a compilation given its own list of passes or instrumentation (dumps,
timings, verification: the caller wants them run) or its own rule sets (a researcher's
rules change with every edit, and egglog's objects do not compare by value), one that
failed (its diagnostics are new objects each time), and a target whose result can be
changed by its caller (an ONNX model is a protobuf message).

What the key cannot see is the compiler's own code: a test that replaces a function of
the compiler (`monkeypatch`) calls `forget()` before and after (tests/conftest.py does it
for every test that takes `monkeypatch`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

from ..check.analysis_memo import program_key
from ..check.lru_memo import LruMemo
from ..syntax.program import load_program
from .manager import Options

R = TypeVar("R")
SIZE = 64
TEXT_TARGETS = frozenset({"torch", "jax"})  # targets whose result is a string
_memo: LruMemo[tuple[Any, Any]] = LruMemo(SIZE)  # (the program it read, the compilation)


def options_key(options: Options) -> tuple:
    """The options' value as a hashable tuple (bindings in name order)."""
    return tuple(tuple(sorted(v.items())) if isinstance(v, dict) else v
                 for v in (getattr(options, f.name) for f in fields(options)))


def request_key(path: str, text: str | None, options: Options) -> tuple[tuple, Any] | None:
    """The memo's key for compiling the program at path (or text) with options, and the
    loaded program it names; None when such a compilation is not remembered."""
    if options.target not in TEXT_TARGETS or options.rules is not None:
        return None
    try:
        program = load_program(path, text)
    except OSError:
        return None
    if program.diagnostics:
        return None
    return (program_key(program), options_key(options)), program


def remembered(key: tuple[tuple, Any] | None, compile: Callable[[], R]) -> R:
    """`compile()`, or what it returned before under key (None: not remembered); the
    least recently used entry is forgotten past SIZE."""
    if key is None:
        return compile()
    memo_key, program = key
    hit = _memo.get(memo_key)
    if hit is not None:
        return hit[1]
    result = compile()
    _memo.put(memo_key, (program, result))
    return result


def forget() -> None:
    """Forget every remembered compilation."""
    _memo.clear()
