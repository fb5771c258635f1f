"""The surface printer: a surface tree back to canonical Linnet text.

Printing is the inverse of parsing up to layout and comments: for any tree the
parser builds, `parse(print_module(tree)) == tree` (spans and literal spellings
are not part of equality). That makes the printer usable for test-case
reduction, for `--dump` output of the surface stage, and for formatting.

Parentheses are minimal but safe. Precedence and left-associativity (docs/language.md,
"Statements and expressions") decide most of them; three more come from the layout rules the
lexer applies, which a precedence table alone does not see:

* A reduction (`sum[k] e`) extends as far right as it can, so one that is not
  the rightmost operand is parenthesized. `if` expressions are treated alike,
  for the reader's sake.
* The generic-call rule reads `a < b, c > (d)` as `a<b, c>(d)`; a comparison
  that could open such a false generic list is parenthesized.
* Contextual words: `sum[`, `sum < T > [`, `store(` at the start of a line
  and `+` at the start of a line would be read differently, so a name or
  value in such a place is parenthesized.

Expression text may span several lines (an `if` whose branch has statements);
continuation lines are indented relative to the statement, and each enclosing
body adds one level, so nesting composes without threading an indent through.
"""

from __future__ import annotations

import math
import re
from typing import Callable

from . import tree as t
from .lexer import EFFECTS, REDUCTIONS, tokenize

INDENT = "    "

# Binding strength, loosest first, as in docs/language.md, "Statements and expressions".
BINARY_PRECEDENCE = {
    "||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4,
    "|": 5, "^": 6, "&": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9,
}
LOOSEST = 0
UNARY = 10    # also a reduction's level: it stands where a unary operand may
POSTFIX = 11  # calls and indexing
ATOM = 12

_ENDS_WITH_REDUCTION_WORD = re.compile(r"(?<![A-Za-z0-9_])(?:%s)$" % "|".join(sorted(REDUCTIONS)))
_STARTS_WITH_EFFECT_CALL = re.compile(r"(?:%s)\(" % "|".join(sorted(EFFECTS)))


# ----------------------------------------------------------------- public API

def print_module(module: t.Module) -> str:
    """The whole file: the module line, its uses, then items separated by blank lines."""
    head = "module " + ".".join(module.path)
    uses = "".join("\n" + print_use(u) for u in module.uses)
    items = "".join("\n\n" + print_item(item) for item in module.items)
    return head + uses + items + "\n"


def print_use(use: t.Use) -> str:
    """`use a.b`, or `use crate.a.b::{x, y}` with its list of names."""
    names = "" if use.names is None else "::{" + ", ".join(use.names) + "}"
    return f"use {'.'.join(use.path)}{names}"


def print_item(item: t.Item) -> str:
    """One top-level item, `pub` included."""
    text = _ITEMS[type(item)](item)
    return "pub " + text if item.public else text


def print_stmt(stmt: t.Stmt, indent: int = 0) -> str:
    """One statement (possibly several lines), indented `indent` levels."""
    return _indent(_STMTS[type(stmt)](stmt), indent)


def print_expr(expr: t.Expr) -> str:
    """One expression, standing alone (as the value of a `let`, say)."""
    return _expr(expr, LOOSEST, closed=False)


def print_type(ty: t.TypeExpr) -> str:
    """A type: `f32`, `Tensor[N, *S; T]`, `(A, B)`."""
    return _TYPES[type(ty)](ty)


# --------------------------------------------------------------- expressions
#
# `_expr(e, need, closed)` prints e where the context needs binding strength
# at least `need`; `closed` says that more of the expression follows e, so an
# open-ended form (a reduction, an `if`) must be closed with parentheses.

def _expr(e: t.Expr, need: int, closed: bool) -> str:
    if _precedence(e) < need or (closed and isinstance(e, (t.Reduce, t.If))):
        return "(" + _EXPRS[type(e)](e, False) + ")"
    return _EXPRS[type(e)](e, closed)


def _precedence(e: t.Expr) -> int:
    """How tightly e binds; a negative literal prints with its unary minus."""
    if isinstance(e, t.Binary):
        return BINARY_PRECEDENCE[e.op]
    if isinstance(e, (t.Unary, t.Reduce)):
        return UNARY
    if isinstance(e, (t.IntLit, t.FloatLit)) and _is_negative(e.value):
        return UNARY
    if isinstance(e, (t.Call, t.Index, t.Field, t.MemberCall)):
        return POSTFIX
    return ATOM


def _name(e: t.Name, closed: bool) -> str:
    return e.id


def _int(e: t.IntLit, closed: bool) -> str:
    """The original spelling (`0xff`, `1_000`) when it still denotes the value."""
    if e.text and _spells(e.text, "INT") and int(e.text.replace("_", ""), 0) == e.value:
        return e.text
    return str(e.value)


def _float(e: t.FloatLit, closed: bool) -> str:
    """The original spelling when it still denotes the value; else the shortest repr.

    An infinity prints as `1e999`, which the parser reads back as infinity;
    NaN has no spelling at all.
    """
    if e.text and _spells(e.text, "FLOAT") and float(e.text.replace("_", "")) == e.value:
        return e.text
    if math.isnan(e.value):
        raise ValueError("a NaN float literal has no Linnet spelling")
    sign = "-" if _is_negative(e.value) else ""
    return sign + ("1e999" if math.isinf(e.value) else repr(abs(e.value)))


def _spells(text: str, kind: str) -> bool:
    """Whether text lexes as exactly one literal token of this kind."""
    lexed = tokenize(text, "<literal>")
    return not lexed.diagnostics and [tok.type for tok in lexed.tokens] == [kind]


def _is_negative(value: float) -> bool:
    return math.copysign(1.0, value) < 0


def _bool(e: t.BoolLit, closed: bool) -> str:
    return "true" if e.value else "false"


def _unary(e: t.Unary, closed: bool) -> str:
    """`-x`, `!x`; a space keeps `- -x` from reading as one token to the eye.

    A chain of prefix operators prints in a loop, so `- - - ... x` needs no
    stack per operator.
    """
    ops = []
    while isinstance(e, t.Unary):
        ops.append(e.op)
        e = e.operand
    text = _expr(e, UNARY, closed)
    for op in reversed(ops):
        text = op + (" " if text[:1] in ("-", "+") else "") + text
    return text


def _binary(e: t.Binary, closed: bool) -> str:
    """Left-associative: the right operand needs strictly tighter binding.

    The left spine (`a + b + c + ...`, as long as no parentheses are needed)
    prints in a loop, so a sum of thousands of terms needs no deep stack.
    """
    spine = [e]
    while (isinstance(spine[-1].left, t.Binary)
           and BINARY_PRECEDENCE[spine[-1].left.op] >= BINARY_PRECEDENCE[spine[-1].op]):
        spine.append(spine[-1].left)
    text = _expr(spine[-1].left, BINARY_PRECEDENCE[spine[-1].op], closed=True)
    for node in reversed(spine):
        right = _expr(node.right, BINARY_PRECEDENCE[node.op] + 1, closed or node is not e)
        text = _join(node.op, text, right)
    return text


def _join(op: str, left: str, right: str) -> str:
    """`left op right`, closing off the left side where the lexer would misread it."""
    if op == ">" and right.startswith("(") and "<" in left:
        left = f"({left})"  # else `a < b > (c)` reads as the generic call `a<b>(c)`
    if op == "<" and _ENDS_WITH_REDUCTION_WORD.search(left):
        left = f"({left})"  # else `sum < f32 > [k]` reads as a reduction
    return f"{left} {op} {right}"


def _call(e: t.Call, closed: bool) -> str:
    generics = "" if e.generics is None else "<" + _list(e.generics) + ">"
    return f"{e.callee}{generics}({_args(e.args)})"


def _member_call(e: t.MemberCall, closed: bool) -> str:
    base = _expr(e.base, POSTFIX, closed=True)
    generics = "" if e.generics is None else "<" + _list(e.generics) + ">"
    return f"{base}.{e.name}{generics}({_args(e.args)})"


def _index(e: t.Index, closed: bool) -> str:
    base = _expr(e.base, POSTFIX, closed=True)
    if _ENDS_WITH_REDUCTION_WORD.search(base):
        base = f"({base})"  # `sum[i]` would open a reduction
    return f"{base}[{_commas([_index_item(i) for i in e.items], e.items)}]"


def _index_item(item: t.IndexItem) -> str:
    if isinstance(item, t.PackIx):
        return "*" + item.name
    if isinstance(item, t.Slice):
        return _slice(item)
    if isinstance(item, t.EllipsisIx):
        return "..."
    return _expr(item, LOOSEST, closed=False)


def _slice(s: t.Slice) -> str:
    """`lo:hi:step`, parts optional; a part holding `<` is closed off (generic-call rule)."""
    def part(e: t.Expr | None) -> str:
        if e is None:
            return ""
        text = _expr(e, LOOSEST, closed=False)
        return f"({text})" if "<" in text else text
    text = part(s.lo) + ":" + part(s.hi)
    return text + ":" + part(s.step) if s.step is not None else text


def _reduce(e: t.Reduce, closed: bool) -> str:
    acc = "" if e.acc is None else f"<{print_type(e.acc)}>"
    return f"{e.op}{acc}[{_ixvars(e.indices)}] {_expr(e.body, LOOSEST, closed)}"


def _if(e: t.If, closed: bool) -> str:
    """`if c { a } else { b }`; an else-branch that is only an `if` prints as `else if`.

    When any branch of the chain has statements (or a value of several lines),
    every branch takes its own lines, so the chain reads as one shape.
    """
    conds, blocks = _if_chain(e)
    values = [_block_value(b) for b in blocks]
    tall = any(b.stmts or "\n" in v for b, v in zip(blocks, values))
    branches = [_block(b, v, tall) for b, v in zip(blocks, values)]
    parts = [f"if {_expr(c, LOOSEST, closed=False)} {branch}"
             for c, branch in zip(conds, branches)]
    return " else ".join(parts) + " else " + branches[-1]


def _if_chain(e: t.If) -> tuple[list[t.Expr], list[t.Block]]:
    """The conditions and branches of `if .. else if .. else ..`, flattened (no recursion)."""
    conds, blocks = [], []
    while True:
        conds.append(e.cond)
        blocks.append(e.then)
        orelse = e.orelse
        if orelse.stmts or not isinstance(orelse.value, t.If):
            blocks.append(orelse)
            return conds, blocks
        e = orelse.value


def _block_value(b: t.Block) -> str:
    """A branch's value; a leading `+` would join the line above, `store(` is a statement."""
    value = _expr(b.value, LOOSEST, closed=False)
    if value.startswith("+") or _STARTS_WITH_EFFECT_CALL.match(value):
        return f"({value})"
    return value


def _block(b: t.Block, value: str, tall: bool) -> str:
    """`{ value }` on one line, or one statement per line."""
    if not tall:
        return "{ " + value + " }"
    lines = [_STMTS[type(s)](s) for s in b.stmts] + [value]
    return "{\n" + _indent("\n".join(lines), 1) + "\n}"


def _tuple(e: t.TupleExpr, closed: bool) -> str:
    return f"({_list(e.items)})"


def _list_expr(e: t.ListExpr, closed: bool) -> str:
    return f"[{_list(e.items)}]"


def _scan(e: t.ForExpr, closed: bool) -> str:
    return f"for {e.var} in {_range(e.lo, e.hi)} {_body(e.body)}"


_EXPRS: dict[type, Callable[..., str]] = {
    t.Name: _name, t.IntLit: _int, t.FloatLit: _float, t.BoolLit: _bool, t.Unary: _unary,
    t.Binary: _binary, t.Call: _call, t.Index: _index, t.Reduce: _reduce, t.If: _if,
    t.TupleExpr: _tuple, t.ListExpr: _list_expr, t.ForExpr: _scan, t.MemberCall: _member_call,
}


# ------------------------------------------------------------ comma lists

def _list(items: tuple[t.Expr, ...]) -> str:
    return _commas([_expr(x, LOOSEST, closed=False) for x in items], items)


def _args(args: tuple[t.Arg, ...]) -> str:
    values = _guarded([_expr(a.value, LOOSEST, closed=False) for a in args],
                      [a.value for a in args])
    return ", ".join(v if a.name is None else f"{a.name} = {v}" for a, v in zip(args, values))


def _commas(texts: list[str], nodes) -> str:
    """Elements joined by `, `, guarded against the generic-call rule."""
    return ", ".join(_guarded(texts, nodes))


def _guarded(texts: list[str], nodes) -> list[str]:
    """Parenthesize a list element holding `<` when a later one holds `>`.

    The lexer reads `f(a < b, c > (d))` as the generic call `a<b, c>(d)`;
    closing off the `<` stops its search for a matching `>`.
    """
    out = list(texts)
    for i, text in enumerate(texts):
        later = any(">" in rest for rest in texts[i + 1:])
        if later and "<" in text and not isinstance(nodes[i], (t.Slice, t.PackIx,
                                                                t.EllipsisIx)):
            out[i] = f"({text})"
    return out


def _ixvars(ixs: tuple[t.IxVar, ...]) -> str:
    return ", ".join(("*" if ix.pack else "") + ix.name for ix in ixs)


def _range(lo: t.Expr, hi: t.Expr) -> str:
    return f"{_expr(lo, LOOSEST, closed=False)}..{_expr(hi, LOOSEST, closed=False)}"


# ---------------------------------------------------------------------- types

def _type_name(ty: t.TypeName) -> str:
    return ty.name


def _tensor_type(ty: t.TensorType) -> str:
    dims = _commas([_dim(d) for d in ty.dims], ty.dims)
    return f"Tensor[{dims}; {print_type(ty.dtype)}]"


def _dim(d: t.Expr | t.PackIx) -> str:
    return "*" + d.name if isinstance(d, t.PackIx) else _expr(d, LOOSEST, closed=False)


def _tuple_type(ty: t.TupleType) -> str:
    return "(" + ", ".join(print_type(x) for x in ty.items) + ")"


_TYPES: dict[type, Callable[..., str]] = {
    t.TypeName: _type_name, t.TensorType: _tensor_type, t.TupleType: _tuple_type,
}


# ----------------------------------------------------------------- statements

def _annotation(ty: t.TypeExpr | None) -> str:
    return "" if ty is None else ": " + print_type(ty)


def _let(s: t.Let) -> str:
    return f"let {s.name}{_annotation(s.annotation)} = {print_expr(s.value)}"


def _let_tuple(s: t.LetTuple) -> str:
    return f"let ({', '.join(s.names)}) = {print_expr(s.value)}"


def _let_index(s: t.LetIndex) -> str:
    return f"let {s.name}[{_ixvars(s.indices)}] = {print_expr(s.value)}"


def _var(s: t.VarDecl) -> str:
    return f"var {s.name}{_annotation(s.annotation)} = {print_expr(s.value)}"


def _assign(s: t.Assign) -> str:
    return f"{s.name} = {print_expr(s.value)}"


def _return(s: t.Return) -> str:
    return f"return {print_expr(s.value)}"


def _for(s: t.For) -> str:
    static = "static " if s.static else ""
    return f"{static}for {s.var} in {_range(s.lo, s.hi)} {_body(s.body)}"


def _for_each(s: t.ForEach) -> str:
    return f"static for {s.var} in {print_expr(s.iterable)} {_body(s.body)}"


def _while(s: t.While) -> str:
    return f"while {print_expr(s.cond)} {_body(s.body)}"


def _yield(s: t.Yield) -> str:
    return f"yield {print_expr(s.value)}"


def _effect(s: t.Effect) -> str:
    return f"{s.kind}({_args(s.args)})"


_STMTS: dict[type, Callable[..., str]] = {
    t.Let: _let, t.LetTuple: _let_tuple, t.LetIndex: _let_index, t.VarDecl: _var,
    t.Assign: _assign, t.Return: _return, t.For: _for, t.While: _while, t.Yield: _yield,
    t.Effect: _effect, t.ForEach: _for_each,
}


def _body(stmts: tuple[t.Stmt, ...]) -> str:
    """A braced body, one statement per line, one level deeper."""
    if not stmts:
        return "{}"
    inner = "\n".join(_STMTS[type(s)](s) for s in stmts)
    return "{\n" + _indent(inner, 1) + "\n}"


def _indent(text: str, levels: int) -> str:
    pad = INDENT * levels
    return "\n".join(pad + line if line else line for line in text.split("\n"))


# ---------------------------------------------------------------------- items

def _generics(gs: tuple[t.Generic, ...]) -> str:
    return "<" + ", ".join(_generic(g) for g in gs) + ">" if gs else ""


def _generic(g: t.Generic) -> str:
    default = "" if g.default is None else " = " + print_expr(g.default)
    return f"{'*' if g.pack else ''}{g.name}: {g.kind}{default}"


def _params(ps: tuple[t.Param, ...]) -> str:
    return "(" + ", ".join(_param(p) for p in ps) + ")"


def _param(p: t.Param) -> str:
    return f"{p.name}: {print_type(p.type)}{default(p)}"


def _where(conds: tuple[t.Expr, ...]) -> str:
    """`where` goes on its own line: at item level newlines are not significant."""
    return "\nwhere " + _list(conds) if conds else ""


def _const(c: t.Const) -> str:
    return f"const {c.name}{_annotation(c.annotation)} = {print_expr(c.value)}"


def _function(f: t.Function) -> str:
    result = "" if f.result is None else " -> " + print_type(f.result)
    head = f"{f.kind} {f.name}{_generics(f.generics)}{_params(f.params)}{result}"
    return f"{head}{_where(f.where)} {_body(f.body)}{_grad(f.grad)}"


def _grad(g: t.GradClause | None) -> str:
    """A `grad` clause follows the body on the same line (only ops may have one: E2125)."""
    return "" if g is None else f" grad({g.result}, {g.seed}) {_body(g.body)}"


def _op(o: t.Op) -> str:
    head = f"op {o.name}{_generics(o.generics)}{_params(o.params)} -> {print_type(o.result)}"
    if o.kernel is not None:
        args = "" if o.kernel.args is None else "<" + _list(o.kernel.args) + ">"
        head += f" kernel {o.kernel.name}{args}"
    return f"{head}{_where(o.where)} {_body(o.body)}{_grad(o.grad)}"


def _kernel(k: t.Kernel) -> str:
    results = ", ".join(_param(p) for p in k.results)
    results = f"({results})" if k.tuple_results else results
    head = f"kernel {k.name}{_generics(k.generics)}{_params(k.params)} -> {results}"
    head += f" grid({_list(k.grid)})"
    if k.warps is not None:
        head += f" warps({print_expr(k.warps)})"
    if k.stages is not None:
        head += f" stages({print_expr(k.stages)})"
    return f"{head}{_where(k.where)} {_body(k.body)}"


def _block_def(b: t.BlockDef) -> str:
    """Members one per line, a blank line before and after each function."""
    parts: list[str] = []
    for m in b.members:
        text = _MEMBERS[type(m)](m)
        if isinstance(m, t.Function) or (parts and parts[-1].startswith(("fn", "entry", "pub"))):
            parts.append("")
        parts.append(text)
    inner = "\n".join(parts).strip("\n")
    head = f"block {b.name}{_generics(b.generics)}{_where(b.where)}"
    return head + (" {\n" + _indent(inner, 1) + "\n}" if inner else " {}")


def _tensor_member(m: t.TensorMember) -> str:
    init = "" if m.init is None else " = " + print_expr(m.init)
    return f"{m.kind} {m.name}: {print_type(m.type)}{init}"


def _sub(m: t.Sub) -> str:
    ty = m.type
    text = ty.block + ("" if ty.generics is None else "<" + _list(ty.generics) + ">")
    if ty.count is not None:
        text = f"[{text}; {print_expr(ty.count)}]"
    init = "" if m.init is None else " = " + print_expr(m.init)
    return f"sub {m.name}: {text}{'?' if m.optional else ''}{init}"


def _member_fn(f: t.Function) -> str:
    return ("pub " if f.public else "") + _function(f)


_MEMBERS: dict[type, Callable[..., str]] = {
    t.TensorMember: _tensor_member, t.Sub: _sub, t.Function: _member_fn,
}

_ITEMS: dict[type, Callable[..., str]] = {
    t.Const: _const, t.Function: _function, t.Op: _op, t.Kernel: _kernel,
    t.BlockDef: _block_def,
}


# ------------------------------------------------------------- the value constructs
# aliases, structs, enums, optionals, `match`, `...`: a `match` arm holding statements is
# made by the flattening of block entries alone, and printed for its dumps


def _field(e: t.Field, closed: bool) -> str:
    base = _expr(e.base, POSTFIX, closed=True)
    if isinstance(e.base, (t.IntLit, t.FloatLit)):
        base = f"({base})"  # `1.x` would lex as a number
    return f"{base}.{e.name}"


def _none(e: t.NoneLit, closed: bool) -> str:
    return "none"


def _some(e: t.Some, closed: bool) -> str:
    return f"some({print_expr(e.value)})"


def _pattern(pat: t.Pattern) -> str:
    if isinstance(pat, t.VariantPat):
        return f"{pat.enum}.{pat.variant}"
    if isinstance(pat, t.NonePat):
        return "none"
    inner = ", ".join(pat.names)
    return f"some(({inner}))" if pat.tuple_ else f"some({inner})"


def _match(e: t.Match, closed: bool) -> str:
    """One arm per line: arms have no separator, a newline reads best."""
    arms = [f"{_pattern(a.pattern)} => {_arm_value(a.value)}" for a in e.arms]
    scrutinee = _expr(e.scrutinee, LOOSEST, closed=False)
    return f"match {scrutinee} {{\n" + _indent("\n".join(arms), 1) + "\n}"


def _arm_value(value: t.Expr | t.Block) -> str:
    """An arm's value; one starting with `(` or `+`/`-` would join the arm before it when
    written on one line, and on its own line a leading `+` would too. A `Block`, which
    only the flattening of a block entry makes (the parser does not read one back), is
    printed as an `if` branch is, one statement per line."""
    if isinstance(value, t.Block):
        return _block(value, _block_value(value), tall=True)
    text = _expr(value, LOOSEST, closed=False)
    return f"({text})" if text.startswith("+") else text


def _generic_type(ty: t.GenericType) -> str:
    return f"{ty.name}<{_list(ty.args)}>"


def _optional_type(ty: t.OptionalType) -> str:
    return print_type(ty.inner) + "?"


def _alias(a: t.TypeAlias) -> str:
    return f"type {a.name}{_generics(a.generics)} = {print_type(a.type)}"


def _struct(s: t.Struct) -> str:
    fields = "\n".join(f"{f.name}: {print_type(f.type)}" for f in s.fields)
    body = "{\n" + _indent(fields, 1) + "\n}" if fields else "{}"
    return f"struct {s.name}{_generics(s.generics)} {body}"


def _enum(e: t.Enum) -> str:
    return f"enum {e.name} {{ {', '.join(e.variants)} }}"


def default(param: t.Param) -> str:
    """` = value` for a parameter with a default, else nothing."""
    return "" if param.default is None else " = " + print_expr(param.default)


_EXPRS.update({t.Field: _field, t.NoneLit: _none, t.Some: _some, t.Match: _match})
_TYPES.update({t.GenericType: _generic_type, t.OptionalType: _optional_type})
_ITEMS.update({t.TypeAlias: _alias, t.Struct: _struct, t.Enum: _enum})
