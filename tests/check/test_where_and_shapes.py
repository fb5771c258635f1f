"""`where` clauses as a set, parameter types under `where`, `reshape` counts over several
untouched dims, the extents of strided slices (bounds clamped to the axis), and `...`
before a shape pack (checked programs, end to end)."""

from __future__ import annotations

import pytest

from linnet.check.frontend import check_program


def diagnostics(source: str) -> list[tuple[str, str]]:
    """(code, message) of each diagnostic of a one-module program."""
    result = check_program("test.linnet", "module test\n\n" + source)
    return [(d.code, d.message) for d in result.diagnostics]


# ------------------------------------------------------------------ where: a set


@pytest.mark.parametrize("where", ["A % G == 0, G > 0", "G > 0, A % G == 0"])
def test_where_clauses_in_any_order(where: str) -> None:
    source = (f"fn chunks<A: Dim, G: Dim>(v: Tensor[A; f32]) -> Tensor[G, A / G; f32] "
              f"where {where} {{\n    return reshape(v, [G, A / G])\n}}\n")
    assert diagnostics(source) == []


def test_a_clause_states_its_divisor_positive() -> None:
    """`/` in a clause is part of the stated fact (no E2205 there): the clause implies
    `G > 0`, which the body may use and each call proves first."""
    source = ("fn f<A: Dim, G: Dim>(v: Tensor[A; f32]) -> Tensor[A / G; f32] where A / G >= 1 {\n"
              "    return fill<f32>([A / G], 0.0)\n}\n"
              "fn g<B: Dim, H: Dim>(v: Tensor[B; f32]) -> Tensor[B; f32] {\n"
              "    let w = f<B, H>(v)\n    return v\n}\n")
    assert diagnostics(source) == [("E2206", "cannot prove `H > 0`, required by `f`")]


@pytest.mark.parametrize(("divisor", "where", "label", "help_"), [
    ("N - 1", "", "may be zero or negative", "add a `where` clause such as `where N - 1 > 0`"),
    ("0", "", "never positive", "`0` is at most 0 for every size the `where` clauses allow: "
                                "divide by an expression that is at least 1"),
    ("N - N", "", "never positive", "`0` is at most 0"),
    ("N - 4", "where N <= 4", "never positive", "`N - 4` is at most 0"),
])
def test_the_help_of_e2205_offers_a_where_clause_only_where_one_could_hold(
        divisor: str, where: str, label: str, help_: str) -> None:
    source = (f"fn f<N: Dim>(v: Tensor[N; f32]) -> Tensor[N / ({divisor}); f32] {where} {{\n"
              f"    return fill<f32>([N / ({divisor})], 0.0)\n}}\n")
    result = check_program("test.linnet", "module test\n\n" + source)
    first = result.diagnostics[0]
    assert (first.code, first.label) == ("E2205", label)
    assert first.help.startswith(help_)


def test_a_default_sees_the_where_clauses() -> None:
    source = ("fn part<N: Dim, G: Dim, M: Dim = N / G>(v: Tensor[N; f32]) -> Tensor[N; f32] "
              "where G > 0 {\n    return v\n}\n")
    assert diagnostics(source) == []


def test_callers_still_prove_every_clause() -> None:
    source = ("fn chunks<A: Dim, G: Dim>(v: Tensor[A; f32]) -> Tensor[G, A / G; f32] "
              "where A % G == 0, G > 0 {\n    return reshape(v, [G, A / G])\n}\n"
              "entry main(v: Tensor[12; f32]) -> Tensor[4, 3; f32] {\n"
              "    return chunks<12, 4>(v)\n}\n"
              "entry bad(v: Tensor[12; f32]) -> Tensor[5, 2; f32] {\n"
              "    return chunks<12, 5>(v)\n}\n")
    assert [code for code, _ in diagnostics(source)] == ["E2206"]


# ------------------------------------------------------- parameter types see where


def test_parameter_types_see_the_where_clauses() -> None:
    source = ("fn keep<H: Dim, N: Dim>(s: Tensor[H / N; f32]) -> Tensor[H / N; f32] "
              "where N > 0 {\n    return s\n}\n")
    assert diagnostics(source) == []


def test_parameter_types_without_the_fact() -> None:
    source = ("fn keep<H: Dim, N: Dim>(s: Tensor[H / N; f32]) -> Tensor[H; f32] {\n"
              "    return s\n}\n")
    assert diagnostics(source)[0] == ("E2205", "divisor `N` is not provably positive")


# ------------------------------------------------------------ reshape element counts


@pytest.mark.parametrize("before, after", [
    ("A", "G, A / G"),
    ("P, A", "P, G, A / G"),
    ("P, Q, A", "P, Q, G, A / G"),
    ("P, Q, R, A", "P, Q, R, G, A / G"),
    ("P, A, Q", "P, G, A / G, Q"),
    ("P, Q, G, A / G", "P, Q, A"),
])
def test_reshape_splits_an_axis_among_untouched_ones(before: str, after: str) -> None:
    generics = "P: Dim, Q: Dim, R: Dim, A: Dim, G: Dim"
    source = (f"fn split<{generics}>(v: Tensor[{before}; f32]) -> Tensor[{after}; f32] "
              f"where G > 0, A % G == 0 {{\n    return reshape(v, [{after}])\n}}\n")
    assert diagnostics(source) == []


def test_reshape_without_divisibility_is_refused() -> None:
    source = ("fn split<P: Dim, Q: Dim, A: Dim, G: Dim>(v: Tensor[P, Q, A; f32]) "
              "-> Tensor[P, Q, G, A / G; f32] where G > 0 {\n"
              "    return reshape(v, [P, Q, G, A / G])\n}\n")
    assert [code for code, _ in diagnostics(source)] == ["E2203"]


# --------------------------------------------------------------------- strided slices


def slice_type(param: str, where: str, index: str) -> str:
    """The shape the checker gives `v[index]`, read from the E2202 of a wrong result; `v`
    is a `Tensor[param; f32]`, or `param` itself when it is a whole tensor type (with a
    shape pack `*S` and dims `B` and `D`)."""
    packed = param.startswith("Tensor[")
    ty = param if packed else f"Tensor[{param}; f32]"
    generics = "*S: Shape, D: Dim, B: Dim" if packed else "L: Dim"
    source = (f"fn f<{generics}>(v: {ty}) -> Tensor[1000, 1000; f32] {where} {{\n"
              f"    return v[{index}]\n}}\n")
    [(code, message)] = diagnostics(source)
    assert code == "E2202", message
    return message.split("found ")[1]


@pytest.mark.parametrize("param, where, index, extent", [
    ("L", "where L % 2 == 0", "0::2", "[L / 2]"),
    ("L", "where L % 2 == 0, L >= 2", "1::2", "[L / 2]"),
    ("L", "where L >= 2", "1::2", "[L / 2]"),
    ("2 * L", "", "::2", "[L]"),
    ("2 * L", "", "0:2 * L:2", "[L]"),
    ("3 * L", "", "::3", "[L]"),
    ("L", "where L % 4 == 0", "::4", "[L / 4]"),
    ("L", "", "0::2", "[(L + 1) / 2]"),
    # bounds clamp to the axis
    ("L", "", "1::2", "[L / 2]"),                       # 0 of an empty axis too
    ("L", "", "3::2", "[(L - min(L, 3) + 1) / 2]"),     # past the end of a short axis
    ("L", "", "5:2", "[0]"),
    ("L", "", "L:", "[0]"),
    ("L", "", "0:L + 1", "[L]"),
    ("4", "", "2:9", "[2]"),
    ("5", "", "1::2", "[2]"),
    ("1", "", "1::2", "[0]"),
    ("3", "", "5:9", "[0]"),
    # `...` before a shape pack
    ("Tensor[*S, D; f32]", "where D >= 1", "..., 0::2", "[*S, (D + 1) / 2]"),
    ("Tensor[*S, D; f32]", "where D >= 1", "..., 1::2", "[*S, D / 2]"),
    ("Tensor[*S, D; f32]", "where D >= 1", "..., D - 1", "[*S]"),
    ("Tensor[B, *S, D; f32]", "where D >= 1, B >= 1", "B - 1, ..., 1:", "[*S, D - 1]"),
    ("Tensor[B, *S, D; f32]", "where D >= 1, B >= 1", "1:, ...", "[B - 1, *S, D]"),
    ("Tensor[*S, D; f32]", "", "...", "[*S, D]"),
])
def test_strided_slice_extents(param: str, where: str, index: str, extent: str) -> None:
    assert slice_type(param, where, index) == extent


def test_strided_slices_check_against_their_declared_types() -> None:
    source = ("fn evens<L: Dim>(v: Tensor[L; f32]) -> Tensor[L / 2; f32] where L % 2 == 0 {\n"
              "    return v[0::2]\n}\n"
              "fn odds<L: Dim>(v: Tensor[L; f32]) -> Tensor[L / 2; f32] where L >= 2 {\n"
              "    return v[1::2]\n}\n"
              "fn halves<L: Dim>(v: Tensor[2 * L; f32]) -> Tensor[L; f32] {\n"
              "    return v[::2]\n}\n"
              "fn pairs<L: Dim>(v: Tensor[L; f32]) -> Tensor[L; f32] "
              "where L % 2 == 0, L >= 2 {\n"
              "    return concat(v[0::2], v[1::2], axis = 0)\n}\n"
              "fn columns<R: Dim, L: Dim>(v: Tensor[R, L; f32]) -> Tensor[R, L / 2; f32] "
              "where L >= 2 {\n    return v[:, 1::2]\n}\n")
    assert diagnostics(source) == []


def test_a_slice_past_an_empty_axis_keeps_nothing() -> None:
    """`L % 2 == 0` allows L = 0, where `1::2` starts past the end: its bounds clamp to
    the axis, and it keeps L / 2 positions, 0 there."""
    source = ("fn odds<L: Dim>(v: Tensor[L; f32]) -> Tensor[L / 2; f32] where L % 2 == 0 {\n"
              "    return v[1::2]\n}\n")
    assert diagnostics(source) == []


@pytest.mark.parametrize("index, message", [
    ("L - 4:", "slice bound L - 4 not provably non-negative"),
    (":L - 4", "slice bound L - 4 not provably non-negative"),
    ("::0", "slice step 0 not provably positive"),
])
def test_slice_bounds_are_non_negative_and_the_step_positive(index: str, message: str) -> None:
    source = f"fn f<L: Dim>(v: Tensor[L; f32]) -> f32 {{\n    let w = v[{index}]\n    return 0.0\n}}\n"
    assert diagnostics(source) == [("E2209", message)]


# -------------------------------------------------------------- `...` before a shape pack


@pytest.mark.parametrize("result, where, body, found", [
    ("Tensor[*S, D / 2; f32]", "where D % 2 == 0", "x[..., 0::2] + x[..., 1::2]", []),
    ("Tensor[*S, D; f32]", "", "x[0, 1, ...]",
     [("E2204", "indices reach into the shape pack of Tensor[*S, D; f32]")]),
])
def test_halves_of_a_packed_axis_and_an_index_inside_the_pack(
        result: str, where: str, body: str, found: list) -> None:
    source = (f"fn f<*S: Shape, D: Dim>(x: Tensor[*S, D; f32]) -> {result} {where} {{\n"
              f"    return {body}\n}}\n")
    assert diagnostics(source) == found
