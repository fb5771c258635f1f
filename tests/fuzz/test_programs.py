"""The random program generator (`linnet.fuzz.programs`): every program checks, prints
and parses back to the same text, uses the constructs it is meant to, has inputs of the
parameters' dtypes and shapes, and runs tame through the interpreter and generated PyTorch.
"""

from __future__ import annotations

import functools
import math
import time
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from linnet import prims
from linnet.fuzz.programs.exprs import generated_math
from linnet.syntax.parser import parse
from linnet.syntax.printer import print_module
from linnet.fuzz.case import Case
from linnet.fuzz.programs import FEATURES, GeneratorConfig, GeneratorError, generate
from linnet.fuzz.programs.run import assert_tame, differences, run_case

from budget import scaled

CONFIGS = {
    "plain": GeneratorConfig(),
    "kernels": GeneratorConfig(kernels=True),
    "grad": GeneratorConfig(grad=True),
    "both": GeneratorConfig(kernels=True, grad=True),
    "narrow": GeneratorConfig(dtypes=frozenset({"bf16", "u8", "bool"}), kernels=True,
                              max_dim=3, max_statements=3),
    "bare": GeneratorConfig(features=frozenset(), dtypes=frozenset({"f32", "i32"})),
}

@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_program_checks_and_prints_back(name):
    """50 seeds per config (300 in all): `generate` checks each program (it raises
    GeneratorError otherwise); parsing the text and printing it again gives the text."""
    config = CONFIGS[name]
    for seed in range(50):
        prog = generate(seed, config)
        module, diagnostics = parse(prog.text, "fuzz.linnet")
        assert not diagnostics, (seed, diagnostics)
        assert print_module(module) == prog.text, seed
        assert module == prog.module, seed


def test_same_seed_same_program_and_inputs():
    a, b = generate(11, CONFIGS["both"]), generate(11, CONFIGS["both"])
    assert a.text == b.text
    for x, y in zip(a.cases[0].inputs, b.cases[0].inputs):
        assert np.array_equal(x.astype(np.float64), y.astype(np.float64))
    assert generate(12).text != a.text


@functools.lru_cache(maxsize=None)  # one pass over the seeds for every family
def _coverage(config: GeneratorConfig, seeds: range) -> Counter:
    total: Counter = Counter()
    for seed in seeds:
        total.update(generate(seed, config, check=False).constructs)
    return total


FAMILIES = {
    "dtypes": ["dtype:" + d for d in ("bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
                                      "u64", "f16", "bf16", "f32", "f64")],
    "expressions": ["broadcast", "cast", "compare", "select", "arith:+", "arith:-", "arith:*",
                    "arith:/", "arith:%", "neg", "abs", "minmax:min", "minmax:max",
                    "bitwise:&", "bitwise:|", "bitwise:^", "shift:shl", "shift:shr",
                    "logic:&&", "logic:||", "logic:!", "wrap"],
    "math": ["math:" + f for f in generated_math()],  # the table's: see the test below
    "index notation": ["index", "reduce:sum", "reduce:prod", "reduce:max", "reduce:min",
                       "reduce:any", "reduce:all", "contract", "diagonal", "transpose",
                       "accumulator", "nested_reduce"],
    "shapes": ["slice", "slice:step", "int_index", "reshape", "broadcast_to", "permute",
               "concat", "iota", "fill", "cumsum", "annotation"],
    "control": ["if", "for", "scan", "scan_tuple", "while", "static_for", "runtime_index"],
    "items": ["fn", "op", "generic_call", "explicit_generics", "dtype_generic", "where",
              "tuple_return", "tuple_result"],
    "models": ["struct", "struct:param", "enum", "optional", "optional:runtime", "block",
               "block:sub_array", "block:empty_array", "optional:none"],
    "forms": ["untyped:fn", "untyped:entry", "untyped:tuple", "ellipsis:start",
              "ellipsis:end", "ellipsis:empty"],
}
GRAD_FAMILY = ["grad", "grad:scalar", "loss"]
KERNEL_FAMILY = ["kernel:grid1", "kernel:grid2", "kernel:grid3", "kernel:masked_load",
                 "kernel:store_tile", "kernel:scalar_store", "kernel:scalar_into_tile",
                 "kernel:index_mask", "kernel:batch_scalar_index", "kernel:cumsum",
                 "kernel:reduce_sum", "kernel:reduce_max", "kernel:reduce_min", "kernel:dot",
                 "kernel:for", "kernel:runtime_bound", "kernel:while", "kernel:hints",
                 "kernel:atomic_scalar"] + [
    f"kernel:atomic_{k}:{d}" for k in ("add", "max", "min")
    for d in ("f32", "i32", "u32", "i64", "u64")] + ["kernel:atomic_add:f16"]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_construct_appears_across_seeds(family):
    seen = _coverage(GeneratorConfig(), range(150))
    missing = [c for c in FAMILIES[family] if not seen[c]]
    assert not missing, missing


def test_grad_constructs_appear():
    seen = _coverage(CONFIGS["grad"], range(60))
    assert not [c for c in GRAD_FAMILY if not seen[c]]


def test_kernel_constructs_appear():
    seen = _coverage(CONFIGS["kernels"], range(300))
    missing = [c for c in KERNEL_FAMILY if not seen[c]]
    assert not missing, missing


def test_the_generated_float_functions_are_the_table_s(monkeypatch):
    """The generator writes the math rows of `linnet.prims` that say how (`generated`):
    erf's says nothing (onnxruntime computes an f64 erf in f32), and once a row says how,
    programs call it."""
    assert generated_math() == ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh")
    erf = replace(prims.PRIMS["erf"], generated=prims.Generated(bound=math.erf))
    monkeypatch.setitem(prims.PRIMS, "erf", erf)
    assert generated_math()[-1] == "erf"
    seen = Counter()
    for seed in range(30):
        seen.update(generate(seed, CONFIGS["plain"]).constructs)
    assert seen["math:erf"] > 0


def test_features_switch_constructs_off():
    config = GeneratorConfig(features=FEATURES - {"while", "scan", "math", "index"})
    seen = _coverage(config, range(60))
    assert not seen["while"] and not seen["scan"] and not seen["index"]
    assert not any(k.startswith("math:") for k in seen)
    assert seen["for"] and seen["if"]


def test_the_model_layer_switches_off_at_once():
    """`models=False` writes none of it, and the base program of a seed is the same either
    way (the model layer draws from a random stream of its own)."""
    off = GeneratorConfig(models=False)
    seen = _coverage(off, range(40))
    assert not [k for k in seen if k.split(":")[0] in ("struct", "enum", "optional", "block")]
    for seed in range(10):
        plain = generate(seed, off).text
        assert "block " not in plain and "struct " not in plain and "enum " not in plain
    with_models = [generate(seed).text for seed in range(10)]
    assert any("block " in text for text in with_models)


def test_dtypes_are_limited_to_the_config():
    config = GeneratorConfig(dtypes=frozenset({"f16", "i8"}))
    for seed in range(30):
        prog = generate(seed, config)
        for case in prog.cases:
            for x in case.inputs:
                assert x.dtype in (np.float16, np.int8), (seed, x.dtype)


def test_bad_configs_are_refused():
    with pytest.raises(ValueError):
        GeneratorConfig(dtypes=frozenset({"i32"}))
    with pytest.raises(ValueError):
        GeneratorConfig(features=frozenset({"teleport"}))
    with pytest.raises(ValueError):
        GeneratorConfig(dtypes=frozenset({"f32", "c64"}))


def test_inputs_match_the_entry_parameters():
    """Each case's inputs have the dtype and shape of its parameter at the case's bindings
    (bf16 as ml_dtypes.bfloat16, scalars as 0-d arrays)."""
    from linnet.fuzz.harness import target_spec
    import ml_dtypes
    names = {"bfloat16": "bf16", "float16": "f16", "float32": "f32", "float64": "f64",
             "bool": "bool"}
    seen_sizes: set[int] = set()
    for seed in range(25):
        prog = generate(seed, CONFIGS["both"] if seed % 2 else CONFIGS["plain"])
        for case in prog.cases:
            assert isinstance(case, Case) and case.text == prog.text
            spec = target_spec("fuzz.linnet", case.entry, prog.text)
            shapes = spec.shapes(dict(case.generics))
            assert len(shapes) == len(case.inputs)
            for (shape, dtype), x in zip(shapes, case.inputs):
                assert tuple(x.shape) == tuple(shape), (seed, case.entry)
                name = names.get(x.dtype.name, x.dtype.name.replace("uint", "u")
                                 .replace("int", "i"))
                assert name == dtype, (seed, name, dtype)
                if dtype == "bf16":
                    assert x.dtype == ml_dtypes.bfloat16
            seen_sizes.update(v for v in case.generics.values() if isinstance(v, int))
    assert {0, 1} <= seen_sizes and any(v > 2 for v in seen_sizes)


def test_generation_is_fast():
    generate(0, CONFIGS["both"], check=False)  # imports
    start = time.perf_counter()
    for seed in range(40):
        generate(seed, CONFIGS["both"], check=False)
    assert (time.perf_counter() - start) / 40 < 0.1


def test_a_rejected_program_is_an_error(monkeypatch):
    import sys
    module = sys.modules["linnet.fuzz.programs.generate"]
    monkeypatch.setattr(module, "print_module", lambda tree: "module fuzz\n\nentry main() {}\n")
    with pytest.raises(GeneratorError):
        generate(0)


@pytest.mark.parametrize("name", ["plain", "kernels", "grad"])
def test_cases_run_tame_through_the_interpreter_and_generated_torch(name):
    """12 seeds under "ci" (`scaled`: more under the other profiles): each case runs
    through the PyTorch interpreter and generated PyTorch without error, no result holds a
    NaN, and the two agree."""
    failures = []
    for seed in range(scaled(12)):
        prog = generate(seed, CONFIGS[name])
        for case in prog.cases:
            try:
                results = run_case(case)
                assert_tame(results)
                problems = differences(results)
            except Exception as err:  # noqa: BLE001 - every failure is listed
                failures.append(f"seed {seed} {case.entry}: {type(err).__name__}: {err}")
                continue
            failures += [f"seed {seed} {case.entry}: {p}" for p in problems]
    assert not failures, failures


def test_grad_exports_run():
    """Grad entries return one floating scalar, and `--grad` compiles and runs them."""
    ran = 0
    for seed in range(12):
        prog = generate(seed, CONFIGS["grad"])
        for case in prog.cases:
            try:
                results = run_case(case, ("torch",), grad=True)
            except Exception as err:  # noqa: BLE001
                if "E2128" in str(getattr(err, "diagnostics", "")):  # not differentiable
                    continue
                raise
            floats = sum(x.dtype.name in ("float16", "bfloat16", "float32", "float64")
                         for x in case.inputs)
            assert len(results["torch"]) == 1 + floats
            assert results["torch"][0][0].shape == ()
            ran += 1
    assert ran >= 6


def test_exactness_of_a_product_of_many_fractions_does_not_overflow():
    """A power of a value with fraction bits (a `prod` reduction over a long axis) has more
    fraction bits than `2.0 ** frac` can hold: found by generating seed 390842023936801."""
    from linnet.fuzz.programs.types import Info, dt, exact_in, power_info
    big = power_info(Info(-1.5, 1.5, 20), 120)
    assert big.frac == 2400 and not exact_in(big, dt("f32"))
    assert exact_in(power_info(Info(-1.5, 1.5, 1), 3), dt("f32"))
    assert exact_in(Info(0.0, 0.0, 5000), dt("f16"))


def test_fresh_names_are_never_dtype_names():
    """An index named `i8` made `cast<i8>(...)` in its scope read the index (E3104): found
    by generating seeds 395136991232921 and 395136991233266."""
    from linnet.fuzz.sources import generated
    for seed in (395136991232921, 395136991233266):
        assert generated(*divmod(seed, 2**32), GeneratorConfig()).cases
    from linnet.fuzz.programs.scope import _DTYPE_NAMES
    assert {"i8", "u16", "f32", "bf16", "bool"} <= _DTYPE_NAMES
