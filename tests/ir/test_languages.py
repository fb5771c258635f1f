"""The declared IR languages: each middle pass names the language it takes and returns,
the examples belong to each stage's language, a pass moved out of order fails
`--verify-each` naming the pass and the form, and docs/ir.md shows the code's languages."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from linnet.cli.main import main
from linnet.ir import languages as L
from linnet.ir import tensor as ir
from linnet.ir.verify import verify
from linnet.passes.manager import (PRINTERS, Instrumentation, InvalidIR, Options, Pass, language,
                                    run_pipeline)
from linnet.pipeline import BACK, MIDDLE, all_passes, compile_source, passes_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
KERNEL_SCANS = ROOT / "tests" / "spec" / "valid" / "87_kernel_scans.linnet"


def _compile(path: Path, passes=None, target: str = "torch", **kw):
    passes = passes or _middle(target)
    return compile_source(path.read_text(), path=str(path), entry="main", target=target,
                          passes=passes, tuning=False, shown=Instrumentation(verify_each=True),
                          **kw)


def _middle(target: str = "torch") -> list:
    """The pipeline without its printer (whose output is no tensor IR)."""
    return [p for p in passes_for(target) if not p.name.startswith("emit")]


def _moved(name: str, before: str) -> list:
    """The pipeline with pass `name` taken out and put back just before `before`."""
    passes = _middle()
    moved = passes.pop([p.name for p in passes].index(name))
    passes.insert([p.name for p in passes].index(before), moved)
    return passes


# ------------------------------------------------------------ declarations


def test_every_pass_names_registered_languages_and_the_middle_names_tensor_ones() -> None:
    assert all(p.source in PRINTERS and p.target in PRINTERS for p in all_passes())
    assert [p for p in MIDDLE[1:] if p.source not in L.LANGUAGES] == []
    assert [p for p in MIDDLE if p.target not in L.LANGUAGES] == []


def test_each_pass_takes_what_the_one_before_returns() -> None:
    for before, after in zip(MIDDLE, MIDDLE[1:]):
        assert after.source == before.target, (before.name, after.name)
    assert {p.source for passes in BACK.values() for p in passes} == {MIDDLE[-1].target}


def test_each_language_names_the_pass_that_returns_it_and_those_that_keep_it() -> None:
    for lang in L.LANGUAGES.values():
        makers = [p.name for p in MIDDLE if p.target == lang.name and p.source != lang.name]
        keepers = [p.name for p in MIDDLE if p.target == p.source == lang.name]
        assert makers == ([lang.established_by] if lang.established_by else []), lang.name
        assert [k for k in keepers if f"`{k}`" not in lang.doc] == [], lang.name


def test_languages_derive_from_their_parents_as_declared() -> None:
    for lang in L.LANGUAGES.values():
        if lang.parent:
            parent = L.LANGUAGES[lang.parent]
            assert lang.forms == (parent.forms - set(lang.removed)) | set(lang.added)
    assert L.TENSOR_CORE.parent == "tensor-inlined"
    assert L.TENSOR_CORE.removed == (L.COMPREHENSION,)
    assert set(L.TENSOR_CORE.added) == {L.REDUCTION, L.GATHER, L.EINSUM, L.KERNEL_EINSUM}
    with pytest.raises(ValueError, match="tensor-core has no form Comprehension"):
        L.TENSOR_CORE.derive("broken", "", "", removing=(L.COMPREHENSION,))


def test_where_each_form_is_allowed() -> None:
    def allowing(form: L.Form) -> list[str]:
        return [name for name, lang in L.LANGUAGES.items() if name != "any" and
                lang.allows(form)]
    middle = list(L.LANGUAGES)[1:]
    assert allowing(L.COMPREHENSION) == ["tensor", "tensor-kernels", "tensor-inlined"]
    assert allowing(L.CALL_FN) == ["tensor", "tensor-kernels", "tensor-outlined"]
    assert allowing(L.KERNEL_CALL) == ["tensor-kernels"]
    assert allowing(L.KERNEL_BINDING) == ["tensor"]
    assert allowing(L.KERNEL_FUNC) == middle[1:]
    assert allowing(L.DOT) == middle[middle.index("tensor-dots"):]
    assert allowing(L.EINSUM) == middle[middle.index("tensor-core"):]
    assert allowing(L.GATHER) == middle[middle.index("tensor-core"):]
    assert L.GATHER.prims == {"gather", "scatter_add"}
    assert allowing(L.KERNEL_SCAN) == middle[1:middle.index("tensor-kernel-loops")]
    assert allowing(L.KERNEL_EINSUM) == ["tensor-core", "tensor-dots", "tensor-kernel-loops"]
    assert all(allowing(f) == middle for f in (L.ENTRY_FUNC, L.OP_FUNC, L.GRAD_CLAUSE,
                                               L.PRIM, L.IF, L.LOOP, L.SCAN, L.WHILE))
    assert L.ANY.forms == frozenset(L.FORMS)


def test_every_prim_is_in_exactly_one_form() -> None:
    groups = [f.prims for f in L.FORMS if f.prims]
    assert sum(len(g) for g in groups) == len(ir.PRIMS)
    assert frozenset().union(*groups) == frozenset(ir.PRIMS)


def test_an_unknown_language_is_named() -> None:
    with pytest.raises(ValueError, match="unknown IR language 'tile'; known: any, tensor,"):
        verify(ir.Program((), "main"), "tile")


# ------------------------------------------------------------ the examples


@pytest.mark.parametrize("target", ["torch", "jax", "onnx", "stablehlo"])
@pytest.mark.parametrize("name", ["softmax", "layer_norm", "matmul", "row_scan"])
def test_examples_belong_to_every_stage_language(name: str, target: str) -> None:
    compiled = _compile(EXAMPLES / f"{name}.linnet", target=target)
    middle = [s for s in compiled.result.stages if s.language in L.LANGUAGES]
    assert [s.language for s in middle] == [p.target for p in MIDDLE]
    assert all(verify(s.ir, s.language) == [] for s in middle)


@pytest.mark.parametrize("path, stage, language, fragment", [
    (EXAMPLES / "softmax.linnet", "choose-kernels", "tensor-kernels",
     "kernel binding is not allowed in tensor-kernels (instantiate-kernels removes it)"),
    (EXAMPLES / "layer_norm.linnet", "instantiate-kernels", "tensor-inlined",
     "Call of a fn is not allowed in tensor-inlined (inline-fns removes it)"),
    (EXAMPLES / "softmax.linnet", "merge-reductions", "tensor-core",
     "Comprehension is not allowed in tensor-core (lower-index-notation removes it)"),
    (EXAMPLES / "matmul.linnet", "egraph-products", "tensor-core",
     "dot is not allowed in tensor-core (egraph-products introduces it)"),
    (KERNEL_SCANS, "fast-math", "tensor-kernel-loops",
     "scan in a kernel is not allowed in tensor-kernel-loops (lower-kernel-scans removes it)"),
], ids=["instantiate-kernels", "inline-fns", "lower-index-notation", "egraph-products",
        "lower-kernel-scans"])
def test_each_pass_has_work_its_language_marks(path: Path, stage: str, language: str,
                                               fragment: str) -> None:
    """The languages are not vacuous: a stage's IR breaks the next language's rule."""
    program = _compile(path).stage(stage)
    assert any(m.endswith(fragment) for m in verify(program, language))


# ------------------------------------------------------------ out of order


def test_cse_before_lowering_index_notation_fails_on_its_input() -> None:
    with pytest.raises(InvalidIR) as err:
        _compile(EXAMPLES / "softmax.linnet", _moved("cse", "lower-index-notation"))
    assert str(err.value).startswith("pass `cse` takes tensor-core IR, and its input is not: ")
    assert ": Comprehension is not allowed in tensor-core (lower-index-notation removes it)" \
        in str(err.value)


def test_lowering_index_notation_before_inlining_fails_on_its_input() -> None:
    with pytest.raises(InvalidIR) as err:
        _compile(EXAMPLES / "layer_norm.linnet", _moved("lower-index-notation", "inline-fns"))
    assert str(err.value).startswith("pass `lower-index-notation` takes tensor-inlined IR")
    assert "layer_norm__R64_C768/normalized: Call of a fn is not allowed in tensor-inlined " \
           "(inline-fns removes it)" in str(err.value)


def test_a_pass_returning_forms_its_target_lacks_fails_on_its_output() -> None:
    passes = [dataclasses.replace(p, target="tensor-core") if p.name == "egraph-products"
              else p for p in _middle()]
    with pytest.raises(InvalidIR, match=r"^pass `egraph-products` produced invalid tensor-core "
                                        r"IR: .*dot is not allowed in tensor-core "
                                        r"\(egraph-products introduces it\)"):
        _compile(EXAMPLES / "matmul.linnet", passes)


def test_a_pass_input_is_checked_only_where_the_language_changes() -> None:
    """Under --verify-each each output is checked against its pass's target, and an input
    only where the pass before returned another language (or for the first pass)."""
    checked: list[tuple[str, object]] = []
    for name in ("test-a", "test-b"):
        language(name, str, lambda ir, name=name: checked.append((name, ir)) or [])
    passes = [Pass("one", "", "test-a", "test-a", lambda ir, o: ir + 1),
              Pass("two", "", "test-a", "test-a", lambda ir, o: ir + 1),
              Pass("three", "", "test-b", "test-b", lambda ir, o: ir + 1)]
    run_pipeline(passes, 0, Options(), Instrumentation(verify_each=True))
    assert checked == [("test-a", 0), ("test-a", 1), ("test-a", 2), ("test-b", 2),
                       ("test-b", 3)]


# ------------------------------------------------------------ docs and cli


def test_docs_ir_page_shows_the_generated_languages() -> None:
    text = (ROOT / "docs" / "ir.md").read_text()
    found = re.search(r"<!-- languages: begin -->\n(.*)\n<!-- languages: end -->", text, re.S)
    assert found and found.group(1) == L.markdown_table()


def test_docs_ir_page_names_every_node_kind_prim_and_func_kind() -> None:
    text = (ROOT / "docs" / "ir.md").read_text()
    nodes = [name for name, obj in vars(ir).items()
             if dataclasses.is_dataclass(obj) and obj.__module__ == ir.__name__]
    assert len(nodes) >= 23
    assert [n for n in nodes if f"`{n}`" not in text] == []
    assert [op for op in ir.PRIMS if op not in text] == []
    from linnet.ir.verify import KINDS
    assert [k for k in KINDS if f"| `{k}` |" not in text] == []


def test_docs_passes_page_gives_each_pass_its_languages() -> None:
    text = (ROOT / "docs" / "passes.md").read_text()
    rows = dict((name, (src, dst)) for name, src, dst in
                re.findall(r"^\| `([\w-]+)` \| ([\w-]+) \| ([\w-]+) \|", text, re.M))
    assert {p.name: (p.source, p.target) for p in all_passes()} == rows


def test_list_passes_shows_each_pass_languages(capsys) -> None:
    assert main(["compile", "--list-passes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    line = next(x for x in lines if x.startswith("lower-index-notation "))
    assert line.split(None, 1)[1].startswith("tensor-inlined -> tensor-core: turn index")
