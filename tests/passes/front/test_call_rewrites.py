"""Call rewrites (`linnet/passes/front/call_rewrites.py`), applied by the elaborator: marks
follow a value op's result through `let`, parameters of fns and ops and optionals; a call
whose marked argument matches a rewrite calls the new op; nothing else changes, and a
rewrite whose new op does not take the op's other parameters is an error."""

from __future__ import annotations

from dataclasses import replace

import pytest

from linnet.check.instance import analyze_program, binding_from_values
from linnet.passes.front.call_rewrites import (CAUSAL_ATTENTION, REWRITES, CallRewrite,
                                               determined_by_result, matching)
from linnet.passes.front.elaborate import elaborate
from linnet.passes.front.vocabulary import ElaborationError
from linnet.syntax.program import load_program

PROGRAM = """module m
use std.nn.attention::{attention, causal_mask}

fn through<Q: Dim, K: Dim>(q: Tensor[1, 1, Q, 16; f32], k: Tensor[1, 1, K, 16; f32], seen: Tensor[Q, K; bool]) -> Tensor[1, 1, Q, 16; f32] {
    return attention(q, k, k, 0.25, some(seen))
}

entry wrapped(q: Tensor[1, 1, 4, 16; f32], k: Tensor[1, 1, 6, 16; f32]) -> Tensor[1, 1, 4, 16; f32] {
    let mask = causal_mask<4, 6>()
    return through(q, k, mask)
}

entry both(q: Tensor[1, 1, 4, 16; f32], k: Tensor[1, 1, 6, 16; f32], m: Tensor[4, 6; bool]) -> (Tensor[1, 1, 4, 16; f32], Tensor[1, 1, 4, 16; f32]) {
    return (attention(q, k, k, 0.25, some(causal_mask<4, 6>())), attention(q, k, k, 0.25, some(m)))
}

entry more_queries(q: Tensor[1, 1, 6, 16; f32], k: Tensor[1, 1, 4, 16; f32]) -> Tensor[1, 1, 6, 16; f32] {
    return attention(q, k, k, 0.25, some(causal_mask<6, 4>()))
}

entry negated(q: Tensor[1, 1, 4, 16; f32], k: Tensor[1, 1, 6, 16; f32]) -> Tensor[1, 1, 4, 16; f32] {
    let seen = causal_mask<4, 6>() == false
    return attention(q, k, k, 0.25, some(seen))
}
"""


def called(entry: str, rewrites=REWRITES) -> list[str]:
    """The ops (by name, without their binding) that the entry's program calls."""
    analysis = analyze_program(load_program("m.linnet", PROGRAM))
    assert analysis.diagnostics == []
    item = analysis.root.globals.items[entry]
    program = elaborate(analysis, item, binding_from_values(item, {}, {}, {}), None,
                        rewrites)
    return sorted({f.name.split("__")[0] for f in program.funcs if f.kind == "op"})


def test_the_mark_crosses_a_let_and_a_fn_parameter() -> None:
    assert "attention_causal" in called("wrapped")
    assert "attention_masked" not in called("wrapped")


def test_without_rewrites_the_program_is_as_written() -> None:
    assert "attention_masked" in called("wrapped", ())
    assert "attention_causal" not in called("wrapped", ())


def test_a_marked_and_an_unmarked_mask_make_two_instances() -> None:
    ops = called("both")
    assert "attention_causal" in ops and "attention_masked" in ops


def test_a_mask_computed_from_the_value_carries_no_mark() -> None:
    ops = called("negated")
    assert "attention_masked" in ops and "attention_causal" not in ops


def test_the_kernel_that_must_apply_is_that_of_the_op_kernel_of_names() -> None:
    """attention_causal has no kernel of its own: the rewrite fires where that of
    attention_causal_lse, which it calls, applies (`Q <= K`); read from attention_causal
    itself (no `kernel_of`), there is none, and the rewrite never fires."""
    assert CAUSAL_ATTENTION.kernel_of == "attention_causal_lse"
    assert "attention_causal" in called("wrapped", (CAUSAL_ATTENTION,))
    ops = called("more_queries", (CAUSAL_ATTENTION,))  # 6 queries over 4 keys
    assert "attention_masked" in ops and "attention_causal" not in ops
    ops = called("wrapped", (replace(CAUSAL_ATTENTION, kernel_of=""),))
    assert "attention_masked" in ops and "attention_causal" not in ops


@pytest.mark.parametrize("to,problem", [("attention_rows", "has generics"),
                                        ("causal_mask", "does not take the parameters")])
def test_a_rewrite_to_an_op_of_other_generics_or_parameters_is_an_error(to, problem) -> None:
    broken = CallRewrite("broken", "std.nn.attention", "attention_masked", "mask",
                         "causal_mask", to)
    with pytest.raises(ElaborationError, match=f"call rewrite broken: `{to}` {problem}"):
        called("wrapped", (broken,))


def test_matching_reads_the_op_the_argument_and_the_mark() -> None:
    mark = {"mask": "std.nn.attention::causal_mask"}
    assert matching(REWRITES, "std.nn.attention", "attention_masked", mark) is REWRITES[0]
    assert matching(REWRITES, "mine", "attention_masked", mark) is None
    assert matching(REWRITES, "std.nn.attention", "attention_masked",
                    {"mask": "mine::causal_mask"}) is None


def test_only_an_op_whose_type_fixes_its_value_is_a_value_op() -> None:
    analysis = analyze_program(load_program("m.linnet", PROGRAM))
    std = next(m for m in analysis.program.modules.values()
               if m.path == ("std", "nn", "attention"))
    ops = {i.name: i for i in std.items if hasattr(i, "kernel")}
    assert determined_by_result(ops["causal_mask"])
    assert not determined_by_result(ops["attention_masked"])  # takes parameters
