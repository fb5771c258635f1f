"""Kernel memory safety: every access proved inside its tensor (E2131), every stored result
proved written everywhere (E2132). Each case is one small kernel checked, no compiling."""

from __future__ import annotations

import pytest

from linnet.check.frontend import check_program

ROWS = """module rows

kernel k<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R, C; f32] grid(R)
where B >= 1 {
    let row = program_id(0)
    BODY
}
"""


def codes(body: str, header: str = ROWS) -> list[str]:
    return [d.code for d in diagnostics(body, header)]


def diagnostics(body: str, header: str = ROWS) -> list:
    text = header.replace("BODY", body)
    return check_program("rows.linnet", text).diagnostics


def test_a_loop_over_column_blocks_with_masks_is_proved() -> None:
    body = """for s in 0..(C + B - 1) / B {
        let cols = cast<i32>(s) * B + iota<i32>(B)
        let mask = cols < C
        store(y[row, cols], load(x[row, cols], mask, 0.0), mask)
    }"""
    assert codes(body) == []


@pytest.mark.parametrize("mask, kind", [
    ("cols <= C", "store"),        # one too far
    ("cols < R", "store"),         # the other axis's extent
    ("cols >= 0", "store"),        # says nothing of the upper end
    ("(cols < C) | (cols < 2)", "store"),  # `|` proves nothing
])
def test_a_mask_that_does_not_keep_the_index_inside_is_e2131(mask: str, kind: str) -> None:
    body = f"""for s in 0..(C + B - 1) / B {{
        let cols = cast<i32>(s) * B + iota<i32>(B)
        store(y[row, cols], load(x[row, cols], cols < C, 0.0), {mask})
    }}"""
    (d,) = diagnostics(body)
    assert d.code == "E2131" and d.message.startswith(f"`{kind}` may write outside `y`")
    assert "axis 1" in d.message


WHOLE_ROWS = ROWS.replace("where B >= 1", "where B >= C")


def test_the_message_gives_the_range_and_sizes_where_it_fails() -> None:
    (d,) = diagnostics("""let cols = iota<i32>(B)
    store(y[row, cols], load(x[row, cols], cols < C, 0.0))""", WHOLE_ROWS)
    assert d.code == "E2131"
    assert d.message == ("`store` may write outside `y`: its index `cols` on axis 1 is not "
                         "provably in 0 .. C - 1")
    assert "goes up to B - 1" in d.label and " at B = " in d.label
    assert d.help == "mask it: pass `cols < C` as the access's mask"


def test_a_load_out_of_bounds_is_reported_as_a_read() -> None:
    (d,) = diagnostics("""let cols = iota<i32>(B)
    let v = load(x[row, cols])
    store(y[row, cols], v, cols < C)""", WHOLE_ROWS)
    assert d.code == "E2131" and d.message.startswith("`load` may read outside `x`")


def test_a_negative_offset_is_caught_at_the_lower_end() -> None:
    store, load = diagnostics("""let cols = iota<i32>(B) - 1
    let mask = cols < C
    store(y[row, cols], load(x[row, cols], mask, 0.0), mask)""", WHOLE_ROWS)
    assert (store.code, load.code) == ("E2131", "E2131")
    assert store.label == "`cols` may be negative (down to -1)"
    assert store.help == "add `&& cols >= 0` to its mask"


def test_select_is_split_into_its_two_cases() -> None:
    body = """let cols = iota<i32>(B)
    let safe = select(cols < C, cols, 0)
    let v = load(x[row, safe])
    store(y[row, cols], v, cols < C)"""
    assert codes(body, WHOLE_ROWS.replace("where B >= C", "where B >= C, C >= 1")) == []
    (d,) = diagnostics(body, WHOLE_ROWS)  # at C = 0 the fallback 0 is outside too
    assert d.code == "E2131" and d.message.startswith("`load` may read outside `x`")


def test_a_where_clause_that_makes_the_tile_fit_is_a_proof() -> None:
    header = ROWS.replace("where B >= 1", "where B >= 1, C == B")
    body = """let cols = iota<i32>(B)
    store(y[row, cols], load(x[row, cols]))"""
    assert codes(body, header) == []


ATOMIC = """module atomic

kernel total<N: Dim, B: Dim>(x: Tensor[N; f32]) -> s: Tensor[1; f32] grid((N + B - 1) / B)
where B >= 1 {
    let offs = program_id(0) * B + iota<i32>(B)
    atomic_add(s[0], sum[i] load(x[offs], offs < N, 0.0)[i])
}
"""


def test_an_atomic_in_bounds_needs_no_coverage() -> None:
    assert codes("", ATOMIC) == []


def test_an_atomic_out_of_bounds_is_e2131() -> None:
    (d,) = diagnostics("", ATOMIC.replace("s[0]", "s[1]"))
    assert d.code == "E2131"


# ----------------------------------------------------------------------------- E2132

BLOCKS = """module blocks

kernel k<N: Dim, B: Dim, S: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(GRID)
where B >= 1, S >= 1 {
    BODY
}
"""


def cover(grid: str, body: str) -> list[str]:
    return codes(body, BLOCKS.replace("GRID", grid))


@pytest.mark.parametrize("grid", ["(N + B * S - 1) / (B * S)", "N"])
def test_programs_and_a_loop_of_steps_cover_the_axis(grid: str) -> None:
    body = """for s in 0..S {
        let offs = program_id(0) * (B * S) + cast<i32>(s) * B + iota<i32>(B)
        let mask = offs < N
        store(y[offs], load(x[offs], mask, 0.0), mask)
    }"""
    assert cover(grid, body) == []


def test_a_loop_one_block_short_leaves_the_tail() -> None:
    body = """for s in 0..N / B {
        let offs = cast<i32>(s) * B + iota<i32>(B)
        let mask = offs < N
        store(y[offs], load(x[offs], mask, 0.0), mask)
    }"""
    assert cover("1", body) == ["E2132"]
    assert cover("1", body.replace("N / B", "(N + B - 1) / B")) == []


def test_the_refutation_names_sizes_the_where_admits() -> None:
    body = """let offs = program_id(0) * B + iota<i32>(B)
    let mask = offs < N
    store(y[offs], load(x[offs], mask, 0.0), mask)"""
    (d,) = diagnostics(body, BLOCKS.replace("GRID", "N / B"))
    assert d.code == "E2132"
    assert d.message.startswith("the grid does not write all of result `y`")
    assert "the rest is left uninitialized" in d.label


# ------------------------------------------------------------- E2132 at bound sizes

GROUPED = """module grouped

pub kernel k<N: Dim, B: Dim, G: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid((N + B - 1) / B)
where B >= 1, G >= 1 {
    let tiles = (N + B - 1) / B
    let tile = program_id(0) % G * (tiles / G) + program_id(0) / G
    let offs = tile * B + iota<i32>(B)
    let mask = offs < N
    store(y[offs], load(x[offs], mask, 0.0) * 2.0, mask)
}

pub op twice<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel k<N, 16, 2> {
    return x * 2.0
}

entry main(x: Tensor[SIZE; f32]) -> Tensor[SIZE; f32] {
    return twice(x)
}
"""


def test_an_order_check_cannot_decide_is_decided_at_the_bound_sizes() -> None:
    """Programs visit the tiles in a shuffled order (`pid % G * (tiles / G) + pid / G`):
    a permutation of the tiles when G divides their number, short of the last otherwise."""
    from linnet.diagnostics import CompileError
    from linnet.pipeline import compile_source
    assert codes("", GROUPED.replace("SIZE", "64")) == []  # undecided by check
    for target in ("torch", "jax"):
        compile_source(GROUPED.replace("SIZE", "64"), path="g.linnet", target=target)
        with pytest.raises(CompileError) as caught:
            compile_source(GROUPED.replace("SIZE", "48"), path="g.linnet", target=target)
        (d,) = caught.value.diagnostics
        assert d.code == "E2132"
        assert d.message == ("at the bound sizes (N = 48, B = 16, G = 2) kernel `k` writes 32 "
                             "of the 48 elements of result `y`; the rest would come back "
                             "uninitialized")
        assert d.label == "never writes y[32]"


def test_overlapping_tiles_cover_up_to_their_last_element() -> None:
    """Programs two apart with tiles of four overlap; the last writes up to 2*(G-1) + 3."""
    body = """let offs = program_id(0) * 2 + iota<i32>(4)
    let mask = offs < N
    store(y[offs], load(x[offs], mask, 0.0), mask)"""
    assert cover("(N + 1) / 2", body) == []
    assert cover("(N + 3) / 4", body) == ["E2132"]  # 2*G + 2 elements: short of N = 16


CUT = """module cut

pub kernel k<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid((N + B - 1) / B)
where B >= 1 {
    let offs = program_id(0) * B + iota<i32>(B)
    let mask = offs < N - 1
    store(y[offs], load(x[offs], mask, 0.0), mask)
}

pub op twice<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel k<N, 16> {
    return x * 2.0
}

entry main(x: Tensor[40; f32]) -> Tensor[40; f32] {
    return twice(x)
}
"""


def test_a_mask_that_cuts_inside_the_result_is_caught_at_the_bound_sizes() -> None:
    from linnet.diagnostics import CompileError
    from linnet.pipeline import compile_source
    with pytest.raises(CompileError) as caught:
        compile_source(CUT, path="cut.linnet")
    (d,) = caught.value.diagnostics
    assert d.code == "E2132" and "writes 39 of the 40 elements" in d.message
    assert d.label == "never writes y[39]"


def test_large_instances_are_evaluated_axis_by_axis() -> None:
    """matmul's grouped order at 4096 x 4096 (16M elements, 1024 programs of 128 x 128):
    a group one row short leaves whole tiles unwritten."""
    from pathlib import Path

    from linnet.diagnostics import CompileError
    from linnet.pipeline import compile_source
    text = (Path(__file__).parents[2] / "examples" / "matmul.linnet").read_text()
    short = text.replace("let group_m = max(min(tiles_m - first_m, G), 1)",
                         "let group_m = max(min(tiles_m - first_m, G) - 1, 1)")
    assert short != text
    bind = {"M": 4096, "N": 4096, "K": 64}
    compile_source(text, path="matmul.linnet", entry="matmul_any", bind=bind, tuning=False)
    with pytest.raises(CompileError) as caught:
        compile_source(short, path="matmul.linnet", entry="matmul_any", bind=bind,
                       tuning=False)
    (d,) = caught.value.diagnostics
    assert d.code == "E2132" and "writes 14680064 of the 16777216 elements" in d.message
