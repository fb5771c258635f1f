"""Names a program may not declare: reserved words (E1004) and builtin names (E1207).

Words reserved for the future (`await`, `device`, `trait`, ...) are reserved like the
other reserved words: never a name. A local, parameter, generic, kernel result or `grad`
clause name may not be a prelude name (`let sqrt = ...`) or a kernel builtin, since it would
hide the builtin from every call in its scope; the reductions `sum prod any all` and the
kernel statement words `store atomic_*` stay usable as names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from linnet.check.scope import PRELUDE
from linnet.diagnostics import SourceFile
from linnet.check.frontend import check_program
from linnet.syntax.lexer import FUTURE, RESERVED, tokenize

FUTURE_WORDS = "async await effect unsafe macro trait impl derive rng mut ref device"


def _diagnostics(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    """(code, the source text of the span) of each diagnostic."""
    path = tmp_path / "prog.linnet"
    path.write_text(text)
    return [(d.code, text[d.span.start:d.span.end])
            for d in check_program(str(path)).diagnostics]


def test_the_future_words_are_reserved():
    assert FUTURE == set(FUTURE_WORDS.split()) and FUTURE <= RESERVED
    tokens = tokenize(FUTURE_WORDS, "t.linnet").tokens
    assert [tok.type for tok in tokens] == ["RESERVED"] * len(FUTURE)


PLACES = [
    "module m\n\nentry main(x: f32) -> f32 {{\n    let {w} = x\n    return x\n}}\n",
    "module m\n\nentry main({w}: f32) -> f32 {{\n    return 1.0\n}}\n",
    "module m\n\nfn {w}(x: f32) -> f32 {{\n    return x\n}}\n",
    "module m\n\nfn f<{w}: Dim>(x: Tensor[4; f32]) -> f32 {{\n    return 1.0\n}}\n",
    "module m\n\nentry main(x: Tensor[4; f32]) -> Tensor[4; f32] {{\n"
    "    let y[{w}] = x[{w}]\n    return y\n}}\n",
    "module m\n\nentry main(x: f32) -> f32 {{\n    for {w} in 0..2 {{\n    }}\n    return x\n}}\n",
]


@pytest.mark.parametrize("word", FUTURE_WORDS.split())
@pytest.mark.parametrize("place", range(len(PLACES)))
def test_a_future_word_as_a_name_is_e1004(tmp_path, word, place):
    assert _diagnostics(tmp_path, PLACES[place].format(w=word)) == [("E1004", word)]


@pytest.mark.parametrize("place", range(len(PLACES)))
def test_random_is_a_name_everywhere_a_name_stands(tmp_path, place):
    """`random` is no longer reserved (the standard library has a module `std.random`);
    `rng` still is."""
    assert "random" not in RESERVED and "rng" in RESERVED
    found = _diagnostics(tmp_path, PLACES[place].format(w="random"))
    assert [code for code, _ in found if code == "E1004"] == []


def test_random_names_a_module(tmp_path):
    (tmp_path / "random.linnet").write_text(
        "module random\n\npub fn jitter(x: f32) -> f32 {\n    return x + 1.0\n}\n")
    text = ("module m\nuse random::{jitter}\n\n"
            "entry main(x: f32) -> f32 {\n    let random = jitter(x)\n    return random\n}\n")
    assert _diagnostics(tmp_path, text) == []


def test_a_future_word_is_e1004_through_the_whole_message(tmp_path):
    path = tmp_path / "prog.linnet"
    path.write_text(PLACES[0].format(w="await"))
    [d] = check_program(str(path)).diagnostics
    assert d.message == "`await` is a reserved word"
    assert SourceFile.of(str(path), path.read_text()).position(d.span.start) == (4, 9)


DECLARATIONS = [
    ("let", "    let {w} = x * 2.0\n"),
    ("let tuple", "    let (a, {w}) = (x, x)\n"),
    ("var", "    var {w} = x\n"),
    ("index notation", "    let {w}[i] = x[i]\n"),
    ("for counter", "    for {w} in 0..2 {{\n    }}\n"),
    ("scan counter", "    let s = for {w} in 0..2 {{\n        yield x\n    }}\n"),
    ("static for counter", "    static for {w} in 0..2 {{\n    }}\n"),
]


@pytest.mark.parametrize("word", ["sqrt", "cast", "min", "max", "select", "iota", "load"])
@pytest.mark.parametrize("kind, line", DECLARATIONS, ids=[k for k, _ in DECLARATIONS])
def test_a_local_named_like_a_builtin_is_e1207(tmp_path, word, kind, line):
    text = ("module m\n\nentry main(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
            + line.format(w=word) + "    return x\n}\n")
    assert _diagnostics(tmp_path, text) == [("E1207", word)]


@pytest.mark.parametrize("word", sorted(PRELUDE))
def test_every_prelude_name_is_refused_as_a_parameter(tmp_path, word):
    text = f"module m\n\nfn f({word}: f32) -> f32 {{\n    return 1.0\n}}\n"
    assert _diagnostics(tmp_path, text) == [("E1207", f"{word}: f32")]


def test_generics_kernel_results_and_grad_names_are_declarations_too(tmp_path):
    text = """module m

fn f<exp: Dim>(x: Tensor[exp; f32]) -> Tensor[exp; f32] {
    return exp(x)
}

kernel k(x: Tensor[16; f32]) -> abs: Tensor[16; f32] grid(1) {
    let offs = iota<i32>(16)
    store(abs[offs], load(x[offs]))
}

pub op g(x: Tensor[4; f32]) -> Tensor[4; f32] {
    return x * 2.0
} grad(sqrt, dy) {
    return dy * 2.0
}
"""
    assert _diagnostics(tmp_path, text) == [
        ("E1207", "exp: Dim"), ("E1207", "abs: Tensor[16; f32]"), ("E1207", "sqrt")]


def test_a_call_of_a_hidden_builtin_is_not_a_second_error(tmp_path):
    text = ("module m\n\nentry main(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
            "    let exp = x\n    let y = exp(x)\n    return y\n}\n")
    assert _diagnostics(tmp_path, text) == [("E1207", "exp")]


def test_reductions_and_statement_words_stay_usable(tmp_path):
    text = ("module m\n\nentry main(x: Tensor[4; f32]) -> f32 {\n"
            "    let sum = sum[i] x[i]\n    let prod = prod[i] x[i]\n"
            "    let any = any[i] x[i] > 0.0\n    let all = all[i] x[i] > 0.0\n"
            "    let store: f32 = 1.0\n    var atomic_add = sum * prod\n"
            "    let sqrt_ = sqrt(store)\n"
            "    return select(any && all, atomic_add, sqrt_)\n}\n")
    assert _diagnostics(tmp_path, text) == []
