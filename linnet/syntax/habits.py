"""Python, NumPy and PyTorch habits, recognised where they fail, with what to write instead.

A user who writes `x @ w`, `x.sum()`, `mean[c] x[r, c]` or `np.exp(x)` means something
clear; a bare "unexpected `.`" does not say what Linnet wants. The lexer, the parser and
the checker ask this module before reporting their generic error. The codes stay those of
the failure (E1001 invalid character, E1101 unexpected token, E1201 undeclared name): the
habit changes the message and the help, not the kind of mistake.
"""

from __future__ import annotations

from typing import Sequence

from lark import Token

from ..diagnostics import Diagnostic, Span
from ..prims import MATH

REDUCTIONS = ("sum", "prod", "max", "min", "any", "all")
MEAN_WORDS = {"mean", "average", "avg", "nanmean"}
PRODUCT_WORDS = {"matmul", "dot", "mm", "bmm", "einsum", "tensordot", "inner", "outer", "vdot"}
MODULES = {"np", "numpy", "torch", "jnp", "jax", "lax", "F", "nn", "math", "tf", "scipy"}
PRELUDE_MATH = set(MATH) | {"abs"}
OPERAND_END = {"NAME", "RPAR", "RSQB", "INT", "FLOAT", "TRUE", "FALSE"}
WORD_OPERATORS = {"and": "&&", "or": "||", "not": "!"}

PRODUCT_HELP = ("write the product in index notation, naming every axis: "
                "`let c[i, j] = sum[k] {a}[i, k] * {b}[k, j]`")


def mean_help(index: str = "j", operand: str = "x[i, j]") -> str:
    return (f"there is no `mean`: sum, then divide by the count, `sum[{index}] {operand} / "
            f"cast<f32>(N)`, where `N` is the `Dim` that `{index}` runs over")


def reduction_help(name: str, x: str = "x") -> str:
    return (f"`{name}` is a reduction, written in index notation: `let total = {name}[i, j] "
            f"{x}[i, j]` reduces every axis of a matrix, `let rows[i] = {name}[j] {x}[i, j]` "
            "keeps the first")


def function_habit(name: str, x: str | None = None,
                   y: str | None = None) -> tuple[str, str] | None:
    """(message, help) for a call of an undeclared `name(x, y, ...)` that a NumPy or PyTorch
    user would expect to exist (x and y: the arguments when they are names); None when the
    name means nothing special."""
    if name in PRODUCT_WORDS:
        return f"there is no `{name}`", PRODUCT_HELP.format(a=x or "a", b=y or "b")
    x = x or "x"
    if name in REDUCTIONS:
        return f"`{name}` is a reduction, not a function", reduction_help(name, x)
    if name in MEAN_WORDS:
        return f"there is no `{name}`", mean_help("j", f"{x}[i, j]")
    helps = {
        "transpose": f"transpose in index notation, `let t[j, i] = {x}[i, j]`, or with "
                     f"`permute({x}, [1, 0])`",
        "zeros": "make a constant tensor with `fill<f32>([N, M], 0.0)`",
        "ones": "make a constant tensor with `fill<f32>([N, M], 1.0)`",
        "full": "make a constant tensor with `fill<f32>([N, M], value)`",
        "arange": "count with `iota<i64>(n)`: `0 .. n-1` as `Tensor[n; i64]`",
        "range": "loop with `for i in 0..n { ... }`; count with `iota<i64>(n)`",
        "concatenate": f"join tensors with `concat(a, b, axis = 0)`",
        "cat": "join tensors with `concat(a, b, axis = 0)`",
        "stack": "join tensors with `concat(a, b, axis = 0)` (after `reshape` to add the axis)",
        "astype": f"convert dtypes with `cast<f32>({x})`",
        "float": f"convert dtypes with `cast<f32>({x})`",
        "int": f"convert dtypes with `cast<i64>({x})`",
        "relu": f"write it with the prelude: `max({x}, 0.0)`",
        "sigmoid": f"write it with the prelude: `1.0 / (1.0 + exp(-{x}))`",
        "square": f"multiply: `{x} * {x}`",
        "pow": "multiply (`x * x`), or for a float power `exp(y * log(x))`",
        "power": "multiply (`x * x`), or for a float power `exp(y * log(x))`",
        "clip": "clamp with the prelude: `min(max(x, lo), hi)`",
        "clamp": "clamp with the prelude: `min(max(x, lo), hi)`",
        "maximum": "the elementwise maximum is `max(a, b)`",
        "minimum": "the elementwise minimum is `min(a, b)`",
        "len": "shapes are part of the type: name the dims as generics (`x: Tensor[N; f32]`) "
               "and use `N`",
    }
    if name in helps:
        return f"there is no `{name}`", helps[name]
    return None


def name_habit(name: str) -> str | None:
    """Help for an undeclared plain name spelled the Python way (`True`), or None."""
    return {"True": "write `true`", "False": "write `false`",
            "None": "Linnet has no `None`: every value has a type"}.get(name)


# ------------------------------------------------------------------------- the lexer

def at_sign(text: str, pos: int, path: str) -> Diagnostic:
    """E1001 for `@`: the matrix product of NumPy and PyTorch, which Linnet spells out."""
    a, b = _word_before(text, pos) or "a", _word_after(text, pos + 1) or "b"
    return Diagnostic("E1001", "`@` is not an operator in Linnet: there is no matrix-product "
                      "operator", Span(path, pos, pos + 1), "a matrix product?",
                      help=PRODUCT_HELP.format(a=a, b=b))


def _word_before(text: str, pos: int) -> str:
    k = pos
    while k > 0 and text[k - 1] in " \t":
        k -= 1
    end = k
    while k > 0 and (text[k - 1].isalnum() or text[k - 1] == "_") and text[k - 1].isascii():
        k -= 1
    word = text[k:end]
    return word if word and not word[0].isdigit() else ""


def _word_after(text: str, pos: int) -> str:
    k = pos
    while k < len(text) and text[k] in " \t":
        k += 1
    start = k
    while k < len(text) and (text[k].isalnum() or text[k] == "_") and text[k].isascii():
        k += 1
    word = text[start:k]
    return word if word and not word[0].isdigit() else ""


# ------------------------------------------------------------------------ the parser

def syntax_habit(tok: Token, tokens: Sequence[Token], path: str) -> Diagnostic | None:
    """A diagnostic for the unexpected token `tok` when it is a known habit, else None."""
    index = next((i for i, x in enumerate(tokens) if x.start_pos == tok.start_pos), None)
    if index is None:
        return None
    for recognise in (_member_assignment, _method, _power, _word_operator, _unknown_reduction):
        found = recognise(tokens, index, path)
        if found is not None:
            return found
    if _kind(tokens, index) == "LPAR" and _kind(tokens, index - 2) == "DOT":
        return _method(tokens, index - 2, path)  # `x.sum(`: a field read, then a call
    return None


def _kind(tokens: Sequence[Token], i: int) -> str | None:
    return tokens[i].type if 0 <= i < len(tokens) else None


def _member_assignment(tokens: Sequence[Token], i: int, path: str) -> Diagnostic | None:
    """`cache.keys = x`: a sub's state (or a struct's field) assigned from outside. Only
    the block's own functions assign its states, and fields are immutable (E2108)."""
    if _kind(tokens, i) != "DOT" or _kind(tokens, i - 1) != "NAME" \
            or _kind(tokens, i + 1) != "NAME" or _kind(tokens, i + 2) != "ASSIGN":
        return None
    base, member = tokens[i - 1].value, tokens[i + 1].value
    return Diagnostic("E2108", f"`{base}.{member}` cannot be assigned",
                      Span(path, tokens[i - 1].start_pos, tokens[i + 1].end_pos),
                      "cannot assign",
                      help=f"a sub's state is assigned only by its own block's functions: "
                           f"call one (`{base}.update(...)`, say) that assigns `{member}`; "
                           "a struct's fields are immutable: build a new struct")


def _method(tokens: Sequence[Token], i: int, path: str) -> Diagnostic | None:
    """`x.sum()`, `x.T`, `np.exp(x)`: Linnet has neither methods, fields nor modules."""
    if _kind(tokens, i) != "DOT" or _kind(tokens, i - 1) not in ("NAME", "RPAR", "RSQB") \
            or _kind(tokens, i + 1) not in ("NAME", "REDUCE"):
        return None
    attr = tokens[i + 1].value
    receiver = tokens[i - 1].value if _kind(tokens, i - 1) == "NAME" else ""
    return method_habit(receiver, attr, Span(path, tokens[i].start_pos, tokens[i + 1].end_pos))


def method_habit(receiver: str, attr: str, span: Span) -> Diagnostic:
    """`x.sum()`, `np.exp(x)` (the checker's too: a member call that reaches no sub)."""
    if receiver in MODULES:
        found = function_habit(attr)
        help_ = found[1] if found else (f"`{attr}(...)` is in the prelude, with no import"
                                        if attr in PRELUDE_MATH else
                                        "see the prelude (docs/language.md, \"The prelude\") "
                                        "for what exists")
        return Diagnostic("E1101", f"`{receiver}.{attr}`: Linnet has no modules such as "
                          f"`{receiver}`", span, "not a Linnet name", help=help_)
    x = receiver or "x"
    shown = f"{receiver}.{attr}" if receiver else f".{attr}"
    return Diagnostic("E1101", f"Linnet has no methods or fields: `{shown}`", span,
                      "no methods or fields", help=_attribute_help(attr, x))


def attribute_help(attr: str, x: str) -> str:
    """How to write `x.attr` (a numpy or PyTorch attribute) in Linnet."""
    return _attribute_help(attr, x)


def _attribute_help(attr: str, x: str) -> str:
    if attr in ("T", "t", "mT", "transpose"):
        return f"transpose in index notation, `let t[j, i] = {x}[i, j]`, or `permute({x}, [1, 0])`"
    if attr in ("shape", "size", "ndim", "dtype"):
        return ("shapes and dtypes are part of the type: name them as generics "
                f"(`{x}: Tensor[N, M; T]`) and use `N`, `M`, `T`")
    if attr in ("reshape", "view"):
        return f"call the prelude: `reshape({x}, [A, B])`"
    if attr in ("to", "type", "astype", "float", "double", "half"):
        return f"convert dtypes with `cast<f32>({x})`"
    if attr in PRELUDE_MATH:
        return f"call it as a function: `{attr}({x})`"
    found = function_habit(attr, x)
    if found is not None:
        return found[1]
    return f"call a function instead: `{attr}({x}, ...)`, declared with `fn` or `op`"


def _power(tokens: Sequence[Token], i: int, path: str) -> Diagnostic | None:
    """`x ** 2`: two stars in a row."""
    if _kind(tokens, i) != "STAR" or _kind(tokens, i - 1) != "STAR" \
            or tokens[i - 1].end_pos != tokens[i].start_pos:
        return None
    return Diagnostic("E1101", "Linnet has no `**` operator",
                      Span(path, tokens[i - 1].start_pos, tokens[i].end_pos), "a power?",
                      help="multiply (`x * x`), or for a float power write `exp(y * log(x))`")


def _word_operator(tokens: Sequence[Token], i: int, path: str) -> Diagnostic | None:
    """`a and b`, `not c`."""
    tok = tokens[i]
    if tok.type != "NAME" or tok.value not in WORD_OPERATORS:
        return None
    symbol = WORD_OPERATORS[tok.value]
    return Diagnostic("E1101", f"`{tok.value}` is not an operator in Linnet",
                      Span(path, tok.start_pos, tok.end_pos), f"write `{symbol}`",
                      help=f"write `{symbol}` (on scalar bools; elementwise inside index "
                           "notation)")


def _unknown_reduction(tokens: Sequence[Token], i: int, path: str) -> Diagnostic | None:
    """`mean[c] x[r, c]`: a name used as a reduction, which only the six reductions are."""
    if _kind(tokens, i - 1) != "RSQB" or _kind(tokens, i) not in (
            "NAME", "REDUCE", "INT", "FLOAT", "LPAR", "MINUS", "BANG"):
        return None
    depth, j = 0, i - 1
    while j >= 0:
        depth += {"RSQB": 1, "LSQB": -1}.get(tokens[j].type, 0)
        if depth == 0:
            break
        j -= 1
    if j < 1 or _kind(tokens, j - 1) != "NAME" or _kind(tokens, j - 2) in (
            OPERAND_END | {"LET", "VAR"}):
        return None
    name = tokens[j - 1]
    index = ", ".join(t.value for t in tokens[j + 1:i - 1] if t.type == "NAME") or "i"
    span = Span(path, name.start_pos, name.end_pos)
    if name.value in MEAN_WORDS:
        help_ = mean_help(index, "...")
    else:
        help_ = (f"the reductions are `{' '.join(REDUCTIONS)}`: write `{name.value}` with them, "
                 f"such as `max[{index}] ...`")
    return Diagnostic("E1101", f"`{name.value}` is not a reduction", span,
                      f"not one of {', '.join(REDUCTIONS)}", help=help_)
