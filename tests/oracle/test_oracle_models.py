"""The oracle on the model layer (docs/models.md), on concrete values: structs across an
entry, enums and `match`, optionals, defaults and named arguments, `...`, and blocks
(members as names, state assignment and which states come back, member calls, `static
for`, the order of parameters); then every target against the oracle on the model-layer
programs of the corpus."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz.case import Case
from linnet.fuzz.oracle import OracleError, evaluate_source, gradient_fd

ROOT = Path(__file__).resolve().parents[2]


def f32(*values) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def test_a_struct_parameter_is_its_fields_and_a_struct_result_their_tuple():
    src = """module t
struct P { a: Tensor[2; f32]  b: Tensor[2; f32] }
struct Q { p: P  s: f32 }
entry main(q: Q, k: f32) -> (Tensor[2; f32], P) {
    let r = P(b = q.p.a * k, a = q.p.b + q.s)
    return (q.p.a - q.p.b, r)
}
"""
    d, a, b = evaluate_source(src, "main", {}, [f32(1, 2), f32(10, 20), np.float32(0.5),
                                                np.float32(3)])
    assert d.tolist() == [-9, -18] and a.tolist() == [10.5, 20.5] and b.tolist() == [3, 6]


def test_enums_match_by_variant_and_a_default_takes_its_literal():
    src = """module t
enum Op { Add, Mul, Neg }
fn apply(x: Tensor[2; f32], how: Op, by: f32 = 2.0) -> Tensor[2; f32] {
    return match how { Op.Add => x + by  Op.Mul => x * by  Op.Neg => -x }
}
entry main(x: Tensor[2; f32]) -> Tensor[3, 2; f32] {
    let a = reshape(apply(x, Op.Add), [1, 2])
    let m = reshape(apply(x, by = 10.0, how = Op.Mul), [1, 2])
    let n = reshape(apply(x, Op.Neg, 5.0), [1, 2])
    return concat(a, m, n)
}
"""
    (y,) = evaluate_source(src, "main", {}, [f32(1, 2)])
    assert y.tolist() == [[3, 4], [10, 20], [-1, -2]]


def test_optionals_chosen_at_run_time_and_some_of_a_tuple():
    src = """module t
fn total(p: (Tensor[2; f32], Tensor[2; f32])?) -> Tensor[2; f32] {
    return match p { some((a, b)) => a * b  none => fill<f32>([2], -1.0) }
}
entry main(x: Tensor[2; f32], c: bool) -> Tensor[2; f32] {
    let o: (Tensor[2; f32], Tensor[2; f32])? = if c { some((x, x + 1.0)) } else { none }
    return total(o) + total(none)
}
"""
    (yes,) = evaluate_source(src, "main", {}, [f32(1, 2), np.array(True)])
    (no,) = evaluate_source(src, "main", {}, [f32(1, 2), np.array(False)])
    assert yes.tolist() == [1, 5] and no.tolist() == [-2, -2]


def test_ellipsis_stands_for_the_axes_not_written():
    src = """module t
entry main(x: Tensor[2, 3, 4; f32]) -> (Tensor[2, 3; f32], Tensor[3, 4; f32], Tensor[2, 2; f32]) {
    return (x[..., 0], x[1, ...], x[..., 2, 1:3])
}
"""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a, b, c = evaluate_source(src, "main", {}, [x])
    assert (a == x[..., 0]).all() and (b == x[1]).all() and (c == x[:, 2, 1:3]).all()


BLOCKS = """module t

block Cell<H: Dim> {
    param w: Tensor[H; f32]
    buffer shift: Tensor[H; f32]
    state seen: Tensor[1; i64]
    state never: Tensor[1; i64]

    pub fn step(x: Tensor[H; f32], count: bool) -> Tensor[H; f32] {
        let k: f32 = if count {
            seen = seen + 1
            0.0
        } else { 0.0 }
        return x * w + shift + k
    }

    pub fn peek() -> Tensor[1; i64] {
        return never
    }
}

block Net<N: Dim, H: Dim = 2> {
    sub cells: [Cell<H>; N]
    sub last: Cell<H>
    param gain: f32
    state calls: Tensor[1; i64]

    fn chain(x: Tensor[H; f32]) -> Tensor[H; f32] {
        var y = x
        static for cell in cells {
            y = cell.step(y, true)
        }
        return y
    }

    pub entry run(x: Tensor[H; f32]) -> Tensor[H; f32] {
        calls = calls + 1
        let y = chain(chain(x))
        let z = last.step(y, false)
        return z * gain + cast<f32>(last.peek()[0])
    }

    pub entry quiet(x: Tensor[H; f32]) -> Tensor[H; f32] {
        return x * gain
    }
}
"""


def _block_inputs(n: int):
    """x, then every parameter by path in manifest order (cells.k.{w, shift, seen, never},
    last.{...}, gain, calls)."""
    params = {}
    for k in range(n):
        params |= {f"cells.{k}.w": f32(k + 1, 2), f"cells.{k}.shift": f32(1, 0),
                   f"cells.{k}.seen": np.array([10 * k], np.int64),
                   f"cells.{k}.never": np.array([0], np.int64)}
    params |= {"last.w": f32(1, 1), "last.shift": f32(0, 0),
               "last.seen": np.array([5], np.int64), "last.never": np.array([7], np.int64),
               "gain": np.float32(2), "calls": np.array([3], np.int64)}
    return f32(1, 1), params


def test_a_block_entry_runs_its_tree_and_returns_the_states_it_assigns():
    x, params = _block_inputs(2)
    out = evaluate_source(BLOCKS, "run", {"N": 2}, [x, *params.values()])
    y = x.astype(np.float64)
    for _ in range(2):
        for k in range(2):
            y = y * params[f"cells.{k}.w"] + params[f"cells.{k}.shift"]
    assert out[0].tolist() == (y * 2 + 7).tolist()
    # every state `run` can assign, in manifest order: each cell's `seen` (counted twice),
    # `last.seen` (assigned only on a branch not taken: returned unchanged), then `calls`;
    # `never` is only read
    assert [int(s[0]) for s in out[1:]] == [2, 12, 5, 4]


def test_an_entry_that_assigns_no_state_returns_none():
    x, params = _block_inputs(1)
    (y,) = evaluate_source(BLOCKS, "quiet", {"N": 1}, [x, *params.values()])
    assert y.tolist() == [2, 2]
    with pytest.raises(OracleError, match="inputs"):
        evaluate_source(BLOCKS, "quiet", {"N": 2}, [x, *params.values()])


def test_the_parameters_are_in_the_compilers_manifest_order():
    """The calling convention is the compiler's manifest: the oracle's own tree lists the
    same paths, shapes and dtypes, and returns the states the compiler says it assigns."""
    from linnet.pipeline import compile_source
    from linnet.fuzz.oracle.blocks import block_entry, root_block
    from linnet.fuzz.oracle.evaluate import _analysis, _binding
    for entry in ("run", "quiet"):
        manifest = compile_source(BLOCKS, entry=entry, bind={"N": "3"}, target="torch"
                                  ).parameters
        analysis = _analysis("oracle_case.linnet", BLOCKS)
        info = root_block(analysis, None)
        values = _binding(tuple(info.item.generics), {"N": 3}, "Net")
        mine = block_entry(analysis, info, info.fns[entry], values)
        assert [(m.path, tuple(d.as_int() for d in m.type.dims), m.type.dtype)
                for m in mine.inputs] == [(p.path, p.shape, p.dtype) for p in manifest.inputs]
        assert tuple(mine.assigned) == manifest.assigned


def test_gradients_of_a_block_entry_are_taken_for_its_inputs_and_floating_params():
    src = """module t
block Lin {
    param w: Tensor[2; f32]
    buffer b: Tensor[2; f32]
    state n: Tensor[1; i64]
    pub entry loss(x: Tensor[2; f32]) -> f32 {
        n = n + 1
        return sum[i] x[i] * w[i] * w[i] + b[i]
    }
}
"""
    x, w, b = f32(1, 2), f32(3, 4), f32(5, 6)
    case = Case(src, "loss", {}, (x, w, b, np.array([0], np.int64)))
    dx, dw = gradient_fd(case)
    np.testing.assert_allclose(dx, w * w, rtol=1e-6)
    np.testing.assert_allclose(dw, 2 * x * w, rtol=1e-6)


def test_gradients_of_a_block_entry_follow_the_checkpoint_and_the_op_bodies():
    """An optional param the checkpoint holds is an input and takes a gradient; an absent
    one is neither, and its `match` takes the `none` arm. An op called from a block's `fn`
    is differentiated through its body (its `grad` clause, here wrong on purpose, is the
    compiled backward pass's business, not the oracle's)."""
    src = """module t
op sq(a: Tensor[2; f32]) -> f32 {
    return sum[i] a[i] * a[i]
} grad(y, dy) {
    return dy * a
}
block Cell {
    param v: Tensor[2; f32]
    param bias: Tensor[2; f32]? = none
    pub fn term(x: Tensor[2; f32]) -> f32 {
        return match bias { some(b) => sq(b * x)  none => sum[i] v[i] * x[i] }
    }
}
block Net {
    sub cells: [Cell; 2]
    pub entry loss(x: Tensor[2; f32]) -> f32 {
        var total = sum[i] x[i]
        static for c in cells {
            total = total + c.term(x)
        }
        return total
    }
}
"""
    x, v0, v1, b1 = f32(1, 2), f32(3, 4), f32(5, 6), f32(0.5, -1)
    absent = gradient_fd(Case(src, "loss", {}, (x, v0, v1)))
    np.testing.assert_allclose(absent[0], 1 + v0 + v1, rtol=1e-6)
    np.testing.assert_allclose(absent[1], x, rtol=1e-6)
    assert len(absent) == 3
    dx, dv0, dv1, db1 = gradient_fd(Case(src, "loss", {}, (x, v0, v1, b1),
                                         frozenset({"cells.1.bias"})))
    np.testing.assert_allclose(dx, 1 + v0 + 2 * b1 * b1 * x, rtol=1e-6)
    np.testing.assert_allclose(dv0, x, rtol=1e-6)
    assert not dv1.any()  # read only on the arm not taken
    np.testing.assert_allclose(db1, 2 * b1 * x * x, rtol=1e-6)  # the body's, not `dy * a`


def test_functions_and_entries_without_a_result_type_return_what_they_return():
    """A `fn` or `entry` without `-> T`, of the module or of a block, has the type its final
    `return` has at the instance: results cross as that type (a literal as its default
    dtype, f64), a tuple spread."""
    src = """module t
fn pair<N: Dim>(x: Tensor[N; f32]) {
    return (x * 2.0, sum[i] x[i])
}
fn one() {
    return 1.5
}
entry main(x: Tensor[3; f32]) {
    let (d, s) = pair(x)
    return (d + s, one())
}
block B<H: Dim> {
    param w: Tensor[H; f32]
    fn scaled(x: Tensor[H; f32]) {
        return x * w
    }
    pub entry run(x: Tensor[H; f32]) {
        return (scaled(x), sum[h] w[h])
    }
}
"""
    y, k = evaluate_source(src, "main", {}, [f32(1, 2, 3)])
    assert y.tolist() == [8, 10, 12] and k.dtype == np.float64 and float(k) == 1.5
    z, t = evaluate_source(src, "run", {"H": 2}, [f32(1, 2), f32(3, 5)], root="B")
    assert z.tolist() == [3, 10] and t.dtype == np.float32 and float(t) == 8


OPTIONAL_MODEL = ROOT / "examples" / "optional_model.linnet"
PARTIAL = frozenset({"layers.0.up_bias", "head.up", "head.down", "out_bias",
                     "layers.1.up"})  # head complete, layers.1.up_bias and head.up_bias not


@pytest.mark.parametrize("present", [None, PARTIAL], ids=["none", "partial"])
def test_presence_decides_the_optional_members_as_the_compiler_does(present):
    """The checkpoint's paths make optional params present one by one, and an optional
    sub present when it holds every param the sub requires: the oracle's tree lists the
    compiler's inputs, and a `match` on each takes the arm its presence says."""
    from linnet.pipeline import compile_source
    from linnet.fuzz.oracle.blocks import block_entry, root_block
    from linnet.fuzz.oracle.evaluate import _analysis, _binding
    text = OPTIONAL_MODEL.read_text()
    manifest = compile_source(text, entry="main", target="torch", present=present).parameters
    analysis = _analysis("oracle_case.linnet", text)
    info = root_block(analysis, None)
    values = _binding(tuple(info.item.generics), {}, "Model")
    mine = block_entry(analysis, info, info.fns["main"], values, present)
    assert [m.path for m in mine.inputs] == [p.path for p in manifest.inputs]
    assert tuple(mine.assigned) == manifest.assigned
    if present is not None:
        held = {m.path for m in mine.inputs}
        assert {"layers.0.up_bias", "head.up", "out_bias"} <= held
        assert not {"layers.1.up_bias", "head.up_bias"} & held


def test_a_present_optional_sub_runs_and_an_incomplete_one_is_absent():
    src = """module t
block Scale {
    param w: Tensor[2; f32]
    param b: Tensor[2; f32]? = none
    state n: Tensor[1; i64]
    pub fn forward(x: Tensor[2; f32]) -> Tensor[2; f32] {
        n = n + 1
        return match b { some(v) => x * w + v  none => x * w }
    }
}
block Net {
    param g: Tensor[2; f32]? = none
    sub head: Scale? = none
    pub entry main(x: Tensor[2; f32]) -> Tensor[2; f32] {
        let y = match head { some(h) => h.forward(x)  none => x - 1.0 }
        return match g { some(k) => y * k  none => y }
    }
}
"""
    x = f32(1, 2)
    (y,) = evaluate_source(src, "main", {}, [x])
    assert y.tolist() == [0, 1]
    (y,) = evaluate_source(src, "main", {}, [x], present=frozenset({"head.b"}))
    assert y.tolist() == [0, 1]  # head.w is missing: the head is absent, head.b with it
    # inputs after x in manifest order: g, head.w, head.b, head.n
    y, n = evaluate_source(src, "main", {}, [x, f32(2, 3), f32(3, 4), f32(10, 20),
                                             np.array([5])],
                           present=frozenset({"head.w", "head.b", "g"}))
    assert y.tolist() == [(1 * 3 + 10) * 2, (2 * 4 + 20) * 3] and n.tolist() == [6]
    y, n = evaluate_source(src, "main", {}, [x, f32(3, 4), np.array([0])],
                           present=frozenset({"head.w"}))
    assert y.tolist() == [3, 8] and n.tolist() == [1]


# ------------------------------------------------------------ every target, the corpus

MODEL_PROGRAMS = sorted(
    [p for p in (ROOT / "tests" / "spec" / "valid").glob("1[4-9][0-9]_*.linnet")]
    + [ROOT / "examples" / "block_model.linnet", ROOT / "examples" / "optional_model.linnet"])


def test_the_model_layer_corpus_is_found():
    names = {p.name for p in MODEL_PROGRAMS}
    assert {"141_structs.linnet", "160_block_model.linnet", "162_block_values.linnet",
            "164_optional_subs.linnet", "optional_model.linnet"} <= names


def test_a_block_entry_with_optional_members_is_fuzzed_absent_and_present():
    from linnet.fuzz import corpus
    (source,) = corpus([OPTIONAL_MODEL])
    present = [c.present for c in source.cases if c.entry == "main"]
    assert present[0] is None and "head.up_bias" in present[1] and len(present) == 2
    assert len(source.cases[1].inputs) > len(source.cases[0].inputs)


@pytest.mark.parametrize("path", MODEL_PROGRAMS, ids=lambda p: p.name)
def test_every_target_agrees_with_the_oracle(path: Path):
    """Each entry (module-level or of the root block) on the harness's sizes and inputs,
    through the interpreter, PyTorch, JAX, ONNX and StableHLO, against the oracle."""
    pytest.importorskip("jax")
    pytest.importorskip("onnxruntime")
    from linnet.fuzz import corpus, fuzz
    sources = list(corpus([path]))
    assert sources and sources[0].cases, "no entry of the program could be sized"
    report = fuzz(programs=sources, isolate=False)
    assert not report.findings, report.summary()
    assert report.runs == 5 * report.cases


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
