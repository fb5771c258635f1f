"""The parser: tokens to the surface tree, with a span on every node.

An LALR parser (lark) builds the tree bottom-up through an inline transformer,
so no stage recurses over the parse tree and deep nesting cannot overflow the
Python stack here. Syntax errors become diagnostics (E1101, or E1004 / E2190
for reserved words); the parser never raises for a user's mistake.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput, UnexpectedToken, VisitError
from lark.lexer import Lexer

from ..diagnostics import Diagnostic, Span
from . import tree as t
from .habits import syntax_habit
from .lexer import BLOCK_WORDS, MODEL_WORDS, tokenize
from .misspelling import misspelled_keyword
from .parser_values import ValueBuild
from .tables import load_parser

OUT_OF_SCOPE = {"extern": "packages", "crate": "packages"}


class _TokenList(Lexer):
    """Lark calls this with our already-laid-out token list as its 'text'."""

    def __init__(self, lexer_conf: Any) -> None:
        pass

    def lex(self, data: Any) -> Any:  # type: ignore[override]
        return iter(data)


@lru_cache(maxsize=1)
def _lark() -> Lark:
    """The LALR parser, its tables from the private per-user cache when they are there."""
    grammar = (Path(__file__).parent / "linnet.lark").read_text()
    return load_parser(grammar, lambda: _build_lark(grammar), {"linnet-token-list": _TokenList},
                       _Build())


def _build_lark(grammar: str) -> Lark:
    """Build the tables from the grammar (lark's own cache stays off: it unpickles)."""
    return Lark(grammar, parser="lalr", lexer=_TokenList, keep_all_tokens=True,
                maybe_placeholders=False, transformer=_Build(), start="start")


def parse(text: str, path: str) -> tuple[t.Module | None, list[Diagnostic]]:
    """Parse one file; returns the module (None after a syntax error) and diagnostics.

    The trees are immutable (frozen nodes, frozen diagnostics), so one parse of a text at a
    path is shared by every compile that reads it: a program compiled for several targets,
    bindings or numerics modes, as the tests and `linnet verify` do, is parsed once."""
    module, diagnostics = _parse_once(text, path)
    return module, list(diagnostics)


@lru_cache(maxsize=512)
def _parse_once(text: str, path: str) -> tuple[t.Module | None, tuple[Diagnostic, ...]]:
    module, diagnostics = _parse(text, path)
    return module, tuple(diagnostics)


def _parse(text: str, path: str) -> tuple[t.Module | None, list[Diagnostic]]:
    lexed = tokenize(text, path)
    if lexed.diagnostics:
        return None, lexed.diagnostics
    _Build.file = path
    try:
        return _lark().parse(lexed.tokens), []
    except UnexpectedInput as err:
        return None, [_syntax_error(err, lexed.tokens, path, len(text))]
    except _NodeError as err:  # a rule callback rejected what it built (`Foo[..]` as a type)
        return None, [err.diagnostic]
    except VisitError as err:  # the same, should lark ever wrap callback errors
        if isinstance(err.orig_exc, _NodeError):
            return None, [err.orig_exc.diagnostic]
        raise


class _NodeError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        self.diagnostic = diagnostic


def _syntax_error(err: UnexpectedInput, tokens: list[Token], path: str, end: int) -> Diagnostic:
    tok = getattr(err, "token", None)
    if tok is None or tok.type == "$END":
        span = Span(path, max(0, end - 1), end)
        if not tokens:
            return Diagnostic("E1102", "missing `module` line", span, "the file is empty",
                              help="start the file with `module NAME`")
        return Diagnostic("E1101", "unexpected end of file", span, "the file ends here",
                          help="close every `(`, `[` and `{`, and end each body with `}`")
    span = Span(path, tok.start_pos, tok.end_pos)
    if tok.type == "RESERVED":
        return _reserved(tok, tokens, span)
    if tok.value in MODEL_WORDS and "NAME" in (getattr(err, "expected", ()) or ()):
        return Diagnostic("E1004", f"`{tok.value}` is a keyword", span, "a keyword",
                          help=f"choose another name, such as `{tok.value}_`")
    if tok.type in BLOCK_WORDS:
        return _block_word(tok, tokens, span)
    if tok is tokens[0] and tok.type != "MODULE":
        return Diagnostic("E1102", "missing `module` line", span, "expected `module` first",
                          help="start the file with `module NAME` (a dotted path such as `a.b`)")
    habit = syntax_habit(tok, tokens, path)
    if habit is not None:
        return habit
    expected = sorted(getattr(err, "expected", ()) or ())
    slip = misspelled_keyword(tok, tokens, expected, path)
    if slip is not None:
        return slip
    shown = ", ".join(_describe(e) for e in expected[:8])
    if len(expected) > 8:
        shown += f" or {len(expected) - 8} other kinds of token"
    return Diagnostic("E1101", f"unexpected {_describe_token(tok)}", span, "unexpected here",
                      help=f"expected {shown}" if shown else "")


def _reserved(tok: Token, tokens: list[Token], span: Span) -> Diagnostic:
    index = next(i for i, x in enumerate(tokens) if x.start_pos == tok.start_pos)
    before = tokens[index - 1].type if index else None
    # Item-level newlines are gone from the laid-out tokens: a word that begins a line
    # outside every bracket begins an item.
    starts_line = index > 0 and tokens[index - 1].line < tok.line
    starts_something = (before in (None, "NL", "LBRACE", "RBRACE", "PUB")
                        or (starts_line and _depth(tokens, index) == 0))
    if tok.value in OUT_OF_SCOPE and starts_something:
        what = OUT_OF_SCOPE[tok.value]
        return Diagnostic("E2190", f"not implemented yet: {what}", span, "not supported",
                          help="this part of the language is reserved for later versions")
    return Diagnostic("E1004", f"`{tok.value}` is a reserved word", span, "reserved",
                      help=f"choose another name, such as `{tok.value}_`")


def _block_word(tok: Token, tokens: list[Token], span: Span) -> Diagnostic:
    """`block`, `param`, `buffer`, `state` or `sub` out of place: at item level a member
    outside its block; inside a body, where a name is meant, a reserved word (E1004)."""
    index = next(i for i, x in enumerate(tokens) if x.start_pos == tok.start_pos)
    if tok.type != "BLOCK" and _depth(tokens, index) == 0:
        return Diagnostic("E1101", f"unexpected `{tok.value}`", span, "outside a block",
                          help=f"`{tok.value}` declares a member inside `block Name {{ ... }}`")
    return Diagnostic("E1004", f"`{tok.value}` is a reserved word", span, "reserved",
                      help=f"choose another name, such as `{tok.value}_`")


VALUED_FOR = ("a valued `for` may only be the whole value of a `let`, `var`, assignment or "
              "`return`")
"""The grammar takes a scan wherever an expression may stand; the checker reports E2124 with
this message where it is an operand, and the parser where parentheses make it one."""


def _depth(tokens: list[Token], index: int) -> int:
    """How many brackets are open before tokens[index]."""
    opens = sum(t.type in ("LPAR", "LSQB", "LBRACE") for t in tokens[:index])
    return opens - sum(t.type in ("RPAR", "RSQB", "RBRACE") for t in tokens[:index])


_WORDS = {"NL": "end of line", "LPAR": "`(`", "RPAR": "`)`", "LSQB": "`[`", "RSQB": "`]`",
          "LBRACE": "`{`", "RBRACE": "`}`", "COMMA": "`,`", "COLON": "`:`", "SEMI": "`;`",
          "ASSIGN": "`=`", "ARROW": "`->`", "RANGE": "`..`", "GLT": "`<`", "GGT": "`>`",
          "NAME": "a name", "INT": "an integer", "FLOAT": "a float", "EFFECT": "`store(...)`",
          "REDUCE": "a reduction", "DOT": "`.`", "OROR": "`||`", "ANDAND": "`&&`",
          "EQ": "`==`", "NE": "`!=`", "LT": "`<`", "LE": "`<=`", "GT": "`>`", "GE": "`>=`",
          "BAR": "`|`", "CARET": "`^`", "AMP": "`&`", "PLUS": "`+`", "MINUS": "`-`",
          "STAR": "`*`", "SLASH": "`/`", "PERCENT": "`%`", "BANG": "`!`", "GRAD": "`grad`",
          "GRID": "`grid`", "WARPS": "`warps`", "STAGES": "`stages`", "QMARK": "`?`",
          "FATARROW": "`=>`", "ELLIPSIS": "`...`"}


def _describe(kind: str) -> str:
    return _WORDS.get(kind, f"`{kind.lower()}`")


def _describe_token(tok: Token) -> str:
    if tok.type == "NL":
        return "end of line"
    return f"`{tok.value}`"


# ------------------------------------------------------------ tree building

Child = Any


def _is(child: Child, *kinds: str) -> bool:
    return isinstance(child, Token) and child.type in kinds


def _after(children: list[Child], kind: str) -> Child | None:
    """The child right after the first token of this kind, if any."""
    for i, c in enumerate(children):
        if _is(c, kind) and i + 1 < len(children):
            return children[i + 1]
    return None


def _nodes(children: list[Child]) -> list[Child]:
    """Children that are tree nodes or lists (tokens dropped)."""
    return [c for c in children if not isinstance(c, Token)]


def _names(children: list[Child]) -> list[str]:
    return [c.value for c in children if _is(c, "NAME")]


def _start(c: Child) -> int:
    return c.start_pos if isinstance(c, Token) else c.span.start


def _end(c: Child) -> int:
    return c.end_pos if isinstance(c, Token) else c.span.end


def _positioned(c: Child) -> bool:
    return isinstance(c, Token) or hasattr(c, "span")


class _Build(ValueBuild, Transformer):
    """One callback per grammar rule; each returns a surface-tree node."""

    file = "<input>"

    def _span(self, children: list[Child]) -> Span:
        items = [c for c in children if _positioned(c)]
        if not items:
            return Span(self.file, 0, 0)
        return Span(self.file, _start(items[0]), _end(items[-1]))

    # items
    def start(self, c: list[Child]) -> t.Module:
        uses = tuple(x for x in c if isinstance(x, t.Use))
        items = tuple(x for x in c if not isinstance(x, (Token, t.Use, tuple)))
        return t.Module(c[1], uses, items, span=self._span(c))

    def path(self, c: list[Child]) -> tuple[str, ...]:  # noqa: F811 (rule name)
        return tuple(_names(c))

    def use(self, c: list[Child]) -> t.Use:
        path = next(x for x in c if isinstance(x, tuple))
        if _is(c[1], "CRATE"):
            path = ("crate",) + path
        listed = [x for x in c if _is(x, "NAME")]
        names = tuple(x.value for x in listed) if any(_is(x, "LBRACE") for x in c) else None
        return t.Use(path, names, span=Span(self.file, c[0].start_pos, c[0].end_pos),
                     name_spans=tuple(self._span([x]) for x in listed))

    def item(self, c: list[Child]) -> t.Item:
        node = c[-1]
        if _is(c[0], "PUB"):
            return _replace(node, public=True, span=self._span(c))
        return node

    def const_def(self, c: list[Child]) -> t.Const:
        return t.Const(c[1].value, _after(c, "COLON"), c[-1], span=self._span(c))

    def fn_def(self, c: list[Child]) -> t.Function:
        return t.Function(c[0].value.lower(), c[1].value, _opt(c, _GenericList),
                          _opt(c, _ParamList), _after(c, "ARROW"), _opt(c, _WhereList),
                          _body_of(c), grad=next((x for x in c if isinstance(x, t.GradClause)),
                                                 None), span=self._span(c))

    def op_def(self, c: list[Child]) -> t.Op:
        binding = next((x for x in c if isinstance(x, t.KernelBinding)), None)
        grad = next((x for x in c if isinstance(x, t.GradClause)), None)
        return t.Op(c[1].value, _opt(c, _GenericList), _opt(c, _ParamList), _after(c, "ARROW"),
                    binding, _opt(c, _WhereList), _body_of(c), grad, span=self._span(c))

    def binding(self, c: list[Child]) -> t.KernelBinding:
        args = _after(c, "GLT")
        return t.KernelBinding(c[1].value, tuple(args) if args is not None else None,
                               span=self._span(c))

    def grad(self, c: list[Child]) -> t.GradClause:
        return t.GradClause(c[2].value, c[4].value, c[-1].stmts, span=self._span(c),
                            name_spans=(self._span([c[2]]), self._span([c[4]])))

    def kernel_def(self, c: list[Child]) -> t.Kernel:
        results = next(x for x in c if isinstance(x, _Results))
        grid = _after(c, "GRID")
        grid_exprs = tuple(c[c.index(grid) + 1]) if grid is not None else ()
        return t.Kernel(c[1].value, _opt(c, _GenericList), _opt(c, _ParamList), results.params,
                        results.is_tuple, grid_exprs, _hint(c, "warps"), _hint(c, "stages"),
                        _opt(c, _WhereList), _body_of(c), span=self._span(c))

    def warps(self, c: list[Child]) -> tuple[str, Child]:
        return ("warps", c[2])

    def stages(self, c: list[Child]) -> tuple[str, Child]:
        return ("stages", c[2])

    def results(self, c: list[Child]) -> "_Results":
        params = tuple(x for x in c if isinstance(x, t.Param))
        return _Results(params, _is(c[0], "LPAR"))

    def generics(self, c: list[Child]) -> "_GenericList":
        return _GenericList(x for x in c if isinstance(x, t.Generic))

    def gparam(self, c: list[Child]) -> t.Generic:
        pack = _is(c[0], "STAR")
        names = _names(c)
        return t.Generic(names[0], names[1], pack, _after(c, "ASSIGN"), span=self._span(c))

    def params(self, c: list[Child]) -> "_ParamList":
        return _ParamList(x for x in c if isinstance(x, t.Param))

    def param(self, c: list[Child]) -> t.Param:
        return t.Param(c[0].value, c[2], _after(c, "ASSIGN"), span=self._span(c))

    def where(self, c: list[Child]) -> "_WhereList":
        return _WhereList(_nodes(c))

    # blocks
    def block_def(self, c: list[Child]) -> t.BlockDef:
        members = tuple(x for x in c if isinstance(x, (t.TensorMember, t.Sub, t.Function)))
        return t.BlockDef(c[1].value, _opt(c, _GenericList), _opt(c, _WhereList), members,
                          span=self._span(c))

    def member_fn(self, c: list[Child]) -> t.Function:
        if _is(c[0], "PUB"):
            return _replace(c[-1], public=True, span=self._span(c))
        return c[-1]

    def tensor_member(self, c: list[Child]) -> t.TensorMember:
        init = next((x.value for x in c if isinstance(x, _Init)), None)
        return t.TensorMember(c[0].value, c[1].value, c[3], init, span=self._span(c))

    def sub_member(self, c: list[Child]) -> t.Sub:
        init = next((x.value for x in c if isinstance(x, _Init)), None)
        return t.Sub(c[1].value, c[3], any(_is(x, "QMARK") for x in c), init,
                     span=self._span(c))

    def member_init(self, c: list[Child]) -> "_Init":
        return _Init(c[1], self._span(c))

    def sub_one(self, c: list[Child]) -> t.SubType:
        generics = _after(c, "GLT")
        return t.SubType(c[0].value, tuple(generics) if generics is not None else None,
                         span=self._span(c))

    def sub_array(self, c: list[Child]) -> t.SubType:
        generics = _after(c, "GLT")
        return t.SubType(c[1].value, tuple(generics) if generics is not None else None,
                         _after(c, "SEMI"), span=self._span(c))

    # types
    def type_name(self, c: list[Child]) -> t.TypeName:
        return t.TypeName(c[0].value, span=self._span(c))

    def tensor_type(self, c: list[Child]) -> t.TensorType:
        dims = _after(c, "LSQB")
        dims = () if _is(dims, "SEMI") else tuple(dims)
        if c[0].value != "Tensor":
            raise _NodeError(Diagnostic(
                "E1101", f"unexpected `{c[0].value}[`", self._span(c), "not a type",
                help="tensor types are written `Tensor[dims; dtype]`"))
        return t.TensorType(dims, c[-2], span=self._span(c))

    def tuple_type(self, c: list[Child]) -> t.TupleType:
        return t.TupleType(tuple(_nodes(c)), span=self._span(c))

    def dims(self, c: list[Child]) -> list[Child]:
        return _nodes(c)

    # statements
    def body(self, c: list[Child]) -> "_Body":
        return _Body(tuple(_nodes(c)), self._span(c))

    def let_stmt(self, c: list[Child]) -> t.Let:
        return t.Let(c[1].value, _after(c, "COLON"), c[-1], span=self._span(c),
                     name_spans=(self._span([c[1]]),))

    def let_tuple(self, c: list[Child]) -> t.LetTuple:
        names = [x for x in c if _is(x, "NAME")]
        return t.LetTuple(tuple(x.value for x in names), c[-1], span=self._span(c),
                          name_spans=tuple(self._span([x]) for x in names))

    def let_index(self, c: list[Child]) -> t.LetIndex:
        return t.LetIndex(c[1].value, tuple(c[3]), c[-1], span=self._span(c),
                          name_spans=(self._span([c[1]]),))

    def var_stmt(self, c: list[Child]) -> t.VarDecl:
        return t.VarDecl(c[1].value, _after(c, "COLON"), c[-1], span=self._span(c),
                         name_spans=(self._span([c[1]]),))

    def assign(self, c: list[Child]) -> t.Assign:
        return t.Assign(c[0].value, c[2], span=self._span(c))

    def return_stmt(self, c: list[Child]) -> t.Return:
        return t.Return(c[1], span=self._span(c))

    def for_stmt(self, c: list[Child]) -> t.For:
        static = _is(c[0], "STATIC")
        k = 1 if static else 0
        return t.For(c[k + 1].value, c[k + 3], c[k + 5], c[-1].stmts, static,
                     span=self._span(c), name_spans=(self._span([c[k + 1]]),))

    def for_each(self, c: list[Child]) -> t.ForEach:
        return t.ForEach(c[2].value, c[4], c[-1].stmts, span=self._span(c),
                         name_spans=(self._span([c[2]]),))

    def while_stmt(self, c: list[Child]) -> t.While:
        return t.While(c[1], c[2].stmts, span=self._span(c))

    def yield_stmt(self, c: list[Child]) -> t.Yield:
        return t.Yield(c[1], span=self._span(c))

    def effect(self, c: list[Child]) -> t.Effect:
        return t.Effect(c[0].value, _wrap_args(c[2]), span=self._span(c))

    def scan(self, c: list[Child]) -> t.ForExpr:
        return t.ForExpr(c[1].value, c[3], c[5], c[-1].stmts, span=self._span(c),
                         name_spans=(self._span([c[1]]),))

    def ixvars(self, c: list[Child]) -> list[t.IxVar]:
        return _nodes(c)

    def ixvar(self, c: list[Child]) -> t.IxVar:
        return t.IxVar(c[-1].value, _is(c[0], "STAR"), span=self._span(c))

    # expressions
    def binary(self, c: list[Child]) -> t.Binary:
        return t.Binary(c[1].value, c[0], c[2], span=self._span(c))

    def unary_op(self, c: list[Child]) -> t.Unary:
        return t.Unary(c[0].value, c[1], span=self._span(c))

    def reduce(self, c: list[Child]) -> t.Reduce:
        acc = _after(c, "GLT")
        ix = _after(c, "LSQB")
        return t.Reduce(c[0].value, acc, tuple(ix), c[-1], span=self._span(c))

    def index(self, c: list[Child]) -> t.Index:
        return t.Index(c[0], tuple(c[2]), span=self._span(c))

    def call(self, c: list[Child]) -> t.Call:
        generics = _after(c, "GLT")
        lpar = next(i for i, x in enumerate(c) if _is(x, "LPAR"))
        args = c[lpar + 1] if not _is(c[lpar + 1], "RPAR") else []
        return t.Call(c[0].value, tuple(generics) if generics is not None else None,
                      _wrap_args(args),
                      Span(self.file, c[0].start_pos, c[0].end_pos), span=self._span(c))

    def member_call(self, c: list[Child]) -> t.MemberCall:
        generics = _after(c, "GLT")
        lpar = next(i for i, x in enumerate(c) if _is(x, "LPAR"))
        args = c[lpar + 1] if not _is(c[lpar + 1], "RPAR") else []
        return t.MemberCall(c[0], c[2].value,
                            tuple(generics) if generics is not None else None,
                            _wrap_args(args), span=self._span(c),
                            name_span=self._span(c[1:3]))

    def name(self, c: list[Child]) -> t.Name:
        return t.Name(c[0].value, span=self._span(c))

    def int_lit(self, c: list[Child]) -> t.IntLit:
        return t.IntLit(int(c[0].value.replace("_", ""), 0), c[0].value, span=self._span(c))

    def float_lit(self, c: list[Child]) -> t.FloatLit:
        return t.FloatLit(float(c[0].value.replace("_", "")), c[0].value, span=self._span(c))

    def true_lit(self, c: list[Child]) -> t.BoolLit:
        return t.BoolLit(True, span=self._span(c))

    def false_lit(self, c: list[Child]) -> t.BoolLit:
        return t.BoolLit(False, span=self._span(c))

    def paren(self, c: list[Child]) -> Child:
        if isinstance(c[1], t.ForExpr):  # parentheses make the scan an operand
            raise _NodeError(Diagnostic("E2124", VALUED_FOR, c[1].span, "in parentheses",
                                        help="write the `for` without parentheses"))
        return c[1]

    def tuple_expr(self, c: list[Child]) -> t.TupleExpr:
        return t.TupleExpr(tuple(_nodes(c)), span=self._span(c))

    def list_expr(self, c: list[Child]) -> t.ListExpr:
        inner = _after(c, "LSQB")
        items = () if _is(inner, "RSQB") else tuple(inner)
        return t.ListExpr(items, span=self._span(c))

    def if_expr(self, c: list[Child]) -> t.If:
        orelse = c[4]
        if isinstance(orelse, t.If):
            orelse = t.Block((), orelse, span=orelse.span)
        return t.If(c[1], c[2], orelse, span=self._span(c))

    def block(self, c: list[Child]) -> t.Block:
        nodes = _nodes(c)
        return t.Block(tuple(nodes[:-1]), nodes[-1], span=self._span(c))

    def exprs(self, c: list[Child]) -> list[Child]:
        return _nodes(c)

    def args(self, c: list[Child]) -> list[Child]:
        return _nodes(c)

    def named_arg(self, c: list[Child]) -> t.Arg:
        return t.Arg(c[2], c[0].value, span=self._span(c))

    def items(self, c: list[Child]) -> list[Child]:
        return _nodes(c)

    def pack(self, c: list[Child]) -> t.PackIx:
        return t.PackIx(c[1].value, span=self._span(c))

    def slice(self, c: list[Child]) -> t.Slice:
        parts: list[Child | None] = [None, None, None]
        slot = 0
        for x in c:
            if _is(x, "COLON"):
                slot += 1
            else:
                parts[slot] = x
        return t.Slice(*parts, span=self._span(c))


class _Body:
    """A braced statement list; its span lets the enclosing item's span end at `}`."""

    def __init__(self, stmts: tuple, span: Span) -> None:
        self.stmts, self.span = stmts, span


class _Init:
    """What follows `=` in a block member."""

    def __init__(self, value: Child, span: Span) -> None:
        self.value, self.span = value, span


class _GenericList(tuple):
    pass


class _ParamList(tuple):
    pass


class _WhereList(tuple):
    pass


class _Results:
    def __init__(self, params: tuple[t.Param, ...], is_tuple: bool) -> None:
        self.params, self.is_tuple = params, is_tuple


def _wrap_args(args: list[Child]) -> tuple[t.Arg, ...]:
    return tuple(a if isinstance(a, t.Arg) else t.Arg(a, span=a.span) for a in args)


def _opt(children: list[Child], kind: type) -> tuple:
    return next((tuple(x) for x in children if isinstance(x, kind)), ())


def _body_of(children: list[Child]) -> tuple:
    return next(x.stmts for x in children if isinstance(x, _Body))


def _hint(children: list[Child], which: str) -> Child | None:
    return next((x[1] for x in children if isinstance(x, tuple) and len(x) == 2
                 and x[0] == which), None)


def _replace(node: Any, **changes: Any) -> Any:
    return dataclasses.replace(node, **changes)
