"""Analyses remembered by the parsed trees they checked.

A program is compiled many times over: once per binding of its generics, per numerics mode,
per target, and once more when a loader reads an entry's signature. Each compile parses it
(the parser keeps the tree of every text it has seen, `syntax.parser`) and checks it again,
and checking a program that uses `std` checks every std module it reaches, about a second
a compile. The check depends only on the modules' trees, so an analysis is remembered under
the identity of the trees it checked (with the files they came from and the `use` links
between them): a program whose text and used modules are unchanged gets the same trees from
the parser, and so the analysis already made. An edited file parses to a new tree, which
misses. The memo holds each analysis, and so its trees, which keeps their identities from
being reused while it is remembered.

Only analyses without diagnostics are kept: a program with errors is checked again, and its
diagnostics are new objects each time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ..syntax.program import Program
from .lru_memo import LruMemo

A = TypeVar("A")
SIZE = 32
_memo: LruMemo[object] = LruMemo(SIZE)


def program_key(program: Program) -> tuple:
    """The identity of what a check of `program` reads: each module's tree and file, and the
    links of its `use`s."""
    modules = tuple((key, id(module), program.files.get(key))
                    for key, module in program.modules.items())
    return program.root, modules, tuple(sorted(program.links.items()))


def remembered(program: Program, analyze: Callable[[Program], A],
               clean: Callable[[A], bool]) -> A:
    """`analyze(program)`, or the analysis of the same trees made before; a result that is
    `clean` (no diagnostics) is remembered, the least recently used forgotten past SIZE."""
    if program.diagnostics:
        return analyze(program)
    key = program_key(program)
    hit = _memo.get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    analysis = analyze(program)
    if clean(analysis):
        _memo.put(key, analysis)
    return analysis

