"""What `use` lines bring into a module's scope (check/imports.py): every `pub` item the
used module declares, or exactly the listed ones; a listed name that is missing or
private is E1201 naming what the module offers, one that is taken here is E1204."""

from __future__ import annotations

from pathlib import Path

from linnet.check.frontend import check_program

LIB = """module lib

pub const WIDTH = 4

pub fn one(x: f32) -> f32 {
    return x
}

pub fn two(x: f32) -> f32 {
    return hidden(x) * 2.0
}

fn hidden(x: f32) -> f32 {
    return x
}
"""


def _diagnostics(tmp_path: Path, uses: str, body: str = "return x",
                 items: str = "") -> list[tuple[str, str, str, str]]:
    """(code, message, help, the source text of the span) of each diagnostic."""
    (tmp_path / "lib.linnet").write_text(LIB)
    text = f"module main\n{uses}\n{items}\nentry main(x: f32) -> f32 {{\n    {body}\n}}\n"
    root = tmp_path / "main.linnet"
    root.write_text(text)
    return [(d.code, d.message, d.help, text[d.span.start:d.span.end])
            for d in check_program(str(root)).diagnostics]


def test_a_listed_name_comes_in_and_nothing_else(tmp_path):
    assert _diagnostics(tmp_path, "use lib::{two}", "return two(x)") == []
    [(code, message, _, at)] = _diagnostics(tmp_path, "use lib::{two}", "return one(x)")
    assert (code, message, at) == ("E1201", "undeclared function `one`", "one")


def test_a_listed_constant_is_a_dimension_too(tmp_path):
    found = _diagnostics(tmp_path, "use lib::{WIDTH}",
                         "let v = fill<f32>([WIDTH], x)\n    return sum[i] v[i]")
    assert found == []


def test_a_missing_name_lists_what_the_module_offers(tmp_path):
    [found] = _diagnostics(tmp_path, "use lib::{one, three}", "return one(x)")
    assert found == ("E1201", "module `lib` has no item `three`",
                     "`lib` offers `WIDTH`, `one`, `two`", "three")


def test_a_private_name_is_e1201_at_the_name_alone(tmp_path):
    [found] = _diagnostics(tmp_path, "use lib::{hidden}", "return hidden(x)")
    assert found[0] == "E1201" and found[1] == "`hidden` is private to module `lib`"
    assert found[2].startswith("mark it `pub` in `lib`") and found[3] == "hidden"


def test_a_listed_name_taken_here_is_e1204(tmp_path):
    mine = "fn one(x: f32) -> f32 {\n    return x + 1.0\n}\n"
    [found] = _diagnostics(tmp_path, "use lib::{one}", "return one(x)", mine)
    assert found[:2] == ("E1204", "`one` imported from `lib` names another item here too")
    assert found[3] == "one"


def test_without_a_list_the_own_item_wins_as_before(tmp_path):
    mine = "fn one(x: f32) -> f32 {\n    return x + 1.0\n}\n"
    assert _diagnostics(tmp_path, "use lib", "return one(x) + two(x)", mine) == []


def test_listing_an_item_twice_or_in_two_lines_is_one_item(tmp_path):
    uses = "use lib::{one, one}\nuse lib::{one, two}\nuse lib"
    assert _diagnostics(tmp_path, uses, "return one(x) + two(x)") == []


def test_a_module_that_failed_to_load_is_e1202_alone(tmp_path):
    found = _diagnostics(tmp_path, "use nowhere::{one}", "return one(x)")
    assert [(f[0], f[3]) for f in found] == [("E1202", "use")]


def test_a_module_is_checked_after_every_module_it_uses(tmp_path):
    """The root uses lib and wrap, and wrap uses lib too: lib loads before wrap (breadth
    first) but must be checked before it, or wrap's list finds nothing in lib."""
    (tmp_path / "lib.linnet").write_text(LIB)
    (tmp_path / "wrap.linnet").write_text(
        "module wrap\nuse lib::{two}\n\npub fn wrapped(x: f32) -> f32 {\n"
        "    return two(x)\n}\n")
    root = tmp_path / "main.linnet"
    root.write_text("module main\nuse lib::{one}\nuse wrap::{wrapped}\n\n"
                    "entry main(x: f32) -> f32 {\n    return one(wrapped(x))\n}\n")
    assert [d.code for d in check_program(str(root)).diagnostics] == []
