"""A table of results kept in memory, the least recently used forgotten past a size: the
store behind the analysis memo (`analysis_memo.py`) and the compile memo
(`passes/compile_memo.py`), safe to use from several threads."""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from typing import Generic, Hashable, TypeVar

V = TypeVar("V")


class LruMemo(Generic[V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._table: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = Lock()

    def get(self, key: Hashable) -> V | None:
        """What is kept under key (now the most recently used), or None."""
        with self._lock:
            hit = self._table.get(key)
            if hit is not None:
                self._table.move_to_end(key)
            return hit

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._table[key] = value
            while len(self._table) > self.size:
                self._table.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._table.clear()
