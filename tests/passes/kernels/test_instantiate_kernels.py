"""instantiate-kernels: a kernel Func per kernel instance, named apart, with the fns it calls."""

from __future__ import annotations

from pathlib import Path

from linnet.ir import tensor as ir
from linnet.passes.kernels.choose_kernels import choose_kernels as choose_only
from linnet.passes.kernels.instantiate_kernels import instantiate_kernels
from linnet.passes.manager import Options

from tests.passes.kernels.test_choose_kernels import (SOFTMAX, VALID, choices, chosen, elaborated,
                                                       kernel_funcs)


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


def test_choosing_only_decides_and_instantiating_adds_the_funcs() -> None:
    before = elaborated(SOFTMAX)
    decided = choose_only(before, Options())
    assert kernel_funcs(decided) == [] and decided.state.kernels is not None
    assert decided.func("softmax__R64_C1000").kernel.func == ""
    assert kernel_funcs(instantiate_kernels(decided)) == ["row_softmax__R64_C1000_B1024"]
