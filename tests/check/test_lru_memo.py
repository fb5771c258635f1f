"""`linnet.check.lru_memo.LruMemo`: what was put is got back; past its size the least
recently used entry is forgotten, a `get` counting as a use."""

from linnet.check.lru_memo import LruMemo


def test_the_least_recently_used_entry_is_forgotten() -> None:
    memo: LruMemo[str] = LruMemo(2)
    memo.put("a", "A")
    memo.put("b", "B")
    assert memo.get("a") == "A"  # now b is the least recently used
    memo.put("c", "C")
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == ("A", None, "C")
    memo.clear()
    assert memo.get("a") is None
