"""Kernel elaboration: kernel Funcs in the tensor IR, their structure and their values.

The corpus tests compile every entry that reaches a kernel (examples and
`tests/spec/valid`) through the middle end up to `dce` with the verifier after
every pass, and check each chosen kernel: its Func, grid, hints, inits, the
offsets of its memory accesses; the op keeps its body. The value tests run
kernel Funcs with a small NumPy evaluator defined here (one trip through the
body per program id of the grid, loads and stores on flat arrays, masks
honoured, out-of-bounds unmasked accesses caught) and compare the results with
the op's body: through `linnet.torch.load_function(..., compile=False, numerics="exact")` for
the examples, through the torch interpreter on the op instance for the spec
corpus. No Triton involved: this catches offset and mask mistakes early.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import linnet.torch as linnet_torch
from linnet.check.instance import analyze_program
from linnet.diagnostics import CompileError
from linnet.ir import tensor as ir
from linnet.ir.walk import all_binds
from linnet.ir.printer import print_func
from linnet.ir.verify import verify
from linnet.passes.manager import Instrumentation
from linnet.pipeline import compile_source, passes_for
from linnet.syntax.program import load_program
from linnet.syntax import tree as t

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
VALID = ROOT / "tests" / "spec" / "valid"
RUNTIME_LOOPS = [VALID / "96_kernel_runtime_loops.linnet",
                 VALID / "97_kernel_loop_bound_params.linnet"]
CORPUS = sorted(EXAMPLES.glob("*.linnet")) + sorted(VALID.glob("4*_kernel*.linnet")) + [
    VALID / "53_pub_items.linnet", VALID / "61_kernel_dtype_generic.linnet",
    VALID / "63_op_where.linnet"] + RUNTIME_LOOPS
BINDINGS = {("matmul", "matmul_any"): {"M": 5, "N": 6, "K": 7},
            ("matmul", "matmul_bf16_any"): {"M": 5, "N": 6, "K": 7},
            ("matmul", "matmul_tf32_any"): {"M": 5, "N": 6, "K": 7},
            ("matmul", "matmul_bt_any"): {"M": 5, "N": 6, "K": 7},
            ("softmax", "softmax_any"): {"R": 3, "C": 5},
            ("layer_norm", "layer_norm_any"): {"R": 37, "C": 100},
            ("layer_norm", "layer_norm_bf16_any"): {"R": 3, "C": 768},
            ("mlp", "predict"): {"N": 4, "I": 2, "H": 8, "O": 3},
            ("mlp", "loss"): {"N": 4, "I": 2, "H": 8, "O": 3},
            ("61_kernel_dtype_generic", "any_dtype"): {"N": 8, "T": "bf16"},
            ("attention", "attention_any"): {"B": 2, "H": 2, "L": 5, "S": 7, "D": 16},
            ("attention", "attention_causal_any"): {"B": 1, "H": 2, "L": 70, "D": 32},
            ("attention", "attention_bf16_any"): {"B": 2, "H": 2, "L": 5, "S": 7, "D": 16},
            ("attention", "attention_causal_bf16_any"): {"B": 1, "H": 2, "L": 70, "D": 32}}


# ------------------------------------------------------------------ compiling


def middle_end(path: Path | None = None, entry: str = "main", text: str | None = None,
               numerics: str = "equivalent", bind: dict | None = None,
               stop: str = "dce") -> ir.Program:
    """The program after `stop`, every pass's output verified (as `--verify-each`)."""
    passes = [p for p in passes_for("torch") if not p.name.startswith("emit")]
    compiled = compile_source(text, path=str(path or "kernel_test.linnet"), entry=entry,
                              numerics=numerics, bind=bind or {}, passes=passes,
                              shown=Instrumentation(verify_each=True, stop_after=stop))
    program = compiled.stage(stop)
    assert verify(program, compiled.result.stages[-1].language) == []
    return program


def kernels(program: ir.Program) -> list[ir.Func]:
    return [f for f in program.funcs if f.kind == "kernel"]


def chosen(program: ir.Program) -> list[ir.Func]:
    return [f for f in program.funcs if f.kind == "op" and f.kernel is not None]


def entries_with_kernels() -> list[tuple[Path, str]]:
    found = []
    for path in CORPUS:
        analysis = analyze_program(load_program(str(path)))
        for item in analysis.program.root_module.items:
            if isinstance(item, t.Function) and item.kind == "entry":
                found.append((path, item.name))
    return found


def prims(f: ir.Func, *ops: str) -> list[ir.Prim]:
    return [b.expr for b in all_binds(f.body)
            if isinstance(b.expr, ir.Prim) and b.expr.op in ops]


# ============================================================== NumPy evaluator

NP = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
      "f16": np.float16, "f32": np.float32, "f64": np.float64}


def run_kernel(f: ir.Func, inputs: list) -> list[np.ndarray]:
    """Run a kernel Func over its whole grid; its outputs, as arrays of their shapes.

    Tensor inputs live in flat arrays (contiguous, as the launch makes them);
    outputs start as the launch's inits say, "empty" as NaN (or a sentinel
    integer) so that anything the kernel forgets to write shows up.
    """
    memory, env = {}, {}
    for p, x in zip(f.params, inputs):
        if p.type.rank:
            memory[p.name] = np.ascontiguousarray(x, dtype=NP[p.type.dtype]).reshape(-1)
        else:
            env[p.name] = NP[p.type.dtype](x)
    for o, init in zip(f.outputs, f.launch.inits):
        memory[o.name] = np.full(math.prod(o.type.shape), _init(init, o.type.dtype),
                                 dtype=NP[o.type.dtype])
    for pid in itertools.product(*(range(g) for g in f.launch.grid)):
        Evaluator(memory, pid).block(f.body, dict(env))
    return [memory[o.name].reshape(o.type.shape) for o in f.outputs]


def _init(kind: str, dtype: str):
    floats = dtype[0] in "fb"
    info = None if floats else np.iinfo(NP[dtype])
    return {"empty": np.nan if floats else info.min + 7,
            "zero": 0,
            "lowest": -np.inf if floats else info.min,
            "highest": np.inf if floats else info.max}[kind]


class Evaluator:
    """One program of the grid: the kernel body on NumPy tiles."""

    def __init__(self, memory: dict, pid: tuple[int, ...]) -> None:
        self.memory, self.pid = memory, pid

    def block(self, b: ir.Block, env: dict):
        for bind in b.binds:
            env[bind.var.name] = self.expr(bind.expr, env)
        return self.atom(b.result, env)

    def atom(self, a: ir.Atom, env: dict):
        if isinstance(a, ir.Lit):
            return NP[a.type.dtype](a.value)
        return env[a.name]

    def expr(self, e: ir.Expr, env: dict):
        if isinstance(e, (ir.Var, ir.Lit)):
            return self.atom(e, env)
        if isinstance(e, ir.MakeTuple):
            return tuple(self.atom(a, env) for a in e.items)
        if isinstance(e, ir.GetItem):
            return self.atom(e.tup, env)[e.index]
        if isinstance(e, ir.Einsum):
            args = [self.atom(a, env).astype(NP[e.acc or e.type.dtype]) for a in e.args]
            return np.einsum(e.spec, *args).astype(NP[e.type.dtype])
        if isinstance(e, ir.If):
            branch = e.then if self.atom(e.cond, env) else e.orelse
            return self.block(branch, dict(env))
        if isinstance(e, ir.Loop):
            return self.loop(e, env)
        if isinstance(e, ir.While):
            return self.while_(e, env)
        assert isinstance(e, ir.Prim), type(e).__name__
        args = [a.name if isinstance(a, ir.Var) and a.name in self.memory
                else self.atom(a, env) for a in e.args]  # memory passes by name
        out = self.prim(e, args)
        if e.op in ir.EFFECTS:
            return out
        return np.asarray(out).astype(NP[e.type.dtype], copy=False)

    def loop(self, e: ir.Loop, env: dict) -> tuple:
        state = [self.atom(a, env) for a in e.init]
        lo, hi = (b if isinstance(b, int) else int(self.atom(b, env)) for b in (e.lo, e.hi))
        for i in range(lo, hi):
            inner = {**env, e.index.name: np.int64(i)}
            inner.update({v.name: s for v, s in zip(e.carried, state)})
            state = list(self.block(e.body, inner))
        return tuple(state)

    def while_(self, e: ir.While, env: dict) -> tuple:
        state = [self.atom(a, env) for a in e.init]
        while True:
            inner = {**env, **{v.name: s for v, s in zip(e.carried, state)}}
            if not self.block(e.cond, inner):
                return tuple(state)
            state = list(self.block(e.body, inner))

    def prim(self, e: ir.Prim, a: list):
        op = e.op
        if op == "program_id":
            return np.int32(self.pid[e.attr("axis")])
        if op == "load":
            return self.load(e, *a)
        if op in ir.EFFECTS:
            return self.write(op, *a)
        if op in ELEMENTWISE:
            if op == "div" and e.type.dtype[0] in "iu":
                return _trunc_div(*a)
            with np.errstate(all="ignore"):
                return ELEMENTWISE[op](*a)
        if op == "cast":
            return a[0].astype(NP[e.type.dtype])
        if op.startswith("reduce_"):
            axes = e.attr("axes")
            x = a[0].astype(NP[e.type.dtype])
            return REDUCE[op[len("reduce_"):]](x, axis=axes)
        return SHAPES[op](a, e)

    def load(self, e: ir.Prim, mem: str, offsets, mask=True, other=0):
        flat = self.memory[mem]
        offsets = np.broadcast_to(offsets, e.type.shape)
        mask = np.broadcast_to(mask, e.type.shape)
        inside = offsets[mask]
        assert ((0 <= inside) & (inside < flat.size)).all(), "an unmasked load out of bounds"
        return np.where(mask, flat[np.where(mask, offsets, 0)], other)

    def write(self, op: str, mem: str, offsets, value, mask=True) -> bool:
        flat = self.memory[mem]
        offsets = np.asarray(offsets)
        value = np.broadcast_to(value, offsets.shape).astype(flat.dtype)
        mask = np.broadcast_to(mask, offsets.shape)
        where, what = offsets[mask], value[mask]
        assert ((0 <= where) & (where < flat.size)).all(), "an unmasked write out of bounds"
        if op == "store":
            flat[where] = what
        else:
            ufunc = {"atomic_add": np.add, "atomic_max": np.maximum,
                     "atomic_min": np.minimum}[op]
            ufunc.at(flat, where, what)
        return True


def _trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) == (b < 0), q, -q)


ELEMENTWISE = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "mod": np.fmod, "min": np.minimum, "max": np.maximum, "and": np.logical_and,
    "or": np.logical_or, "xor": np.logical_xor, "eq": np.equal, "ne": np.not_equal,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "neg": np.negative, "not": np.logical_not, "abs": np.abs, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "select": np.where,
}
REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any,
          "all": np.all}
SHAPES = {
    "broadcast_to": lambda a, e: np.broadcast_to(a[0], e.type.shape),
    "reshape": lambda a, e: np.reshape(a[0], e.type.shape),
    "permute": lambda a, e: np.transpose(a[0], e.attr("perm")),
    "fill": lambda a, e: np.full(e.type.shape, a[0]),
    "iota": lambda a, e: np.arange(e.type.shape[0]),
    "cumsum": lambda a, e: np.cumsum(a[0], axis=e.attr("axis")),
}


def random_input(ty: ir.TType, rng: np.random.Generator) -> np.ndarray:
    if ty.dtype[0] in "iu":
        return rng.integers(-50 if ty.dtype[0] == "i" else 0, 50, ty.shape).astype(NP[ty.dtype])
    return rng.standard_normal(ty.shape).astype(NP[ty.dtype])


def assert_close(got, want, dtype: str) -> None:
    tol = {"f16": 2e-2, "f32": 1e-4}.get(dtype, 0)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ================================================================ the corpus


@pytest.mark.parametrize("path,entry", entries_with_kernels(),
                         ids=lambda x: x.stem if isinstance(x, Path) else x)
def test_every_kernel_is_elaborated_and_verified(path: Path, entry: str) -> None:
    stem = path.stem
    program = middle_end(path, entry, bind=BINDINGS.get((stem, entry)))
    funcs = {f.name: f for f in program.funcs}
    for op in chosen(program):
        k = funcs[op.kernel.func]
        assert k.kind == "kernel" and k.launch is not None
        assert [p.type for p in k.params] == [p.type for p in op.params]
        assert op.body.binds or op.body.result in op.params  # the op keeps its body
        assert k.body.result == ir.Lit(True, ir.TType((), "bool"))
        for e in prims(k, "load", "store", "atomic_add", "atomic_max", "atomic_min"):
            offsets = e.args[1]
            assert offsets.type.dtype == "i32"
            shape = offsets.type.shape
            assert all(a.type.shape in ((), shape) for a in e.args[2:])
            assert all(d & (d - 1) == 0 for d in shape)
    exact = middle_end(path, entry, numerics="exact", bind=BINDINGS.get((stem, entry)))
    assert not kernels(exact) and not chosen(exact)


def test_every_kernel_instance_is_reached() -> None:
    """Each kernel of the corpus is chosen by some entry (so the tests above cover it)."""
    names = set()
    for path, entry in entries_with_kernels():
        program = middle_end(path, entry, bind=BINDINGS.get((path.stem, entry)))
        names |= {k.source.split("<")[0].split()[1] for k in kernels(program)}
    assert {"row_softmax", "matmul_tiles", "column_stats_tiles", "attention_blocks",
            "causal_attention_blocks", "layer_norm_rows", "layer_norm_backward_rows",
            "row_cumsum", "row_product_rows", "relu_blocks",
            "add_blocks", "transpose_tiles", "batched_bias_tiles", "row_max_rows",
            "row_min_int_rows", "copy_exact", "sum_rows", "row_total_rows",
            "double_rows_tiles", "column_reduce_rows", "total_blocks", "half_total_blocks",
            "axpb_blocks", "shift_blocks", "add16_tile", "scale_rows_fixed",
            "silu_sum_rows", "abs_max_rows", "negate_tile", "negate_blocks",
            "row_scale_rows"} <= names


# ================================================================= golden


SOFTMAX_KERNEL = """\
// kernel row_softmax<R=64, C=1000, B=1024>
func row_softmax__R64_C1000_B1024 kernel (x: f32[64, 1000]) writes (y: f32[64, 1000]) \
grid(64,) inits('empty',) {
  row: i32[] = program_id() {axis=0}
  cols: i32[1024] = iota()
  mask: bool[1024] = lt(cols, 1000:i32)
  offs: i32[] = mul(row, 1000:i32)
  offs_1: i32[1024] = add(offs, cols)
  v: f32[1024] = load(x, offs_1, mask, -1e+30:f32)
  max: f32[] = for [] max<f32>[c:1024] v[c]
  sub: f32[1024] = sub(v, max)
  e: f32[1024] = exp(sub)
  offs_2: i32[] = mul(row, 1000:i32)
  offs_3: i32[1024] = add(offs_2, cols)
  sum: f32[] = for [] sum<f32>[c:1024] e[c]
  div: f32[1024] = div(e, sum)
  store: bool[] = store(y, offs_3, div, mask)
  return True:bool
}"""


def test_softmax_kernel_func() -> None:
    program = middle_end(EXAMPLES / "softmax.linnet", stop="instantiate-kernels")
    (k,) = kernels(program)
    assert print_func(k) == SOFTMAX_KERNEL
    (op,) = chosen(program)
    assert op.kernel.func == k.name and op.kernel.generics == (("R", 64), ("C", 1000),
                                                                ("B", 1024))
    assert program.funcs.index(k) < program.funcs.index(op)  # declared before its op
    assert k.launch == ir.Launch((64,), None, None, ("empty",))
    assert [o.type for o in k.outputs] == [ir.TType((64, 1000), "f32")]


def test_softmax_after_dce_keeps_the_effect_and_lowers_the_reductions() -> None:
    program = middle_end(EXAMPLES / "softmax.linnet")
    (k,) = kernels(program)
    ops = [b.expr.op for b in k.body.binds if isinstance(b.expr, ir.Prim)]
    assert ops.count("store") == 1 and ops.count("load") == 1
    assert {"reduce_max", "reduce_sum"} <= set(ops)


def test_matmul_offsets_masks_and_contraction() -> None:
    program = middle_end(EXAMPLES / "matmul.linnet")
    (k,) = kernels(program)
    assert k.launch == ir.Launch((4,), 8, 4, ("empty",))  # 2 x 2 tiles of 128x128, one axis
    loads = prims(k, "load")
    assert [e.args[1].type.shape for e in loads] == [(128, 32), (32, 128)]
    assert [e.args[2].type for e in loads] == [ir.TType((128, 32), "bool"),
                                               ir.TType((32, 128), "bool")]
    (store,) = prims(k, "store")
    assert store.args[1].type.shape == (128, 128) and store.args[3].type.shape == (128, 128)
    einsums = [b.expr for b in all_binds(k.body) if isinstance(b.expr, ir.Einsum)]
    assert [e.spec for e in einsums] == ["ik,kj->ij"]
    (loop,) = [b.expr for b in k.body.binds if isinstance(b.expr, ir.Loop)]
    assert (loop.lo, loop.hi) == (0, 3)  # (72 + 32 - 1) / 32


def _loops(f: ir.Func) -> list[ir.Loop]:
    return [b.expr for b in all_binds(f.body) if isinstance(b.expr, ir.Loop)]


def test_run_time_loop_bounds_are_i64_scalars_computed_before_the_loop() -> None:
    program = middle_end(VALID / "96_kernel_runtime_loops.linnet")
    by_name = {k.name.split("__")[0]: k for k in kernels(program)}
    i64 = ir.TType((), "i64")
    (lower,) = _loops(by_name["strict_lower"])
    assert lower.lo == 0 and isinstance(lower.hi, ir.Var) and lower.hi.type == i64
    assert not lower.static and lower.runtime_bounds == (lower.hi,)
    (band,) = _loops(by_name["band"])  # max(...) and min(...) of i32 values, cast to i64
    assert all(isinstance(b, ir.Var) and b.type == i64 for b in (band.lo, band.hi))
    casts = {b.var: b.expr for b in by_name["band"].body.binds if isinstance(b.expr, ir.Prim)}
    assert [casts[b].op for b in (band.lo, band.hi)] == ["cast", "cast"]
    assert [casts[b].args[0].type.dtype for b in (band.lo, band.hi)] == ["i32", "i32"]
    # loops that carry nothing but store are kept (a run-time upper, then a run-time lower)
    first, second = _loops(by_name["lower_double"])
    assert first.carried == second.carried == ()
    assert first.lo == 0 and isinstance(first.hi, ir.Var)
    assert isinstance(second.lo, ir.Var) and second.hi == 37
    assert prims(by_name["lower_double"], "store")


def test_a_scalar_parameter_bounds_a_kernel_loop() -> None:
    program = middle_end(VALID / "97_kernel_loop_bound_params.linnet")
    (k,) = kernels(program)
    (loop,) = _loops(k)
    n = k.params[1]
    assert n.type == ir.TType((), "i32") and loop.lo == 0 and isinstance(loop.hi, ir.Var)
    x = np.arange(20 * 40, dtype=np.float32).reshape(20, 40) % 7
    for count in (-100, -20, 0, 1, 17, 40, 100):  # hi < lo, hi == lo, ragged, past C
        (got,) = run_kernel(k, [x, np.int32(count)])
        np.testing.assert_allclose(got, x[:, :max(0, min(count, 40))].sum(axis=1))


def test_a_loop_that_carries_nothing_and_writes_nothing_is_dropped() -> None:
    text = """module m
kernel k<N: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid(N) {
    let r = program_id(0)
    for t in 0..cast<i64>(r) {
        let unused = load(x[r]) * 2.0
    }
    store(y[r], load(x[r]))
}
op copy<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel k<N> {
    return x
}
entry main(x: Tensor[8; f32]) -> Tensor[8; f32] {
    return copy(x)
}
"""
    (k,) = kernels(middle_end(text=text))
    assert not _loops(k)


def test_column_stats_atomics_and_inits() -> None:
    program = middle_end(EXAMPLES / "column_stats.linnet")
    (k,) = kernels(program)
    assert k.launch == ir.Launch((10, 2), 4, 1, ("zero", "lowest"))
    add, = prims(k, "atomic_add")
    mx, = prims(k, "atomic_max")
    assert add.args[0].name == "s" and mx.args[0].name == "m"
    assert add.args[1].type == ir.TType((64,), "i32")  # cols: a column offset
    first_row_load = prims(k, "load")[1]
    assert first_row_load.type == ir.TType((64,), "f32")


def test_spec_atomics_min_inits_and_scalar_offsets() -> None:
    program = middle_end(VALID / "46_kernel_atomics.linnet")
    by_name = {k.name.split("__")[0]: k for k in kernels(program)}
    assert by_name["column_reduce_rows"].launch.inits == ("zero", "lowest", "highest")
    (add,) = prims(by_name["total_blocks"], "atomic_add")
    assert add.args[1] == ir.Lit(0, ir.TType((), "i32"))  # y[0]: a literal offset
    assert add.args[2].type == ir.TType((), "f32")  # a scalar value stays scalar


def test_store_forms_scalar_value_scalar_offsets_and_literal_value() -> None:
    program = middle_end(VALID / "45_kernel_store_forms.linnet")
    k = next(k for k in kernels(program) if k.name.startswith("row_total_rows"))
    total, spread = prims(k, "store")
    assert total.args[1].type == ir.TType((), "i32") and len(total.args) == 3
    assert spread.args[1].type.shape == (512,) and spread.args[2].type.shape == ()
    text = """module m
kernel fill_k<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid((N + B - 1) / B)
where B >= 1 {
    let offs = program_id(0) * B + iota<i32>(B)
    store(y[offs], 2, offs < N)
}
op twos<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel fill_k<N, 32> {
    return fill<f32>([N], 2.0)
}
entry main(x: Tensor[40; f32]) -> Tensor[40; f32] {
    return twos(x)
}
"""
    (k,) = kernels(middle_end(text=text))
    (store,) = prims(k, "store")
    assert store.args[2] == ir.Lit(2.0, ir.TType((), "f32")) or \
        store.args[2] == ir.Lit(2, ir.TType((), "f32"))  # the literal typed as the memory
    assert store.args[3].type == ir.TType((32,), "bool")


def test_load_forms() -> None:
    program = middle_end(VALID / "44_kernel_load_forms.linnet")
    by_name = {k.name.split("__")[0]: k for k in kernels(program)}
    (lm,) = prims(by_name["row_min_int_rows"], "load")
    assert lm.args[3] == ir.Lit(2147483647, ir.TType((), "i32"))
    (plain,) = prims(by_name["copy_exact"], "load")
    assert len(plain.args) == 2  # no mask, no other
    (masked,) = prims(by_name["sum_rows"], "load")
    assert len(masked.args) == 3  # a mask, other left to the printers (0)


def test_three_grid_axes_scalar_and_tile_indices() -> None:
    program = middle_end(VALID / "43_kernel_grid3.linnet")
    (k,) = kernels(program)
    assert k.launch.grid == (3, 3, 2)
    tile, bias = prims(k, "load")
    assert tile.args[1].type.shape == (16, 64) and bias.args[1].type.shape == (64,)
    assert sorted(e.attr("axis") for e in prims(k, "program_id")) == [0, 1, 2]


def test_large_tensors_use_i64_offsets() -> None:
    text = """module big
kernel rows_k<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R; f32] grid(R)
where B >= C {
    let row = program_id(0)
    let cols = iota<i32>(B)
    let v = load(x[row, cols], cols < C)
    store(y[row], sum[c] v[c])
}
op row_sums<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R; f32] kernel rows_k<R, C, 2048> {
    let y[r] = sum[c] x[r, c]
    return y
}
entry main(x: Tensor[1100000, 2000; f32]) -> Tensor[1100000; f32] {
    return row_sums(x)
}
"""
    program = middle_end(text=text, stop="instantiate-kernels")
    (k,) = kernels(program)
    (load,) = prims(k, "load")
    (store,) = prims(k, "store")
    assert load.args[1].type == ir.TType((2048,), "i64")  # 2.2e9 elements > 2**31 - 1
    assert store.args[1].type == ir.TType((), "i32")  # y is small
    casts = [e for e in prims(k, "cast") if e.type.dtype == "i64"]
    assert {c.args[0].type.dtype for c in casts} == {"i32"}


def test_a_fn_called_on_tiles_is_inlined_into_the_kernel() -> None:
    program = middle_end(VALID / "49_kernel_loops_and_fns.linnet")
    assert not [f for f in program.funcs if f.kind == "fn"]
    silu = next(k for k in kernels(program) if k.name.startswith("silu_sum_rows"))
    assert not [b for b in all_binds(silu.body) if isinstance(b.expr, ir.Call)]
    assert silu.launch == ir.Launch((10,), 2, 2, ("empty",))
    assert prims(silu, "exp")


def test_tile_index_notation_lowers_on_tiles() -> None:
    """`let inside[i, k] = ...` and `sum[k] a[i, k] * b[k, j]` on tiles, in the kernel."""
    program = middle_end(EXAMPLES / "matmul.linnet", stop="lower-index-notation")
    (k,) = kernels(program)
    assert not [b for b in all_binds(k.body) if isinstance(b.expr, ir.Comprehension)]
    ands = prims(k, "and")
    assert {e.type.shape for e in ands} == {(128, 32), (32, 128), (128, 128)}
    before = kernels(middle_end(EXAMPLES / "matmul.linnet", stop="instantiate-kernels"))[0]
    assert [b for b in all_binds(before.body) if isinstance(b.expr, ir.Comprehension)]


# ============================================================== kernel rules


NOT_POW2 = """module bad
kernel rows_k<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R, C; f32] grid(R) {
    let row = program_id(0)
    let cols = iota<i32>(C)
    store(y[row, cols], load(x[row, cols]))
}
op copy<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] kernel rows_k<R, C> {
    return x
}
entry main(x: Tensor[4, COLS; f32]) -> Tensor[4, COLS; f32] {
    return copy(x)
}
"""


def test_a_tile_size_not_a_power_of_two_is_e2127() -> None:
    text = NOT_POW2.replace("COLS", "1000")
    with pytest.raises(CompileError) as err:
        middle_end(text=text)
    (d,) = err.value.diagnostics
    assert d.code == "E2127"
    assert d.message == "tile sizes must be powers of two: iota(1000)"
    assert text[d.span.start:d.span.end] == "iota<i32>(C)"


def test_a_bad_tile_size_is_no_error_where_the_kernel_is_not_chosen() -> None:
    text = NOT_POW2.replace("COLS", "1000")
    program = middle_end(text=text, numerics="exact")
    assert not kernels(program)
    assert kernels(middle_end(text=NOT_POW2.replace("COLS", "1024")))


def test_a_derived_tile_not_a_power_of_two_is_e2127() -> None:
    text = """module bad
kernel pad_k(x: Tensor[12; f32]) -> y: Tensor[12; f32] grid(1) {
    let offs = iota<i32>(8)
    let wide = fill<f32>([3, 4], 0.0)
    store(y[offs], load(x[offs]))
}
op ident(x: Tensor[12; f32]) -> Tensor[12; f32] kernel pad_k {
    return x
}
entry main(x: Tensor[12; f32]) -> Tensor[12; f32] {
    return ident(x)
}
"""
    with pytest.raises(CompileError) as err:
        middle_end(text=text)
    (d,) = err.value.diagnostics
    assert d.code == "E2127" and "a tile of shape [3, 4]" in d.message
    assert text[d.span.start:d.span.end] == "fill<f32>([3, 4], 0.0)"


# ================================================================= values


EXAMPLE_VALUES = ["softmax", "matmul", "row_scan", "row_product", "column_stats",
                  "layer_norm", "relu", "attention"]


@pytest.mark.parametrize("name", EXAMPLE_VALUES)
def test_example_kernel_matches_the_body(name: str) -> None:
    """The kernel, run by the NumPy evaluator, against the entry under --numerics exact."""
    path = EXAMPLES / f"{name}.linnet"
    program = middle_end(path)
    main = program.func(program.entry)
    rng = np.random.default_rng(7)
    inputs = [random_input(p.type, rng) for p in main.params]
    want = linnet_torch.load_function(str(path), "main", compile=False, numerics="exact")(
        *[torch.from_numpy(x) for x in inputs])
    want = want if isinstance(want, tuple) else (want,)
    # each main calls one kernel-backed op, directly, with its params or literals
    (call,) = [b.expr for b in main.body.binds if isinstance(b.expr, ir.Call)
               and program.func(b.expr.callee).kernel is not None]
    op = program.func(call.callee)
    kernel = program.func(op.kernel.func)
    env = {p.name: x for p, x in zip(main.params, inputs)}
    args = [env[a.name] if isinstance(a, ir.Var) else a.value for a in call.args]
    got = run_kernel(kernel, args)
    if name == "relu":  # main is scale(relu(x), s): compare relu alone
        want = (np.maximum(inputs[0], 0),)
    for g, w, o in zip(got, want, kernel.outputs):
        assert_close(g, np.asarray(w), o.type.dtype)


@pytest.mark.parametrize("length", [70, 128, 1])
def test_causal_attention_kernel_matches_the_definition(length: int) -> None:
    """The causal kernel, run by the NumPy evaluator: its loops' run-time bounds (blocks below
    the diagonal unmasked, the diagonal blocks clamped at the end) give causal attention."""
    values = {"B": 1, "H": 2, "L": length, "D": 32}
    program = middle_end(EXAMPLES / "attention.linnet", "attention_causal_any", bind=values)
    (k,) = kernels(program)
    rng = np.random.default_rng(3)
    q, key, v = (rng.standard_normal((1, 2, length, 32)).astype(np.float32) for _ in range(3))
    (got,) = run_kernel(k, [q, key, v, np.float32(0.3)])
    scores = np.einsum("bhld,bhsd->bhls", q.astype(np.float64), key) * 0.3
    scores = np.where(np.tril(np.ones((length, length), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    want = np.einsum("bhls,bhsd->bhld", e / e.sum(axis=-1, keepdims=True), v)
    assert_close(got, want, "f32")


SPEC_VALUES = sorted(VALID.glob("4*_kernel*.linnet")) + [
    VALID / "53_pub_items.linnet", VALID / "61_kernel_dtype_generic.linnet",
    VALID / "63_op_where.linnet"] + RUNTIME_LOOPS


@pytest.mark.parametrize("path", SPEC_VALUES, ids=lambda p: p.stem)
def test_spec_kernels_match_their_op_bodies(path: Path) -> None:
    """Each chosen kernel against its op's body, run by the torch interpreter."""
    program = middle_end(path)
    rng = np.random.default_rng(11)
    for op in chosen(program):
        kernel = program.func(op.kernel.func)
        if any(p.type.dtype == "bf16" for p in op.params):
            continue  # NumPy has no bf16
        inputs = [random_input(p.type, rng) for p in op.params]
        body_only = ir.Program(tuple(f for f in program.funcs if f.kind != "kernel"), op.name)
        want = linnet_torch.run(body_only, *[torch.from_numpy(np.asarray(x)) for x in inputs])
        got = run_kernel(kernel, inputs)
        for g, w, o in zip(got, want, kernel.outputs):
            assert_close(g, np.asarray(w), o.type.dtype)


def test_the_evaluator_catches_a_wrong_offset() -> None:
    """A sanity check of the harness: a kernel whose offsets are off by one fails."""
    program = middle_end(EXAMPLES / "row_scan.linnet")
    (k,) = kernels(program)
    (load,) = prims(k, "load")
    shifted = ir.Prim("load", (load.args[0], load.args[1], ir.Lit(False, ir.TType((), "bool")),
                               ir.Lit(0.0, ir.TType((), "f32"))), load.type)
    body = ir.Block(tuple(ir.Bind(b.var, shifted) if b.expr is load else b
                          for b in k.body.binds), k.body.result)
    broken = ir.Func(k.name, k.kind, k.params, body, outputs=k.outputs, launch=k.launch)
    x = np.random.default_rng(0).standard_normal((16, 500)).astype(np.float32)
    assert np.allclose(run_kernel(k, [x])[0], np.cumsum(x, axis=1), atol=1e-4)
    assert not np.allclose(run_kernel(broken, [x])[0], np.cumsum(x, axis=1), atol=1e-4)


def test_a_fn_called_from_a_kernel_has_its_tiles_checked_too() -> None:
    text = """module bad
fn widen<N: Dim>(v: Tensor[N; f32]) -> Tensor[N; f32] {
    let odd = fill<f32>([N + 1], 0.0)
    return v
}
kernel pad_k(x: Tensor[8; f32]) -> y: Tensor[8; f32] grid(1) {
    let offs = iota<i32>(8)
    store(y[offs], widen(load(x[offs])))
}
op ident(x: Tensor[8; f32]) -> Tensor[8; f32] kernel pad_k {
    return widen(x)
}
entry main(x: Tensor[8; f32]) -> Tensor[8; f32] {
    return ident(x)
}
"""
    assert not kernels(middle_end(text=text, numerics="exact"))  # the body may use it
    with pytest.raises(CompileError) as err:
        middle_end(text=text)
    (d,) = err.value.diagnostics
    assert d.code == "E2127" and "[9]" in d.message
    assert text[d.span.start:d.span.end] == "fill<f32>([N + 1], 0.0)"
