"""Misspelled keywords: `retrun x`, `entyr f(...)`, caught where they fail to parse.

A word the lexer does not know as a keyword is a NAME, so a slip of the keyboard surfaces
as a parse error somewhere near it, and lark lists every kind of token it wanted there.
When the unexpected word, or the name that starts the statement the error is in, is close
to a keyword the parser would have taken, the diagnostic names that keyword instead.
"""

from __future__ import annotations

from typing import Sequence

from lark import Token

from ..diagnostics import Diagnostic, Span
from ..errors import closest
from .lexer import KEYWORDS

STATEMENT_WORDS = ("let", "var", "return", "for", "while", "yield", "static", "if")
"""The keywords that begin a statement in a body."""


def misspelled_keyword(tok: Token, tokens: Sequence[Token], expected: Sequence[str],
                       path: str) -> Diagnostic | None:
    """E1101 with "did you mean" for a keyword slip near the unexpected token, else None."""
    if tok.type == "NAME":
        wanted = [word for word, kind in KEYWORDS.items() if kind in expected]
        word = closest(tok.value, wanted)
        if word is not None:
            return _slip(tok, word, path)
    index = next((i for i, x in enumerate(tokens) if x.start_pos == tok.start_pos), None)
    if index is None or index < 2:
        return None
    head = tokens[index - 1]
    if head.type == "NAME" and _starts_statement(tokens, index - 1):
        word = closest(head.value, STATEMENT_WORDS)
        if word is not None:
            return _slip(head, word, path)
    return None


def _starts_statement(tokens: Sequence[Token], index: int) -> bool:
    return index > 0 and tokens[index - 1].type in ("NL", "LBRACE")


def _slip(tok: Token, word: str, path: str) -> Diagnostic:
    return Diagnostic("E1101", f"unexpected `{tok.value}`", Span(path, tok.start_pos, tok.end_pos),
                      "not a keyword", help=f"did you mean `{word}`?")
