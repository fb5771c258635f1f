"""parse, check and bind-generics (linnet/passes/front/bind_generics.py): a file into surface
trees, then a checked program, then one entry whose generics hold their `--bind` values."""

from __future__ import annotations

import pytest

from linnet.check.instance import Analysis
from linnet.diagnostics import CompileError
from linnet.errors import UsageError
from linnet.passes.front.bind_generics import Bound
from linnet.pipeline import compile_source, passes_for
from linnet.syntax.program import Program

SOURCE = """module m
entry scale<N: Dim, T: Float>(x: Tensor[N; T]) -> Tensor[N; T] {
    return x * 2.0
}
entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    return x
}
"""


def front(*names: str):
    return [p for p in passes_for("torch") if p.name in names]


def test_each_front_pass_hands_the_next_its_language():
    compiled = compile_source(SOURCE, entry="scale", bind={"N": 8, "T": "bf16"},
                              passes=front("parse", "check", "bind-generics"))
    assert isinstance(compiled.stage("parse"), Program)
    assert isinstance(compiled.stage("check"), Analysis)
    assert compiled.stage("check").diagnostics == []
    bound = compiled.stage("bind-generics")
    assert isinstance(bound, Bound)
    assert bound.entry.name == "scale"
    assert bound.values == {"N": 8, "T": "bf16"}
    assert bound.binding.dtypes == {"T": "bf16"} and str(bound.binding.dims["N"]) == "8"
    assert str(bound) == "entry scale<N=8, T=bf16>"


def test_a_syntax_error_stops_at_parse_and_a_name_error_at_check():
    broken = "module m\nentry main(x: Tensor[4; f32] -> {\n"
    with pytest.raises(CompileError) as err:
        compile_source(broken, passes=front("parse"))
    assert err.value.diagnostics[0].code == "E1101"
    unknown = "module m\nentry main(x: Tensor[4; f32]) -> Tensor[4; f32] {\n    return y\n}\n"
    assert isinstance(compile_source(unknown, passes=front("parse")).stage("parse"), Program)
    with pytest.raises(CompileError) as err:
        compile_source(unknown, passes=front("parse", "check"))
    assert err.value.diagnostics[0].code == "E1201"


@pytest.mark.parametrize("entry, bind, message", [
    ("nope", {}, "no entry named `nope`; the file's entries: scale, main"),
    (None, {}, "the file has 2 entries (scale, main); choose one with entry=NAME"),
    ("scale", {"N": 8, "T": "i32"}, "`T` is a Float; choose one of f16, bf16, f32, f64"),
])
def test_the_entry_and_its_values_are_chosen_or_refused_by_name(entry, bind, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compile_source(SOURCE, entry=entry, bind=bind,
                       passes=front("parse", "check", "bind-generics"))


def test_a_generic_without_a_value_names_the_binding_it_needs():
    with pytest.raises(UsageError, match=r"generic `T: Float` of `scale` needs a value"):
        compile_source(SOURCE, entry="scale", bind={"N": 8},
                       passes=front("parse", "check", "bind-generics"))
