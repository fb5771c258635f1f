"""Mutants of real programs: small random edits of a parsed surface tree.

Why: the corpus holds programs someone wrote; a compiler fails on the ones nobody wrote. A
mutant is a corpus program with one to a few edits a careless or curious user could make
(another operator, literal, dtype, reduction or prelude function; a statement dropped or
repeated; an expression replaced by one of its operands), printed back to text by the
surface printer. Most mutants no longer check, which exercises the checker's diagnostics;
those that still check go through every backend (`linnet.fuzz.crosscheck`).

The edits are structural, so every mutant parses; spans are not kept (the text is parsed
again). Edits are drawn from a `random.Random`, so a seed names a mutant. Kernels are left
as written: the sizes and dtypes they run at change with the entries around them.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Callable, Iterator

from ..syntax import tree as t
from ..syntax.edit import nodes, replace
from ..syntax.parser import parse
from ..syntax.printer import print_module

__all__ = ["mutant", "mutants", "nodes"]

OPERATOR_GROUPS = (("+", "-", "*", "/", "%"), ("==", "!=", "<", "<=", ">", ">="),
                   ("&", "|", "^"), ("&&", "||"))
REDUCTION_GROUPS = (("sum", "prod", "max", "min"), ("any", "all"))
CALL_GROUPS = (("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "abs"), ("min", "max"),
               ("shl", "shr"))
DTYPE_GROUPS = (("f16", "bf16", "f32", "f64"), ("i8", "i16", "i32", "i64", "u8", "u16", "u32",
                                                  "u64"))
INTS = (0, 1, 2, 3, 5, 7, 16, 17, 31, 100, 127, 128, 255, 256, 1000, 32767, 65535,
        2**31 - 1, 2**31, 2**63 - 1)
FLOATS = (0.0, 0.5, 1.0, 2.0, 3.5, 1e-30, 1e-3, 1e5, 65504.0, 1e30, 1e300)


def _other(value: str, groups: tuple[tuple[str, ...], ...], rng: random.Random) -> str | None:
    for group in groups:
        if value in group:
            return rng.choice([v for v in group if v != value])
    return None


def _edit_binary(e: t.Binary, rng: random.Random) -> object | None:
    choice = rng.random()
    if choice < 0.6:
        op = _other(e.op, OPERATOR_GROUPS, rng)
        return dataclasses.replace(e, op=op) if op else None
    return e.left if choice < 0.8 else e.right


def _edit_unary(e: t.Unary, rng: random.Random) -> object | None:
    return e.operand


def _edit_int(e: t.IntLit, rng: random.Random) -> object | None:
    value = rng.choice(INTS)
    return t.IntLit(value, str(value))


def _edit_float(e: t.FloatLit, rng: random.Random) -> object | None:
    value = rng.choice(FLOATS)
    return t.FloatLit(value, repr(value))


def _edit_bool(e: t.BoolLit, rng: random.Random) -> object | None:
    return t.BoolLit(not e.value)


def _edit_call(e: t.Call, rng: random.Random) -> object | None:
    callee = _other(e.callee, CALL_GROUPS, rng)
    if callee:
        return dataclasses.replace(e, callee=callee)
    args = [a.value for a in e.args if a.name is None]
    return rng.choice(args) if args and rng.random() < 0.3 else None


def _edit_reduce(e: t.Reduce, rng: random.Random) -> object | None:
    op = _other(e.op, REDUCTION_GROUPS, rng)
    return dataclasses.replace(e, op=op) if op else None


def _edit_type_name(e: t.TypeName, rng: random.Random) -> object | None:
    name = _other(e.name, DTYPE_GROUPS, rng)
    return dataclasses.replace(e, name=name) if name else None


def _edit_statements(node: object, rng: random.Random) -> object | None:
    """Drop or repeat one statement of a statement list (a body, a block, a loop)."""
    lists = [f.name for f in dataclasses.fields(node)
             if f.name in ("body", "stmts") and isinstance(getattr(node, f.name), tuple)
             and getattr(node, f.name)]
    if not lists:
        return None
    name = rng.choice(lists)
    stmts = list(getattr(node, name))
    k = rng.randrange(len(stmts))
    if rng.random() < 0.5:
        del stmts[k]
    else:
        stmts.insert(k, stmts[k])
    return dataclasses.replace(node, **{name: tuple(stmts)})


EDITS: dict[type, Callable[[object, random.Random], object | None]] = {
    t.Binary: _edit_binary, t.Unary: _edit_unary, t.IntLit: _edit_int,
    t.FloatLit: _edit_float, t.BoolLit: _edit_bool, t.Call: _edit_call,
    t.Reduce: _edit_reduce, t.TypeName: _edit_type_name, t.Function: _edit_statements,
    t.Op: _edit_statements, t.Block: _edit_statements,
    t.For: _edit_statements, t.While: _edit_statements, t.ForExpr: _edit_statements,
}


def _edit_once(module: t.Module, rng: random.Random) -> t.Module:
    """One edit anywhere but inside a kernel: a kernel is a tile program whose memory
    accesses its author keeps in range (docs/language.md, "Kernels"), and an edited mask or
    offset writes out of bounds, which no backend is asked to survive."""
    candidates = [n for item in module.items if not isinstance(item, t.Kernel)
                  for n in nodes(item) if type(n) in EDITS]
    for _ in range(20):
        if not candidates:
            break
        target = rng.choice(candidates)
        new = EDITS[type(target)](target, rng)
        if new is not None:
            return replace(module, target, new)
    return module


def mutant(text: str, rng: random.Random, *, edits: int | None = None,
           path: str = "<mutant>.linnet") -> str | None:
    """The text of a mutant of `text` (1 to 3 edits unless `edits`), or None when `text`
    does not parse or no edit applies."""
    module, _ = parse(text, path)
    if module is None:
        return None
    for _ in range(edits or rng.randint(1, 3)):
        module = _edit_once(module, rng)
    out = print_module(module)
    return out if out != text else None


def mutants(texts: list[str], count: int, seed: int = 0) -> Iterator[tuple[int, str]]:
    """`count` mutants of the texts, each with the index of the text it came from."""
    rng = random.Random(seed)
    made = 0
    while made < count:
        k = rng.randrange(len(texts))
        text = mutant(texts[k], rng)
        if text is not None:
            made += 1
            yield k, text
