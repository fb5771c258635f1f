"""The `linnet` command: one module per command (`main` builds the parser)."""

from .main import main

__all__ = ["main"]
