"""The program's typed state: records declared by the passes, enforced by --verify-each,
printed in dumps; the old `Program.meta` still read and built, with a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from linnet import pipeline
from linnet.cli.main import build_parser
from linnet.ir import kernel_numerics
from linnet.ir import numerics
from linnet.ir import tensor as ir
from linnet.ir.program_state import GradNote, Interface, ProgramState, RECORDS
from linnet.passes.manager import Instrumentation, InvalidIR, Pass
from linnet.pipeline import FRONT, MIDDLE, compile_source, passes_for

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "examples" / "softmax.linnet"
BLOCK = ROOT / "examples" / "block_model.linnet"
BLOCK_BIND = {"L": 2, "H": 4, "V": 8, "B": 3}


def rogue(writes: tuple[str, ...]) -> Pass:
    """A pass that renames the program's module, declaring `writes`."""
    return Pass("rename-module", "set the module record", "tensor", "tensor",
                lambda program, options: program.with_state(module="elsewhere"),
                writes=writes)


def run_with(extra: Pass) -> ir.Program:
    passes = FRONT + MIDDLE[:1] + [extra]
    return compile_source(SOFTMAX.read_text(), path=str(SOFTMAX), entry="main", tuning=False,
                          passes=passes, shown=Instrumentation(verify_each=True)).text


def test_a_pass_that_writes_an_undeclared_record_fails_verification() -> None:
    with pytest.raises(InvalidIR, match=r"`rename-module` changed the state record\(s\) "
                                        r"module it does not declare"):
        run_with(rogue(writes=()))


def test_the_same_pass_declaring_the_record_passes() -> None:
    assert run_with(rogue(writes=("module",))).state.module == "elsewhere"


def test_without_verify_each_the_undeclared_write_is_not_checked() -> None:
    passes = FRONT + MIDDLE[:1] + [rogue(writes=())]
    program = compile_source(SOFTMAX.read_text(), path=str(SOFTMAX), entry="main",
                             tuning=False, passes=passes).text
    assert program.state.module == "elsewhere"


def test_a_pass_naming_no_record_is_refused() -> None:
    with pytest.raises(ValueError, match="no state record 'kernel'"):
        Pass("p", "", "tensor", "tensor", lambda p, o: p, reads=("kernel",))


@pytest.mark.parametrize("target", pipeline.TARGETS)
def test_every_pass_of_every_pipeline_declares_what_it_writes(target: str) -> None:
    """A block entry (manifest), tuned choices (examples/linnet.tuning.json) and --grad:
    every record the pipeline writes, verified pass by pass."""
    for entry, grad in (("main", False), ("loss", True)):
        compile_source(BLOCK.read_text(), path=str(BLOCK), root="Model", entry=entry,
                       bind=BLOCK_BIND, target=target, grad=grad,
                       shown=Instrumentation(verify_each=True))
    compile_source(SOFTMAX.read_text(), path=str(SOFTMAX), entry="main", target=target,
                   shown=Instrumentation(verify_each=True))


def test_the_records_follow_the_program_through_the_pipeline() -> None:
    compiled = compile_source(BLOCK.read_text(), path=str(BLOCK), root="Model", entry="loss",
                              bind=BLOCK_BIND, grad=True, tuning=False)
    elaborated = compiled.stage("elaborate").state
    assert elaborated.module.split(".")[-1] == "block_model"
    assert elaborated.parameters is compiled.parameters
    assert isinstance(elaborated.interface, Interface)
    assert elaborated.grad is None and elaborated.egraph_report == ""
    assert compiled.stage("instantiate-kernels").state.kernels is None
    final = compiled.stage("outline-deep-blocks").state
    assert isinstance(final.grad, GradNote) and final.grad.inputs
    assert str(final.grad).startswith("returns the loss, then its gradient with respect to: ")


def test_the_dump_prints_each_record_set() -> None:
    compiled = compile_source(SOFTMAX.read_text(), path=str(SOFTMAX), entry="main",
                              tuning=False)
    dump = compiled.dump("elaborate")
    tail = dump[dump.index("\nentry main\n"):].splitlines()
    assert tail[2:] == ["", "// state interface: inputs: x = x; results: result",
                        "// state kernels: 1 kernel binding(s)",
                        "//   softmax__R64_C1000 -> row_softmax<R=64, C=1000, B=1024>",
                        "// state module: examples.softmax"]
    after = compiled.dump("egraph-tiles")
    assert "// state kernels" not in after and "// egraph-tiles row_softmax" in after


def test_meta_is_deprecated_but_still_read_and_built() -> None:
    state = ProgramState(module="m", grad=GradNote(("x", "w")))
    program = ir.Program((), "main", state)
    with pytest.warns(DeprecationWarning, match="Program.state"):
        pairs = program.meta
    assert pairs == (("module", "m"), ("grad", str(state.grad)), ("grad_inputs", ("x", "w")))
    with pytest.warns(DeprecationWarning, match="state=ProgramState"):
        rebuilt = ir.Program((), "main", meta=pairs + (("numerics", "fast"),))
    assert rebuilt == program  # the numerics are the compilation's Options, not the state


def test_records_are_the_state_fields() -> None:
    assert RECORDS == ("interface", "kernels", "module", "source", "parameters", "shard",
                       "tuning", "grad", "egraph_report")
    assert ProgramState().written() == ()
    assert ProgramState(module="m").changed(ProgramState()) == ("module",)


def test_one_list_of_numerics_modes() -> None:
    args = build_parser().parse_args(["compile", "x.linnet", "--numerics", "fast"])
    assert args.numerics == "fast"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["compile", "x.linnet", "--numerics", "approximate"])
    assert pipeline.NUMERICS is numerics.MODES and kernel_numerics.MODES is numerics.MODES
    assert numerics.MODES == ("exact", "equivalent", "fast")
    assert numerics.KERNEL_MODES == ("equivalent", "fast")


def test_the_printers_read_the_numerics_from_the_options_only() -> None:
    """A program's state has no numerics: the same program prints per the options."""
    from linnet.passes.manager import Options
    program = compile_source(SOFTMAX.read_text(), path=str(SOFTMAX), entry="main",
                             tuning=False, passes=passes_for("torch")[:-1]).text
    from linnet.emit.torch import emit_torch
    assert "@triton.jit" in emit_torch(program, Options(numerics="equivalent"))
    exact = emit_torch(program, Options(numerics="exact"))
    assert "triton" not in exact and "# numerics: exact" in exact


def test_docs_ir_lists_each_record_with_the_passes_that_write_and_read_it() -> None:
    """docs/ir.md's table of records matches the passes' declarations."""
    import re
    page = (ROOT / "docs" / "ir.md").read_text(encoding="utf-8")
    text = page.split("## The program's state")[1].split("\n## ")[0]
    rows = {m.group(1): (m.group(2), m.group(3)) for m in re.finditer(
        r"^\| `(\w+)` \|[^|]+\|([^|]*)\|([^|]*)\|", text, re.M)}
    assert tuple(rows) == RECORDS

    def names(cell: str) -> set[str]:
        return {n.strip() for n in cell.split(",") if n.strip()}

    passes = pipeline.all_passes()
    for record, (written, read) in rows.items():
        assert names(written) == {p.name for p in passes if record in p.writes}, record
        assert names(read) == {p.name for p in passes if record in p.reads}, record
