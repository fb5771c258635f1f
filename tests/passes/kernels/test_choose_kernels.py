"""choose-kernels: which op instances run their kernel, and what the program then holds.

A kernel runs when the numerics are not "exact", the target runs kernels
(torch, jax) and the kernel's `where` holds for the bound sizes; otherwise the
op's body runs and its `KernelChoice` is removed. Chosen kernels are elaborated
once per kernel instance and added to the program before the op using them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from linnet.check.instance import analyze_program, binding_from_values
from linnet.ir import tensor as ir
from linnet.ir.program_state import ProgramState
from linnet.ir.verify import verify
from linnet.passes.kernels.choose_kernels import choose_kernels as choose_only
from linnet.passes.kernels.instantiate_kernels import instantiate_kernels
from linnet.passes.front.elaborate import elaborate
from linnet.passes.manager import Instrumentation, Options
from linnet.pipeline import compile_source, passes_for
from linnet.syntax.program import load_program

ROOT = Path(__file__).resolve().parents[3]
SOFTMAX = ROOT / "examples" / "softmax.linnet"
VALID = ROOT / "tests" / "spec" / "valid"


def elaborated(path: Path, entry: str = "main", dims: dict | None = None) -> ir.Program:
    analysis = analyze_program(load_program(str(path)))
    item = analysis.root.globals.items[entry]
    return elaborate(analysis, item, binding_from_values(item, dims or {}, {}, {}))


def chosen(path: Path | None = None, entry: str = "main", text: str | None = None,
           **options) -> ir.Program:
    """The program after instantiate-kernels (verified), through the real pipeline."""
    passes = [p for p in passes_for("torch") if not p.name.startswith("emit")]
    compiled = compile_source(text, path=str(path or "choose_test.linnet"), entry=entry,
                              passes=passes, shown=Instrumentation(
                                  verify_each=True, stop_after="instantiate-kernels"), **options)
    return compiled.stage("instantiate-kernels")


def choose_kernels(program: ir.Program, options: Options) -> ir.Program:
    """choose-kernels, then instantiate-kernels (which adds the kernel Funcs chosen)."""
    return instantiate_kernels(choose_only(program, options))


def kernel_funcs(program: ir.Program) -> list[str]:
    return [f.name for f in program.funcs if f.kind == "kernel"]


def choices(program: ir.Program) -> dict[str, str]:
    return {f.name: f.kernel.func for f in program.funcs if f.kernel is not None}


def test_the_kernel_is_chosen_and_the_op_keeps_its_body() -> None:
    before = elaborated(SOFTMAX)
    after = choose_kernels(before, Options())
    assert verify(after) == []
    assert kernel_funcs(after) == ["row_softmax__R64_C1000_B1024"]
    assert choices(after) == {"softmax__R64_C1000": "row_softmax__R64_C1000_B1024"}
    assert after.func("softmax__R64_C1000").body == before.func("softmax__R64_C1000").body


def test_the_kernel_library_leaves_the_state_after_instantiation() -> None:
    before = elaborated(SOFTMAX)
    assert before.state.kernels is not None and before.state.kernels.knows("softmax__R64_C1000")
    for numerics in ("exact", "equivalent", "fast"):
        after = choose_kernels(before, Options(numerics=numerics))
        assert after.state.kernels is None
        # the entry's names, for the exports; the numerics stay the compilation's Options
        assert [name for name, _ in after.state.written()] == ["interface"]


def test_exact_numerics_runs_bodies_only() -> None:
    after = choose_kernels(elaborated(SOFTMAX), Options(numerics="exact"))
    assert kernel_funcs(after) == [] and choices(after) == {}
    assert all(f.kernel is None for f in after.funcs)


def test_a_target_without_kernels_runs_bodies() -> None:
    before = elaborated(SOFTMAX)
    for target in ("onnx", "stablehlo"):
        after = choose_kernels(before, Options(target=target))
        assert kernel_funcs(after) == [] and choices(after) == {}
    assert kernel_funcs(choose_kernels(before, Options(target="jax")))
    assert kernel_funcs(choose_kernels(before, Options(target="torch")))


def test_grad_runs_bodies() -> None:
    after = choose_kernels(elaborated(SOFTMAX), Options(grad=True))
    assert kernel_funcs(after) == [] and choices(after) == {}


def test_a_failing_where_runs_the_body_silently() -> None:
    wide = chosen(SOFTMAX, "softmax_any", bind={"R": 2, "C": 4000})  # C > B = 1024
    assert kernel_funcs(wide) == [] and choices(wide) == {}
    fits = chosen(SOFTMAX, "softmax_any", bind={"R": 2, "C": 1024})
    assert kernel_funcs(fits) == ["row_softmax__R2_C1024_B1024"]


def test_one_op_two_sizes_where_holds_for_one() -> None:
    program = chosen(VALID / "63_op_where.linnet")
    assert choices(program) == {"row_scale__R6_C4": "row_scale_rows__R6_C4_B256"}
    wide = program.func("row_scale__R2_C1000")
    assert wide.kind == "op" and wide.kernel is None  # 1000 > 256: the body runs


def test_one_kernel_instance_serves_every_op_that_binds_it() -> None:
    text = """module shared
kernel neg_blocks<N: Dim, B: Dim>(x: Tensor[N; f32]) -> y: Tensor[N; f32] grid((N + B - 1) / B)
where B >= 1 {
    let offs = program_id(0) * B + iota<i32>(B)
    store(y[offs], -load(x[offs], offs < N), offs < N)
}
op neg_a<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel neg_blocks<N, 64> {
    return -x
}
op neg_b<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel neg_blocks<N, 64> {
    return -x
}
op neg_c<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel neg_blocks<N, 128> {
    return -x
}
entry main(x: Tensor[100; f32]) -> (Tensor[100; f32], Tensor[100; f32], Tensor[100; f32]) {
    return (neg_a(x), neg_b(x), neg_c(x))
}
"""
    program = chosen(text=text)
    assert kernel_funcs(program) == ["neg_blocks__N100_B64", "neg_blocks__N100_B128"]
    assert choices(program) == {"neg_a__N100": "neg_blocks__N100_B64",
                                "neg_b__N100": "neg_blocks__N100_B64",
                                "neg_c__N100": "neg_blocks__N100_B128"}
    names = [f.name for f in program.funcs]
    assert names.index("neg_blocks__N100_B64") < names.index("neg_a__N100")
    assert names.index("neg_blocks__N100_B128") < names.index("neg_c__N100")


def test_kernel_names_avoid_the_program_functions(tmp_path: Path) -> None:
    (tmp_path / "lib.linnet").write_text("""module lib
kernel scale_tile(x: Tensor[16; f32]) -> y: Tensor[16; f32] grid(1) {
    let offs = iota<i32>(16)
    store(y[offs], load(x[offs]) * 2.0)
}
pub op scaled(x: Tensor[16; f32]) -> Tensor[16; f32] kernel scale_tile {
    return x * 2.0
}
""")
    root = tmp_path / "root.linnet"
    root.write_text("""module root
use lib
op scale_tile(x: Tensor[16; f32]) -> Tensor[16; f32] {
    return x * 3.0
}
entry main(x: Tensor[16; f32]) -> (Tensor[16; f32], Tensor[16; f32]) {
    return (scaled(x), scale_tile(x))
}
""")
    program = chosen(root)
    assert kernel_funcs(program) == ["scale_tile_1"]
    assert choices(program) == {"scaled": "scale_tile_1"}


def test_fns_a_kernel_calls_come_along() -> None:
    program = chosen(VALID / "49_kernel_loops_and_fns.linnet")
    names = [f.name for f in program.funcs]
    fns = [f.name for f in program.funcs if f.kind == "fn"]
    assert fns and names.index(fns[0]) < names.index("silu_sum_rows__R10_C1000_B128")
    calls = [b.expr.callee for b in program.func("silu_sum_rows__R10_C1000_B128").body.binds
             if isinstance(b.expr, ir.Loop) for b in b.expr.body.binds
             if isinstance(b.expr, ir.Call)]
    assert calls == fns


def test_choosing_twice_changes_nothing_and_exact_then_drops() -> None:
    once = choose_kernels(elaborated(SOFTMAX), Options())
    assert choose_kernels(once, Options()) == once
    dropped = choose_kernels(once, Options(numerics="exact"))
    assert choices(dropped) == {}


def test_without_the_library_bodies_run() -> None:
    """A program built by hand (no kernel library in its state) keeps no choice."""
    before = elaborated(SOFTMAX)
    bare = replace(before, state=ProgramState())
    after = choose_kernels(bare, Options())
    assert kernel_funcs(after) == [] and choices(after) == {}


def test_choosing_only_decides_and_instantiating_adds_the_funcs() -> None:
    before = elaborated(SOFTMAX)
    decided = choose_only(before, Options())
    assert kernel_funcs(decided) == [] and decided.state.kernels is not None
    assert decided.func("softmax__R64_C1000").kernel.func == ""
    assert kernel_funcs(instantiate_kernels(decided)) == ["row_softmax__R64_C1000_B1024"]


def test_each_kernel_instance_is_checked_once(monkeypatch) -> None:
    """choose-kernels' questions (its `where`, its writes) and instantiate-kernels'
    translation share one check of the kernel at its bound sizes (`KernelChecks`)."""
    from linnet.check.instance import Analysis
    from linnet.syntax import tree as t
    checked: list[str] = []
    real = Analysis.instantiate

    def counting(self, item, binding, module=None):
        if isinstance(item, t.Kernel):
            checked.append(item.name)
        return real(self, item, binding, module)

    monkeypatch.setattr(Analysis, "instantiate", counting)
    program = choose_kernels(elaborated(SOFTMAX), Options())
    assert kernel_funcs(program) == ["row_softmax__R64_C1000_B1024"]
    assert checked == ["row_softmax"]
    instantiate_kernels(choose_only(elaborated(SOFTMAX), Options(numerics="exact")))
    assert checked == ["row_softmax"]  # a kernel no op runs is never checked
