"""What an item's body sees before a checker exists for it: a frame of the item's
generics and `where` facts, and the names no local may take.

Apart from `items.py` because the parts of the body checker (statements, values) need
these too, and `items.py` builds on the assembled checker: kept here, they import
downwards only.
"""

from __future__ import annotations

from ..diagnostics import DiagnosticBag
from .dims import Facts
from .pack_products import size_symbols
from .scope import CALLABLE_BUILTINS, KERNEL_BUILTINS, PRELUDE, Frame, Globals
from .signatures import Signature

RESERVED_CALLS = PRELUDE | KERNEL_BUILTINS | {"store", "atomic_add", "atomic_max", "atomic_min"}


def generics_frame(item, globals_: Globals, signatures: dict[str, Signature]) -> Frame:
    """A frame with the item's generics (and, once its signature exists, its `where`
    facts)."""
    generics = {g.name: g for g in getattr(item, "generics", ())}
    frame = Frame(globals_, generics, Facts(size_symbols(generics.values())))
    sig = signatures.get(getattr(item, "name", ""))
    if sig is not None and sig.item is item:
        frame.facts = frame.facts.assume_all((l, op, r) for l, op, r, _ in sig.where)
    return frame


def check_name_is_free(name: str, span, bag: DiagnosticBag) -> None:
    if name in RESERVED_CALLS:
        bag.error("E1207", f"`{name}` is a prelude name", span, "redeclared",
                  help="choose another name")


def check_local_name(name: str, span, bag: DiagnosticBag, what: str = "a local") -> bool:
    """A local, parameter or generic may not take a builtin's name (E1207): it would hide
    the builtin from the calls in its scope. True when the name is free."""
    if name not in CALLABLE_BUILTINS:
        return True
    bag.error("E1207", f"`{name}` is a prelude name and cannot name {what}", span,
              "redeclared", help=f"choose another name, such as `{name}_`")
    return False
