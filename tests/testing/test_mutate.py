"""Mutants of corpus programs (`linnet.testing.mutate`)."""

from __future__ import annotations

import random
from pathlib import Path

from linnet.syntax import edit, tree as t
from linnet.syntax.parser import parse
from linnet.testing import mutate

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = (ROOT / "examples" / "softmax.linnet").read_text()


def _module(text: str) -> t.Module:
    module, diagnostics = parse(text, "m.linnet")
    assert module is not None, diagnostics
    return module


def test_every_mutant_parses_and_differs() -> None:
    texts = [SOFTMAX, (ROOT / "examples" / "layer_norm.linnet").read_text()]
    made = list(mutate.mutants(texts, 30, seed=5))
    assert len(made) == 30
    for k, text in made:
        assert text != texts[k]
        _module(text)


def test_a_seed_names_its_mutants() -> None:
    assert list(mutate.mutants([SOFTMAX], 5, seed=9)) == list(mutate.mutants([SOFTMAX], 5, seed=9))
    assert list(mutate.mutants([SOFTMAX], 5, seed=9)) != list(mutate.mutants([SOFTMAX], 5, seed=10))


def test_binary_edits_keep_the_operator_group_or_take_an_operand() -> None:
    e = t.Binary("<", t.Name("a"), t.Name("b"))
    seen = {mutate._edit_binary(e, random.Random(s)) for s in range(60)}
    ops = {n.op for n in seen if isinstance(n, t.Binary)}
    assert ops and ops <= {"==", "!=", "<=", ">", ">="}
    assert t.Name("a") in seen and t.Name("b") in seen


def test_statement_edits_drop_or_repeat_one_statement() -> None:
    body = (t.Let("a", None, t.IntLit(1)), t.Return(t.Name("a")))
    fn = t.Function("fn", "f", (), (), None, (), body)
    lengths = {len(mutate._edit_statements(fn, random.Random(s)).body) for s in range(20)}
    assert lengths == {1, 3}


def test_replace_rebuilds_only_the_path_to_the_target() -> None:
    module = _module(SOFTMAX)
    target = next(n for n in mutate.nodes(module) if isinstance(n, t.FloatLit))
    new = edit.replace(module, target, t.FloatLit(2.5, "2.5"))
    assert sum(isinstance(n, t.FloatLit) and n.value == 2.5 for n in mutate.nodes(new)) == 1
    untouched = [i for i, j in zip(module.items, new.items) if i is j]
    assert len(untouched) == len(module.items) - 1


def test_kernels_are_never_edited() -> None:
    module = _module(SOFTMAX)
    kernel = next(i for i in module.items if isinstance(i, t.Kernel))
    for _, text in mutate.mutants([SOFTMAX], 40, seed=2):
        assert kernel in _module(text).items
