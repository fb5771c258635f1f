"""Nested scopes whose lookups cost the same at any depth.

The checker, `elaborate` and `cse` each keep a stack of scopes, one per block, and look a
name (or an expression's key) up from the innermost outwards. Walking the stack costs its
depth: in an `else if` chain of n arms, nested n deep, n lookups cost n * n (and `cse`
hashed its key again at every level). Here each key also maps to the depths of the scopes
that hold it, so a lookup is one dict access, and leaving a scope costs its own size.
"""

from __future__ import annotations

from bisect import insort
from typing import Generic, Hashable, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ScopeStack(Generic[K, V]):
    """A stack of scopes (innermost last), each a mapping of keys to values."""

    def __init__(self) -> None:
        self._scopes: list[dict[K, V]] = [{}]
        self._depths: dict[K, list[int]] = {}  # key -> depths of the scopes holding it

    def lookup(self, key: K) -> V | None:
        """The value of key in the innermost scope holding it, or None."""
        depths = self._depths.get(key)
        return self._scopes[depths[-1]][key] if depths else None

    def define(self, key: K, value: V) -> None:
        """key in the innermost scope."""
        self.define_at(len(self._scopes) - 1, key, value)

    def define_beside(self, name: K, key: K, value: V) -> None:
        """key in the innermost scope that holds name (which must be in scope)."""
        self.define_at(self._depths[name][-1], key, value)

    def define_at(self, depth: int, key: K, value: V) -> None:
        scope = self._scopes[depth]
        if key not in scope:
            insort(self._depths.setdefault(key, []), depth)
        scope[key] = value

    def assign(self, key: K, value: V) -> bool:
        """Rebind key in the innermost scope holding it; False when none does."""
        depths = self._depths.get(key)
        if not depths:
            return False
        self._scopes[depths[-1]][key] = value
        return True

    def push(self) -> None:
        self._scopes.append({})

    def names(self) -> set[K]:
        """Every key of every scope."""
        return set(self._depths)

    def pop(self) -> None:
        for key in self._scopes.pop():  # the deepest: last in each of its keys' depths
            depths = self._depths[key]
            depths.pop()
            if not depths:
                del self._depths[key]
