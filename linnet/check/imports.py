"""What a module's `use` lines bring into its scope.

`use a.b` brings every `pub` item that module `a.b` declares itself, except where the
module has an item of that name already (its own item wins). `use a.b::{x, y}` brings
exactly `x` and `y`: a name the module does not declare, or does not make `pub`, is E1201
(a private item is brought in all the same, so that its uses add no second error), and a
listed name that something else in scope holds already is E1204.
"""

from __future__ import annotations

from typing import Protocol

from ..diagnostics import DiagnosticBag, Span
from ..syntax import tree as t
from .scope import Globals
from .signatures import Signature


class Exporter(Protocol):
    """A checked module, as its users see it (checker.Checked)."""
    globals: Globals
    signatures: dict[str, Signature]
    own: frozenset[str]


def import_used(module: t.Module, done: dict[tuple[str, ...], Exporter],
                links: dict[tuple[str, ...], tuple[str, ...]], globals_: Globals,
                signatures: dict[str, Signature], bag: DiagnosticBag) -> None:
    """Bring the items each `use` line asks for into globals_ and signatures. `links`
    maps a `use` path as written to the checked module it loaded; a module that failed
    to load (E1202 already) brings nothing."""
    for use in module.uses:
        used = done.get(links.get(use.path, use.path))
        if used is None:
            continue
        if use.names is None:
            for name in _exported(used):
                if name not in globals_.items:
                    _bring(name, used, globals_, signatures)
            continue
        for name, span in zip(use.names, use.name_spans):
            _bring_listed(name, span, use, used, globals_, signatures, bag)


def _exported(used: Exporter) -> list[str]:
    """The names a module offers its users: its own `pub` items, in declaration order."""
    return [name for name, item in used.globals.items.items()
            if item.public and name in used.own]


def _bring_listed(name: str, span: Span, use: t.Use, used: Exporter, globals_: Globals,
                  signatures: dict[str, Signature], bag: DiagnosticBag) -> None:
    module = ".".join(use.path)
    offered = _exported(used)
    if name not in used.own:
        bag.error("E1201", f"module `{module}` has no item `{name}`", span, "not in it",
                  help=_offers(module, offered))
        return
    item = used.globals.items[name]
    if not item.public:  # reported here, and brought in so that its uses say nothing more
        bag.error("E1201", f"`{name}` is private to module `{module}`", span, "not `pub`",
                  help=f"mark it `pub` in `{module}` to use it here; "
                       + _offers(module, offered))
    held = globals_.items.get(name)
    if held is item:
        return
    if held is not None:
        bag.error("E1204", f"`{name}` imported from `{module}` names another item here too",
                  span, "taken", help="rename one of them, or leave it out of the list")
        return
    _bring(name, used, globals_, signatures)


def _offers(module: str, offered: list[str]) -> str:
    if not offered:
        return f"`{module}` has no `pub` items"
    return f"`{module}` offers {', '.join(f'`{n}`' for n in offered)}"


def _bring(name: str, used: Exporter, globals_: Globals,
           signatures: dict[str, Signature]) -> None:
    """Make the used module's item `name` visible here, with what checking it found."""
    globals_.items[name] = used.globals.items[name]
    if name in used.signatures:
        signatures[name] = used.signatures[name]
    if name in used.globals.consts:
        globals_.consts[name] = used.globals.consts[name]
    if name in used.globals.blocks:
        globals_.blocks[name] = used.globals.blocks[name]
