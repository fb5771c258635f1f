"""What a pass learned about a block, remembered while the block lives.

IR nodes are immutable, and a pass that changes nothing in a block hands the same block
object on (`traverse.Rewriter`). So a fact about a block (its free variables; that `dce`
finds nothing dead in it) stays true for as long as that object lives, and a later pass
that asks again about the same object can read the answer instead of walking the block.
Keys are identities, not values: hashing a block by value walks it all.
"""

from __future__ import annotations

import weakref
from typing import Generic, TypeVar

from ..ir import tensor as ir

V = TypeVar("V")


class BlockMemo(Generic[V]):
    """A value per live block, by identity; an entry goes when its block is collected."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, V]] = {}

    def get(self, block: ir.Block) -> V | None:
        hit = self._entries.get(id(block))
        return hit[1] if hit is not None and hit[0]() is block else None

    def put(self, block: ir.Block, value: V) -> None:
        key, entries = id(block), self._entries

        def forget(ref: weakref.ref) -> None:
            if entries.get(key, (None,))[0] is ref:
                del entries[key]
        entries[key] = (weakref.ref(block, forget), value)
