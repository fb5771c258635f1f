"""Adjoints as values: what reverse mode accumulates per variable.

An adjoint ("ct") is an atom of exactly its value's type or, for a tuple value, a tuple
of adjoints with None where an item has none. `Adjoints` sums the contributions each
variable receives; the leaf helpers address the floating tensors inside tuple types
(the adjoints an If or a loop hands back for the tuple values it reads).
"""

from __future__ import annotations

from typing import Optional, Union

from ...ir import tensor as ir
from .emit import Emitter, is_float

Ct = Union[ir.Atom, tuple, None]
Path = tuple[int, ...]


# ------------------------------------------------------------ adjoints

def is_empty(ct: Ct) -> bool:
    return ct is None or (isinstance(ct, tuple) and all(is_empty(c) for c in ct))


class Adjoints:
    """The adjoints accumulated so far, per variable; contributions are summed."""

    def __init__(self, em: Emitter, active: set[ir.Var]) -> None:
        self.em = em
        self.active = active
        self.cts: dict[ir.Var, Ct] = {}

    def add(self, atom: ir.Atom, ct: Ct) -> None:
        """Add a contribution to an active variable's adjoint (others take none)."""
        if is_empty(ct) or not isinstance(atom, ir.Var) or atom not in self.active:
            return
        _check(atom.type, ct)
        self.cts[atom] = self.merge(self.cts.get(atom), ct)

    def merge(self, a: Ct, b: Ct) -> Ct:
        if is_empty(a):
            return b
        if is_empty(b):
            return a
        if isinstance(a, tuple):
            return tuple(self.merge(x, y) for x, y in zip(a, b))
        return self.em.add(a, b)

    def take(self, var: ir.Var) -> Ct:
        return self.cts.pop(var, None)

    def get(self, var: ir.Var) -> Ct:
        return self.cts.get(var)


def _check(ty: ir.Ty, ct: Ct) -> None:
    """An adjoint has exactly its value's type (a failed check is a bug of a rule)."""
    if isinstance(ct, tuple):
        if not isinstance(ty, ir.TupleTy) or len(ty.items) != len(ct):
            raise ValueError(f"differentiate: adjoint {ct} for a value of type {ty}")
        for t, c in zip(ty.items, ct):
            if c is not None:
                _check(t, c)
    elif ct.type != ty:
        raise ValueError(f"differentiate: adjoint of type {ct.type} for a value of type {ty}")


# --------------------------------------------------- tuple-typed adjoints

def leaf_paths(ty: ir.Ty, path: Path = ()) -> list[Path]:
    """The positions of the floating tensors inside a (possibly tuple) type."""
    if isinstance(ty, ir.TupleTy):
        return [p for k, t in enumerate(ty.items) for p in leaf_paths(t, path + (k,))]
    return [path] if is_float(ty) else []


def leaf_type(ty: ir.Ty, path: Path) -> ir.TType:
    for k in path:
        ty = ty.items[k]
    return ty


def leaf_of(ct: Ct, path: Path) -> Optional[ir.Atom]:
    for k in path:
        if ct is None:
            return None
        ct = ct[k]
    return ct


def with_leaf(ty: ir.Ty, path: Path, atom: ir.Atom) -> Ct:
    """The adjoint of a value of type ty that is `atom` at `path` and empty elsewhere."""
    if not path:
        return atom
    return tuple(with_leaf(t, path[1:], atom) if k == path[0] else None
                 for k, t in enumerate(ty.items))
