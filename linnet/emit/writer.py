"""What every printer of function bodies shares: fresh names and indented lines."""

from __future__ import annotations


class CodeWriter:
    """Lines of Python being written, and a counter for the names they bind."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def fresh(self, prefix: str = "v") -> str:
        """A new name: `v0`, `v1`, ... (or with another prefix, from the same counter)."""
        self.count += 1
        return f"{prefix}{self.count - 1}"

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)
