"""The front end never crashes: any text gets diagnostics or checks cleanly.

Random token soups, random mutations of real programs, and pathologically deep
expressions go through `check_program` (and the deep ones through `linnet
check` too, whose exit status must be 0 or 1, never 3 for an internal error).
Whatever still parses must also survive the printer's round trip.
"""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linnet.cli.main import main as linnet_main
from linnet.diagnostics import Diagnostic
from linnet.check.frontend import check_program
from linnet.syntax.lexer import KEYWORDS, PUNCT, RESERVED
from linnet.syntax.parser import parse
from linnet.syntax.printer import print_module

from budget import scaled

ROOT = Path(__file__).resolve().parents[2]

SEEDS = [
    """\
module fuzz.seed
use fuzz.other

const K: i64 = 0xff
/* nested /* comment */ */
pub kernel row_softmax<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R, C; f32] grid(R) warps(4) stages(2)
where B >= C {
    let row = program_id(0)
    let cols = iota<i32>(B)
    let mask = cols < C
    let v = load(x[row, cols], mask, -1e30)
    let e = exp(v - max[c] v[c])
    store(y[row, cols], e / sum[c] e[c], mask)
}

pub op softmax<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] kernel row_softmax<R, C, 1024> {
    let top[r] = max[c] x[r, c]
    let e[r, c] = exp(x[r, c] - top[r])
    let total[r] = sum<f32>[c] e[r, c]
    let y[r, c] = e[r, c] / total[r]
    return y
} grad(y, dy) {
    let s[r] = sum[c] y[r, c] * dy[r, c]
    let dx[r, c] = y[r, c] * (dy[r, c] - s[r])
    return dx
}
""",
    """\
module fuzz.stmts

fn f<*S: Shape, N: Dim, T: Float = f32>(x: Tensor[*S, N; T], flag: bool) -> (Tensor[*S, N; T], i64) {
    var acc: i64 = 0
    for i in 0..N {
        acc = acc + i
    }
    static for j in 0..4 {
        acc = acc * 2
    }
    while acc > 0 && flag {
        acc = acc - 1
    }
    let ys = for i in 0..N {
        yield x[*S, i]
    }
    let (a, b) = (x, acc)
    let z = if flag { a } else if acc < 3 { a * 2.0 } else {
        let w = cast<T>(1.0)
        a + w
    }
    let q = concat(z, z, axis = -1)[:, 0:N:2]
    return (z, b)
}

entry main(x: Tensor[2, 4; f32]) -> (Tensor[2, 4; f32], i64) {
    return f<2, 4, f32>(x, true)
}
""",
]


def corpus_texts() -> list[str]:
    files = sorted([*(ROOT / "examples").rglob("*.linnet"),
                    *(ROOT / "tests/spec").rglob("*.linnet")])
    return SEEDS + [p.read_text(encoding="utf-8") for p in files]


CORPUS = corpus_texts()
WORDS = sorted(set(KEYWORDS) | RESERVED | {
    "grad", "grid", "warps", "stages", "store", "atomic_add", "sum", "max", "any", "Tensor",
    "Dim", "Shape", "f32", "i64", "bool", "x", "y", "N", "load", "iota", "cast"})
PIECES = WORDS + [p for p, _ in PUNCT] + ["0", "1", "0xff", "2.5", "1e-5", "\n", "/*", "*/",
                                          "//", "007", "$"]

FUZZ = settings(max_examples=scaled(50), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


def check_text(tmp_path: Path, text: str) -> list[Diagnostic]:
    """Run the whole front end; it must not raise, and diagnostics must be well formed."""
    path = str(tmp_path / "fuzz.linnet")
    result = check_program(path, text)
    assert isinstance(result.diagnostics, list)
    for d in result.diagnostics:
        assert isinstance(d, Diagnostic) and re.fullmatch(r"E\d{4}", d.code), d
        assert 0 <= d.span.start <= d.span.end
    module, _ = parse(text, path)
    if module is not None:  # whatever parses also prints and parses back
        printed = print_module(module)
        assert parse(printed, path)[0] == module, printed
    return result.diagnostics


@FUZZ
@given(prefix=st.sampled_from(["", "module m\n", "module m\nfn f(x: f32) -> f32 {\n"]),
       pieces=st.lists(st.sampled_from(PIECES), max_size=40),
       gaps=st.lists(st.sampled_from([" ", "", "\n"]), min_size=40, max_size=40))
def test_token_soup_never_crashes(tmp_path, prefix, pieces, gaps):
    text = prefix + "".join(p + g for p, g in zip(pieces, gaps))
    check_text(tmp_path, text)


def tokens_of(text: str) -> list[str]:
    return re.findall(r"\s+|\w+|/\*|\*/|//|\.\.|->|[<>=!]=|&&|\|\||.", text)


@st.composite
def mutants(draw) -> str:
    """A corpus program with a few characters or tokens deleted, duplicated or swapped."""
    text = draw(st.sampled_from(CORPUS))
    units = list(text) if draw(st.booleans()) else tokens_of(text)
    for _ in range(draw(st.integers(1, 4))):
        if not units:
            break
        i = draw(st.integers(0, len(units) - 1))
        j = draw(st.integers(0, len(units) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "swap"]))
        if action == "delete":
            del units[i]
        elif action == "duplicate":
            units.insert(j, units[i])
        else:
            units[i], units[j] = units[j], units[i]
    return "".join(units)


@FUZZ
@given(text=mutants())
def test_mutated_programs_never_crash(tmp_path, text):
    check_text(tmp_path, text)


def test_every_corpus_program_checks_without_crashing(tmp_path):
    for text in CORPUS:
        check_text(tmp_path, text)


# ------------------------------------------------------------------ deep input

def program(value: str) -> str:
    return f"module deep\n\nentry main(c: bool) -> i64 {{\n    let v = {value}\n    return v\n}}\n"


DEEP = {
    "parentheses": program("(" * 500 + "1" + ")" * 500),
    "nested_if": program("if c { " * 500 + "1" + " } else { 2 }" * 500),
    "else_if_chain": program("if c { 0 }" + " else if c { 1 }" * 500 + " else { 2 }"),
    "unary_minus": program("-" * 500 + "1"),
    "long_sum": program(" + ".join(["1"] * 5000)),
}


@pytest.fixture
def restore_interpreter():
    """`linnet.cli.main.main` raises the recursion limit and thread stack size for its worker;
    put them back so that later tests see the interpreter as pytest set it up."""
    limit, stack = sys.getrecursionlimit(), threading.stack_size()
    yield
    sys.setrecursionlimit(limit)
    threading.stack_size(stack)


@pytest.mark.parametrize("name", [
    "parentheses", "nested_if",
    "else_if_chain",
    "unary_minus",
    "long_sum",
])
def test_deep_input_gets_a_diagnostic_or_checks(tmp_path, name):
    """Called directly, on pytest's own stack and recursion limit."""
    assert sorted(DEEP) == sorted(["parentheses", "nested_if", "else_if_chain", "unary_minus",
                                   "long_sum"])
    text = DEEP[name]
    diagnostics = check_program(str(tmp_path / "deep.linnet"), text).diagnostics
    assert all(isinstance(d, Diagnostic) for d in diagnostics)


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_input_through_the_command_line(tmp_path, name, capsys, restore_interpreter):
    path = tmp_path / "deep.linnet"
    path.write_text(DEEP[name], encoding="utf-8")
    status = linnet_main(["check", str(path)])
    err = capsys.readouterr().err
    assert status in (0, 1), err
    assert "internal compiler error" not in err


def test_too_deep_nesting_is_reported_not_crashed(tmp_path):
    diagnostics = check_program(str(tmp_path / "deep.linnet"), DEEP["parentheses"]).diagnostics
    assert diagnostics and diagnostics[0].code == "E1006"
