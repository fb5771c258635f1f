"""Four rules of the model layer (docs/models.md, docs/language.md): `...` before a shape
pack (its types: test_where_and_shapes.py); a parent reading a sub's members (`cache.keys`); a `/` or `%` in a `where` clause as
a stated fact; an op with a `grad` clause taking tensors and scalars only. Each case is a
program the checker refused (or let through) before; spec programs 176-178 run them on
every target."""

from __future__ import annotations

import numpy as np
import pytest

from linnet.diagnostics import CompileError
from linnet.check.frontend import check_program
from linnet.pipeline import compile_source
from linnet.fuzz.backends import as_numpy, compile_entry, loader


def _check(source: str) -> list:
    return check_program("t.linnet", "module t\n\n" + source).diagnostics


def _codes(source: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in _check(source)]


# ------------------------------------------------------------- `...` before a shape pack

def test_a_pack_instance_indexes_as_checked() -> None:
    """The instance, its pack bound, indexes as the checker said: odd and even axes, an
    empty result."""
    source = ("module t\nfn halves<*S: Shape, D: Dim>(x: Tensor[*S, D; f32]) "
              "-> (Tensor[*S, (D + 1) / 2; f32], Tensor[*S, D / 2; f32]) {\n"
              "    return (x[..., 0::2], x[..., 1::2])\n}\n"
              "entry main<D: Dim>(x: Tensor[2, 3, D; f32]) "
              "-> (Tensor[2, 3, (D + 1) / 2; f32], Tensor[2, 3, D / 2; f32]) {\n"
              "    return halves(x)\n}\n")
    for d in (1, 4, 5):
        x = np.arange(6 * d, dtype=np.float32).reshape(2, 3, d)
        compiled = compile_entry(source, "t.linnet", "main", {"D": d}, "interpreter")
        even, odd = loader("interpreter")(compiled, "main")(x)
        assert as_numpy(even).tolist() == x[..., 0::2].tolist()
        assert as_numpy(odd).tolist() == x[..., 1::2].tolist()


def test_slice_bounds_reach_the_ir_clamped_to_the_axis() -> None:
    """Elaboration clamps once, so every printer and pass sees `0 <= lo <= hi <= extent`;
    the verifier holds any other producer to it."""
    from linnet.ir import tensor as ir
    from linnet.ir.prim_types import prim_type
    source = ("module t\nentry main(x: Tensor[4; f32]) -> (Tensor[2; f32], Tensor[0; f32], "
              "Tensor[0; f32]) {\n    return (x[2:9], x[5:9:2], x[3:1])\n}\n")
    compiled = compile_source(source, path="t.linnet", target="torch", entry="main")
    items = [b.expr.attr("items") for f in compiled.stage("elaborate").funcs
             for b in f.body.binds if isinstance(b.expr, ir.Prim) and b.expr.op == "index"]
    assert items == [(("slice", 2, 4, 1),), (("slice", 4, 4, 2),), (("slice", 3, 3, 1),)]
    x = ir.Var("x", ir.TType((4,), "f32"))
    past = ir.Prim("index", (x,), ir.TType((2,), "f32"), (("items", (("slice", 2, 9, 1),)),))
    assert isinstance(prim_type(past, {"items": (("slice", 2, 9, 1),)}), str)


# --------------------------------------------------------------- a sub's members, read

CACHE = """block Cache<N: Dim> {
    param decay: Tensor[N; f32]
    param bias: Tensor[N; f32]? = none
    state keys: Tensor[N; f32]

    pub fn push(x: Tensor[N; f32]) -> Tensor[N; f32] {
        keys = keys * decay + x
        return keys
    }
}
"""


def _parent(body: str) -> str:
    return CACHE + ("block Model<N: Dim> {\n    sub cache: Cache<N>\n"
                    "    sub layers: [Cache<N>; 2]\n    sub extra: Cache<N>? = none\n\n"
                    "    pub entry step(x: Tensor[N; f32]) -> Tensor[N; f32] {\n"
                    f"{body}\n    }}\n}}\n")


def test_a_parent_reads_a_subs_state_and_params() -> None:
    body = ("        let y = cache.push(x) + cache.keys * cache.decay\n"
            "        let b = match cache.bias { some(v) => v  none => x }\n"
            "        return y + b")
    assert _codes(_parent(body)) == []


@pytest.mark.parametrize("line, found", [
    ("cache.keys = x", ("E2108", "`cache.keys` cannot be assigned")),
    ("let y = cache.push", ("E2101", "`Cache.push` is a function, not a value")),
    ("let y = cache.count", ("E1201", "block `Cache` has no param, buffer or state `count`")),
    ("let y = layers.keys", ("E2101", "sub `layers` is an array of blocks")),
    ("let y = extra.keys", ("E2101", "sub `extra` is optional")),
])
def test_what_a_parent_may_not_do_with_a_subs_members(line: str, found: tuple) -> None:
    assert _codes(_parent(f"        {line}\n        return x"))[:1] == [found]


def test_a_parent_reads_the_state_as_the_call_left_it() -> None:
    """`cache.keys` after `cache.push(x)` is the pushed value; before it, the old one."""
    source = "module t\n" + _parent("        let old = cache.keys\n"
                                    "        let y = cache.push(x)\n"
                                    "        return y * 10.0 + cache.keys + old * 100.0")
    compiled = compile_entry(source, "t.linnet", "step", {"N": 2}, "interpreter")
    x, decay, keys = (np.array(v, dtype=np.float32) for v in ([1, 2], [0.5, 2], [4, 8]))
    layers = [np.zeros(2, np.float32)] * 4
    result, next_keys = loader("interpreter")(compiled, "step")(x, decay, keys, *layers)
    pushed = keys * decay + x
    assert as_numpy(next_keys).tolist() == pushed.tolist()
    assert as_numpy(result).tolist() == (pushed * 10 + pushed + keys * 100).tolist()


# ------------------------------------------------------- `where`: `/` and `%` are facts

@pytest.mark.parametrize("item", [
    "fn f<H: Dim, K: Dim>(x: Tensor[H; f32]) -> Tensor[K, H / K; f32] where H % K == 0 {\n"
    "    return reshape(x, [K, H / K])\n}\n",
    "op f<H: Dim, K: Dim>(x: Tensor[H; f32]) -> Tensor[H; f32] where H / K >= 2 {\n"
    "    return x\n}\n",
    "kernel k<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(N / B) "
    "where N % B == 0 {\n    let offs = program_id(0) * B + iota<i32>(B)\n"
    "    store(y[offs], load(x[offs], offs < N), offs < N)\n}\n",
    "block Heads<H: Dim, K: Dim> where H % K == 0 {\n    param w: Tensor[K, H / K; f32]\n}\n",
])
def test_a_divisor_in_a_where_clause_needs_no_proof(item: str) -> None:
    assert _codes(item) == []


HEADS = ("block Heads<H: Dim, K: Dim> where H % K == 0 {\n    param w: Tensor[H; f32]\n\n"
         "    pub fn forward(x: Tensor[H; f32]) -> Tensor[K, H / K; f32] {\n"
         "        return reshape(x * w, [K, H / K])\n    }\n}\n")


def test_an_instantiation_that_cannot_prove_the_fact_is_e2206_there() -> None:
    source = HEADS + ("block Model<H: Dim> {\n    sub heads: Heads<H, 8>\n\n"
                      "    pub entry run(x: Tensor[H; f32]) -> Tensor[8, H / 8; f32] {\n"
                      "        return heads.forward(x)\n    }\n}\n")
    [d] = _check(source)
    text = "module t\n\n" + source
    assert (d.code, d.message) == ("E2206", "cannot prove `H % 8 == 0`, required by `Heads`")
    assert text[d.span.start:d.span.end] == "Heads<H, 8>"
    assert d.notes == ("`Heads` states `where H % K == 0`",)
    assert d.help == "restate it in the block's `where` clause: `where H % 8 == 0`"
    assert _codes(source.replace("block Model<H: Dim> {", "block Model<H: Dim> where "
                                 "H % 8 == 0 {")) == []


def test_a_call_proves_the_divisor_positive_first() -> None:
    source = ("fn split<N: Dim, K: Dim>(x: Tensor[N; f32]) -> Tensor[K, N / K; f32] "
              "where N % K == 0 {\n    return reshape(x, [K, N / K])\n}\n"
              "fn open<M: Dim, G: Dim>(x: Tensor[M; f32]) -> Tensor[M; f32] {\n"
              "    let y = split<M, G>(x)\n    return x\n}\n"
              "fn zero(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
              "    let y = split<4, 0>(x)\n    return x\n}\n")
    found = _check(source)
    assert [(d.code, d.message) for d in found] == [
        ("E2206", "cannot prove `G > 0`, required by `split`"),
        ("E2206", "cannot prove `0 > 0`, required by `split`")]
    assert found[1].help == "`0 > 0` is false: give values that satisfy the clause"


def test_bound_values_that_fail_the_fact_are_one_e2206() -> None:
    source = ("module t\nentry e<N: Dim, K: Dim>(x: Tensor[N; f32]) -> Tensor[K, N / K; f32] "
              "where N % K == 0 {\n    return reshape(x, [K, N / K])\n}\n")
    with pytest.raises(CompileError) as err:
        compile_source(source, path="t.linnet", target="torch", entry="e",
                       bind={"N": 4, "K": 0})
    assert [(d.code, d.message) for d in err.value.diagnostics] == [
        ("E2206", "the bound values fail `where 0 > 0`")]


# ------------------------------------------------------ a grad clause: tensors and scalars

@pytest.mark.parametrize("param, shown", [
    ("b: Tensor[4; f32]?", "Tensor[4; f32]?"),
    ("b: (Tensor[4; f32], f32)", "(Tensor[4; f32], f32)"),
    ("b: Pair", "Pair { a: Tensor[4; f32], s: f32 }"),
    ("b: Mode", "Mode"),
])
def test_a_grad_clause_refuses_a_parameter_that_is_not_a_tensor(param: str, shown: str) -> None:
    source = ("struct Pair { a: Tensor[4; f32]  s: f32 }\nenum Mode { Add, Mul }\n"
              f"op f(x: Tensor[4; f32], {param}) -> Tensor[4; f32] {{\n    return x\n"
              "} grad(y, dy) {\n    return dy\n}\n")
    [d] = _check(source)
    text = "module t\n\n" + source
    assert (d.code, d.label) == ("E2125", "not a tensor or scalar")
    assert d.message == (f"an op with a `grad` clause takes tensors and scalars; parameter "
                         f"`b` of `f` is {shown}")
    assert text[d.span.start:d.span.end] == param
    assert _codes(source.replace("} grad(y, dy) {\n    return dy\n}\n", "}\n")) == []
