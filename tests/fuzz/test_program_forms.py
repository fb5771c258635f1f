"""The generator's forms of the model layer (linnet/testing/programs/forms.py): `fn`s and
entries without `-> T` (tuple results too), `...` in an index, `none` given for an optional
parameter, beside structs, enums and optionals; each appears over seeded programs, switches
off by its feature, and a short seeded campaign over programs holding them agrees with the
oracle on every backend. The fuzzer's interpreter run goes through `load_function`'s
callable, so a tuple result shaped as one value is a finding (fuzz/runtime_forward.py)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from linnet.fuzz.case import Case
from linnet.fuzz.execute import Plan, run_case
from linnet.fuzz.programs import FEATURES, GeneratorConfig, generate

FORMS = ["untyped", "untyped:fn", "untyped:entry", "untyped:tuple", "ellipsis",
         "ellipsis:start", "ellipsis:end", "ellipsis:empty", "optional:none", "struct",
         "struct:param", "enum", "optional"]


def _forms(config: GeneratorConfig, seeds: range) -> Counter:
    total: Counter = Counter()
    for seed in seeds:
        total.update(k for k, n in generate(seed, config, check=False).constructs.items()
                     if n and k in FORMS)  # programs using each form
    return total


def test_each_form_appears_in_seeded_programs() -> None:
    seen = _forms(GeneratorConfig(), range(200))
    assert all(seen[f] >= 3 for f in FORMS), seen
    assert seen["untyped:tuple"] >= 40 and seen["ellipsis"] >= 20, seen


def test_the_forms_switch_off_by_feature() -> None:
    off = GeneratorConfig(features=FEATURES - {"untyped", "ellipsis"})
    seen = _forms(off, range(20))
    assert not [f for f in seen if f.startswith(("untyped", "ellipsis"))], seen
    for seed in range(5):
        text = generate(seed, off).text
        assert "..." not in text
        assert all(" -> " in line for line in text.splitlines()
                   if line.lstrip().startswith(("fn ", "entry ", "pub entry ")))


def test_an_untyped_entry_returning_a_tuple_is_whole_in_the_fuzzers_interpreter_run() -> None:
    text = ("module fuzz\n\nentry main(x: Tensor[3; f32]) {\n    let n: i64 = 2\n"
            "    return (x * 2.0, n)\n}\n")
    result = run_case(Case(text, "main", {}, [np.array([1, -2, 0.5], np.float32)]),
                      Plan(targets=("interpreter",)))
    assert result.findings == [] and result.runs == 1
    got = result.outputs["interpreter"]
    assert len(got) == 2 and int(got[1]) == 2
    np.testing.assert_array_equal(got[0], [2, -4, 1])


@pytest.mark.parametrize("seed", [16, 18, 57])  # between them every form above, and a block
def test_a_seeded_campaign_over_the_forms_agrees_across_backends(seed: int) -> None:
    program = generate(seed)
    assert any(program.constructs[f] for f in ("untyped:tuple", "ellipsis", "optional:none"))
    for index, case in enumerate(program.cases):
        result = run_case(case, Plan(targets=("interpreter", "torch", "onnx", "stablehlo")),
                          program=str(seed), index=index)
        assert result.findings == [] and result.runs == 4, (seed, result.findings)
