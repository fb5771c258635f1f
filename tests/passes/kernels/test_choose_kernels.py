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
