"""The lexer: characters to tokens, then the layout rules that make LALR enough.

Scanning is hand-written because block comments nest and because malformed
numbers and stray characters must become diagnostics, not exceptions. The
layout step then settles what a context-free grammar cannot:

* which newlines end a statement (none inside brackets, none at item level,
  none after an operator or before a closing brace);
* contextual words: `sum[` is a reduction, `grad(` after an op body, `grid(`
  in a kernel header, `store(` at the start of a statement;
* the generic-call rule: `name<...>(` opens generic arguments only when the
  matching `>` is directly followed by `(` and what lies between could be
  generic arguments, so `a < b && c > (d)` stays a comparison.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from lark import Token

from ..diagnostics import Diagnostic, Span, unify_newlines
from .habits import at_sign

KEYWORDS = {w: w.upper() for w in (
    "module use pub const fn op kernel entry let var return if else for in while static "
    "yield where true false type struct enum match none some "
    "block param buffer state sub").split()}
FUTURE = set("async await effect unsafe macro trait impl derive rng mut ref device".split())
"""Words reserved for the future: never a name (E1004), though nothing uses them yet."""
RESERVED = set("extern crate self super as".split()) | FUTURE
MODEL_WORDS = {"type", "struct", "enum", "match", "none", "some"}
"""Keywords of the model layer that earlier versions reserved: used as a name, still E1004."""
REDUCTIONS = {"sum", "prod", "max", "min", "any", "all"}
EFFECTS = {"store", "atomic_add", "atomic_max", "atomic_min"}
HEADER_WORDS = {"grid": "GRID", "warps": "WARPS", "stages": "STAGES"}

PUNCT = [  # longest first
    ("...", "ELLIPSIS"), ("..", "RANGE"), ("=>", "FATARROW"), ("?", "QMARK"), ("->", "ARROW"), ("||", "OROR"), ("&&", "ANDAND"), ("==", "EQ"),
    ("!=", "NE"), ("<=", "LE"), (">=", "GE"), ("<", "LT"), (">", "GT"), ("(", "LPAR"),
    (")", "RPAR"), ("[", "LSQB"), ("]", "RSQB"), ("{", "LBRACE"), ("}", "RBRACE"),
    (",", "COMMA"), (":", "COLON"), (";", "SEMI"), (".", "DOT"), ("=", "ASSIGN"),
    ("|", "BAR"), ("^", "CARET"), ("&", "AMP"), ("+", "PLUS"), ("-", "MINUS"),
    ("*", "STAR"), ("/", "SLASH"), ("%", "PERCENT"), ("!", "BANG"),
]
BINARY_OPS = {"OROR", "ANDAND", "EQ", "NE", "LE", "GE", "LT", "GT", "BAR", "CARET", "AMP",
              "PLUS", "MINUS", "STAR", "SLASH", "PERCENT"}
CONTINUE_AFTER = BINARY_OPS | {"COMMA", "ASSIGN", "ARROW", "LBRACE", "NL", "BANG", "COLON",
                               "RANGE", "IN", "FATARROW", "WHERE"}
CONTINUE_BEFORE = (BINARY_OPS - {"MINUS"}) | {"RBRACE", "LBRACE", "ELSE", "WHERE", "GRAD",
                                              "ARROW", "RANGE", "FATARROW"}
GENERIC_ARG_TOKENS = {"NAME", "INT", "PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "COMMA",
                      "LPAR", "RPAR", "LSQB", "RSQB", "FLOAT",
                      "RESERVED"}  # a reserved word where a name is meant: E1004 at the word
DECLARERS = {"FN", "OP", "KERNEL", "ENTRY", "TYPE", "STRUCT", "BLOCK"}
TYPE_FOLLOWS = {"RPAR", "COMMA", "LBRACE", "ASSIGN", "QMARK", "RSQB", "SEMI", "NL", "RBRACE",
                "NAME", "WHERE", None}
"""What may follow a generic type such as `KV<f32>` written after `:`, `->` or `type X =`."""
BLOCK_WORDS = {"BLOCK", "PARAM", "BUFFER", "STATE", "SUB"}
"""The keywords of blocks, reserved before blocks existed: where a name is expected they are
still E1004, as they were."""
HEADER_FOLLOWS = {"NAME", "RSQB", "RPAR"}  # a kernel's result type, or `grid(..)`, `warps(..)`
MAX_NESTING = 200

_NUMBER = re.compile(r"\d\w*(?:\.\d\w*)?(?:(?<=[eE])[+-]\d\w*)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VALID_INT = re.compile(r"0[xX][0-9a-fA-F]+(?:_[0-9a-fA-F]+)*|0[bB][01]+(?:_[01]+)*"
                        r"|(?:0|[1-9](?:_?\d)*)")
_VALID_FLOAT = re.compile(r"(?:0|[1-9](?:_?\d)*)(?:\.\d(?:_?\d)*)?(?:[eE][+-]?\d(?:_?\d)*)?")


@dataclass
class Lexed:
    tokens: list[Token]
    diagnostics: list[Diagnostic]


def tokenize(text: str, path: str) -> Lexed:
    """Scan and lay out one file (a lone `\r` ends a line, as `\n` and `\r\n` do)."""
    raw, diagnostics = _scan(unify_newlines(text), path)
    tokens = _layout(raw, path, diagnostics)
    return Lexed(tokens, diagnostics)


# ------------------------------------------------------------------- scanning

_SCANNER = re.compile(r"""
    (?P<NL>\n) | (?P<SPACE>[ \t\r]+) | (?P<LINE_COMMENT>//[^\n]*) | (?P<BLOCK_COMMENT>/\*)
  | (?P<NUMBER>\d\w*(?:\.\d\w*)?(?:(?<=[eE])[+-]\d\w*)?)
  | (?P<WORD>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<PUNCT>\.\.\.|\.\.|->|\|\||&&|==|=>|!=|<=|>=|[<>()\[\]{},:;.=|^&+\-*/%!?])
""", re.VERBOSE)
_PUNCT_KIND = dict(PUNCT)


def _scan(text: str, path: str) -> tuple[list[Token], list[Diagnostic]]:
    """One pass of a master regular expression; anything it cannot match is E1001."""
    tokens: list[Token] = []
    diagnostics: list[Diagnostic] = []
    pos, line, line_start, n = 0, 1, 0, len(text)
    while pos < n:
        m = _SCANNER.match(text, pos)
        if m is None:
            diagnostics.append(at_sign(text, pos, path) if text[pos] == "@" else Diagnostic(
                "E1001", f"invalid character {text[pos]!r}", Span(path, pos, pos + 1),
                "not part of the language", help="identifiers are ASCII letters, digits and `_`"))
            pos += 1
            continue
        kind, lexeme, end = m.lastgroup, m.group(), m.end()
        col = pos - line_start + 1
        if kind == "NL":
            if not tokens or tokens[-1].type != "NL":  # a run of blank or comment lines
                tokens.append(_token("NL", "\n", pos, end, line, col))  # is one newline
            line, line_start = line + 1, end
        elif kind == "BLOCK_COMMENT":
            end = _block_comment_end(text, pos)
            if end < 0:
                diagnostics.append(Diagnostic(
                    "E1002", "unclosed block comment", Span(path, pos, pos + 2),
                    "this comment is never closed",
                    help="close it with `*/` (block comments nest: each `/*` needs its own `*/`)"))
                end = n
            newlines = text.count("\n", pos, end)  # keep line numbers right
            if newlines:
                line, line_start = line + newlines, text.rfind("\n", pos, end) + 1
        elif kind == "NUMBER":
            tokens.append(_number_token(lexeme, pos, line, col, path, diagnostics))
        elif kind == "WORD":
            word_kind = KEYWORDS.get(lexeme) or ("RESERVED" if lexeme in RESERVED else "NAME")
            tokens.append(_token(word_kind, lexeme, pos, end, line, col))
        elif kind == "PUNCT":
            tokens.append(_token(_PUNCT_KIND[lexeme], lexeme, pos, end, line, col))
        pos = end
    return tokens, diagnostics


def _block_comment_end(text: str, pos: int) -> int:
    """Offset just past the `*/` closing the comment at pos, or -1 (comments nest)."""
    depth, k = 0, pos
    while k < len(text):
        if text.startswith("/*", k):
            depth, k = depth + 1, k + 2
        elif text.startswith("*/", k):
            depth, k = depth - 1, k + 2
            if depth == 0:
                return k
        else:
            k += 1
    return -1


def _number_token(lexeme: str, pos: int, line: int, col: int, path: str,
                  diagnostics: list[Diagnostic]) -> Token:
    is_float = ("." in lexeme or ("e" in lexeme.lower() and not lexeme.lower().startswith("0x")))
    valid = (_VALID_FLOAT if is_float else _VALID_INT).fullmatch(lexeme)
    if is_float and valid and "." not in lexeme and not re.search(r"[eE]", lexeme):
        valid = None
    if not valid:
        diagnostics.append(Diagnostic(
            "E1005", f"malformed number `{lexeme}`", Span(path, pos, pos + len(lexeme)),
            "not a valid literal",
            help="write integers as `42`, `1_000`, `0xff` or `0b1010` (`_` only between "
                 "digits, no leading zeros) and floats with a fraction or exponent: `0.5`, `1e-5`"))
        return _token("FLOAT" if is_float else "INT", "0", pos, pos + len(lexeme), line, col)
    if not is_float and _too_large_for_any_dtype(lexeme):
        shown = lexeme if len(lexeme) <= 24 else f"{lexeme[:16]}...{lexeme[-4:]}"
        diagnostics.append(Diagnostic(
            "E2105", f"integer literal `{shown}` ({len(lexeme)} characters) out of range for "
            "every dtype", Span(path, pos, pos + len(lexeme)), "too large for any dtype",
            help=f"the widest dtypes are u64 (up to {2**64 - 1}) and f64 (up to about "
                 "1.8e308); write a float literal with an exponent for a large float"))
        return _token("INT", "0", pos, pos + len(lexeme), line, col)
    return _token("FLOAT" if is_float else "INT", lexeme, pos, pos + len(lexeme), line, col)


#: The largest integer any dtype holds: f64's largest finite value (u64 stops at 2**64 - 1).
LARGEST_LITERAL = int(sys.float_info.max)


def _too_large_for_any_dtype(lexeme: str) -> bool:
    """Is this (well-formed) integer literal beyond every dtype, f64 included?

    Decided without converting a long decimal literal: Python refuses to convert one of
    more than 4,300 digits, and anything past 309 digits is beyond f64 anyway. Hexadecimal
    and binary literals convert in linear time at any length."""
    digits = lexeme.replace("_", "")
    if digits[:2].lower() in ("0x", "0b"):
        return int(digits, 0) > LARGEST_LITERAL
    if len(digits) > len(str(LARGEST_LITERAL)):
        return True
    return int(digits) > LARGEST_LITERAL


def _token(kind: str, value: str, start: int, end: int, line: int, col: int) -> Token:
    return Token(kind, value, start_pos=start, line=line, column=col, end_pos=end)


# --------------------------------------------------------------------- layout

def _layout(raw: list[Token], path: str, diagnostics: list[Diagnostic]) -> list[Token]:
    tokens = _retag_contextual(raw)
    return _place_newlines(tokens, path, diagnostics)


def _retag_contextual(raw: list[Token]) -> list[Token]:
    """Give contextual words and generic angle brackets their own token kinds."""
    toks = list(raw)
    braces = 0
    for i, tok in enumerate(toks):
        if tok.type == "LBRACE":
            braces += 1
        elif tok.type == "RBRACE":
            braces = max(0, braces - 1)
        elif tok.type == "NAME":
            toks[i] = _retag_name(toks, i, braces)
        elif tok.type == "RESERVED" and tok.value == "crate" and _peek(toks, i - 1) == "USE":
            toks[i] = Token.new_borrow_pos("CRATE", "crate", tok)  # `use crate.a.b`
        elif tok.type == "LT":
            close = _generic_close(toks, i)
            if close is not None:
                toks[i] = Token.new_borrow_pos("GLT", "<", tok)
                toks[close] = Token.new_borrow_pos("GGT", ">", toks[close])
    return toks


def _retag_name(toks: list[Token], i: int, braces: int) -> Token:
    tok, nxt = toks[i], _peek(toks, i + 1)
    word = tok.value
    declared = _peek(toks, i - 1) in ("LET", "VAR", "DOT")  # `let max[i] = ...` declares
    # `max`, and `s.max[0]` reads a field
    if word in REDUCTIONS and not declared and (nxt == "LSQB" or _is_reduction_acc(toks, i + 1)):
        return Token.new_borrow_pos("REDUCE", word, tok)
    before = _previous_kind(toks, i)
    if braces == 0 and nxt == "LPAR" and word == "grad" and before == "RBRACE":
        return Token.new_borrow_pos("GRAD", word, tok)  # only right after an op body
    if braces == 0 and nxt == "LPAR" and word in HEADER_WORDS and before in HEADER_FOLLOWS:
        return Token.new_borrow_pos(HEADER_WORDS[word], word, tok)  # after a result type
    if word in EFFECTS and nxt == "LPAR" and _peek(toks, i - 1) in ("NL", "LBRACE"):
        return Token.new_borrow_pos("EFFECT", word, tok)
    return tok


def _previous_kind(toks: list[Token], i: int) -> str | None:
    """The kind of the nearest token before i that is not a newline."""
    k = i - 1
    while k >= 0 and toks[k].type == "NL":
        k -= 1
    return toks[k].type if k >= 0 else None


def _is_reduction_acc(toks: list[Token], i: int) -> bool:
    """`sum<f32>[`: a reduction with an accumulator dtype."""
    kinds = [_peek(toks, i + k) for k in range(4)]
    return kinds == ["LT", "NAME", "GT", "LSQB"]


def _peek(toks: list[Token], i: int) -> str | None:
    return toks[i].type if 0 <= i < len(toks) else None


def _generic_close(toks: list[Token], i: int) -> int | None:
    """Index of the `>` closing generic arguments opened by the `<` at i, if it is one."""
    if _peek(toks, i - 1) not in ("NAME", "REDUCE"):
        return None
    declaring = _peek(toks, i - 2) in DECLARERS or _peek(toks, i - 1) == "REDUCE"
    sub_type = _in_sub_type(toks, i)
    depth = 0
    for k in range(i + 1, len(toks)):
        kind = toks[k].type
        if kind in ("LPAR", "LSQB"):
            depth += 1
        elif kind in ("RPAR", "RSQB"):
            depth -= 1
            if depth < 0:
                return None
        elif kind == "GT" and depth == 0:
            if declaring or sub_type or _peek(toks, k + 1) == "LPAR":
                return k
            if _type_context(toks, i) and _peek(toks, k + 1) in TYPE_FOLLOWS:
                return k
            return None
        elif kind == "LT":
            return None
        elif kind not in GENERIC_ARG_TOKENS \
                and not (declaring and kind in ("COLON", "ASSIGN", "NL")):  # a declared list
            return None  # may span lines
    return None


def _type_context(toks: list[Token], i: int) -> bool:
    """Is the name before the `<` at i written as a type: after `:` or `->`, or as the
    value of `type X = ...`?"""
    before = _peek(toks, i - 2)
    if before in ("COLON", "ARROW"):
        return True
    if before in ("LPAR", "COMMA"):  # an item of a tuple type: `-> (KV<f32>, f32)`
        opened = _opening_paren(toks, i - 2)
        return opened is not None and _peek(toks, opened - 1) in ("COLON", "ARROW")
    if before != "ASSIGN":
        return False
    k = i - 3
    while k >= 0 and toks[k].type not in ("RBRACE", "LBRACE", "NL", "TYPE"):
        k -= 1
    return k >= 0 and toks[k].type == "TYPE"


def _opening_paren(toks: list[Token], k: int) -> int | None:
    """The index of the `(` enclosing the token at k (itself, if it is one)."""
    depth = 0
    while k >= 0:
        kind = toks[k].type
        if kind in ("RPAR", "RSQB"):
            depth += 1
        elif kind in ("LPAR", "LSQB"):
            if depth == 0:
                return k if kind == "LPAR" else None
            depth -= 1
        elif kind in ("LBRACE", "RBRACE", "NL"):
            return None
        k -= 1
    return None


def _in_sub_type(toks: list[Token], i: int) -> bool:
    """Is the `<` at i right after the block named by a sub's type (`sub m: Mlp<`,
    `sub ms: [Mlp<`)?"""
    k = i - 2
    if _peek(toks, k) == "LSQB":
        k -= 1
    return _peek(toks, k) == "COLON" and _peek(toks, k - 1) == "NAME" \
        and _peek(toks, k - 2) == "SUB"


def _place_newlines(toks: list[Token], path: str, diagnostics: list[Diagnostic]) -> list[Token]:
    """Keep only the newlines that end a statement inside a body.

    The stack holds what each open bracket is: a `{` of a body keeps newlines, anything
    else drops them. Generic angle brackets and the `{` of a `use` list count as brackets
    of a list, and a reduction head's `[` is remembered so that the reduced expression may
    start on the next line (`sum[k]` then `x[k]`)."""
    out: list[Token] = []
    stack: list[str] = []
    heads: set[int] = set()  # the `]` closing each reduction head, by id
    for i, tok in enumerate(toks):
        kind = tok.type
        if kind == "NL":
            if _newline_ends_statement(stack, out, toks, i) and id(out[-1]) not in heads:
                out.append(tok)
            continue
        if kind in ("LPAR", "LSQB", "LBRACE", "GLT"):
            stack.append(_opener(kind, out))
            if len(stack) == MAX_NESTING + 1 and not any(d.code == "E1006" for d in diagnostics):
                diagnostics.append(Diagnostic(
                    "E1006", f"nesting deeper than {MAX_NESTING} levels",
                    Span(path, tok.start_pos, tok.end_pos), "too deep",
                    help="split the expression with `let` bindings"))
        elif kind in ("RPAR", "RSQB", "RBRACE", "GGT") and stack:
            if stack.pop() == "HEAD":
                heads.add(id(tok))
        out.append(tok)
    return out


def _opener(kind: str, out: list[Token]) -> str:
    """What the bracket about to follow `out` opens: `HEAD` for a reduction's index list
    (`sum[` or `sum<f32>[`), `LIST` for the names of a `use` (`::{`), else its own kind."""
    before = [x.type for x in out[-4:]]
    if kind == "LSQB" and (before[-1:] == ["REDUCE"] or before[-4:] == ["REDUCE", "GLT",
                                                                        "NAME", "GGT"]):
        return "HEAD"
    if kind == "LBRACE" and before[-2:] == ["COLON", "COLON"]:
        return "LIST"
    return kind


def _newline_ends_statement(stack: list[str], out: list[Token], toks: list[Token], i: int) -> bool:
    if not stack or stack[-1] != "LBRACE":
        return False
    if not out or out[-1].type in CONTINUE_AFTER:
        return False
    k = i + 1
    while k < len(toks) and toks[k].type == "NL":
        k += 1
    nxt = toks[k].type if k < len(toks) else None
    return nxt is not None and nxt not in CONTINUE_BEFORE
