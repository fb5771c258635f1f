"""The reducer (`linnet.fuzz.reduce`): real programs reduced under synthetic predicates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.check.frontend import check_program
from linnet.pipeline import compile_source, passes_for
from linnet.syntax.parser import parse
from linnet.syntax import tree as t
from linnet.fuzz.case import Case
from linnet.testing.child_env import child_env
from linnet.testing.fork_servers import python_command
from linnet.fuzz.reduce import reduce, write_report
from linnet.fuzz.reduce.inputs import plainness, resized
from linnet.fuzz.reduce.search import entry_spec, fits
from linnet.torch.interpreter import run

ROOT = Path(__file__).resolve().parents[2]

SAMPLE = """module reduce_sample

fn scale<N: Dim>(x: Tensor[N; f32], k: f32) -> Tensor[N; f32] {
    let y = x * k
    return y + 0.5
}

op smooth<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    let m = (sum[i] x[i]) / cast<f32>(N)
    let c = x - m
    return c * 0.25
}

fn unused_helper(v: f32) -> f32 {
    return v * v
}

entry main<N: Dim>(x: Tensor[N; f32], w: Tensor[N; f32], s: f32, flag: bool) -> Tensor[N; f32] {
    let a = scale(x, 2.0)
    let b = smooth(w)
    let c = a * b + x
    let d = if flag { c + 1.0 } else { c - 1.0 }
    var acc = d
    for i in 0..3 {
        acc = acc + cast<f32>(i) * w
    }
    let e = exp(acc * 0.01)
    let f = e - s
    let g = tanh(f) + abs(b)
    let h[i] = g[i] * w[i] + a[i]
    let total = sum[i] h[i]
    let out = h / (1.0 + abs(total))
    return out - max(out, 0.0)
}
"""


def _sample(n: int = 12) -> Case:
    rng = np.random.default_rng(0)
    return Case(SAMPLE, "main", {"N": n}, (
        rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
        np.array(0.3, np.float32), np.array(True)))


def interpret(case: Case) -> list[np.ndarray]:
    """The case run by the PyTorch interpreter (op bodies)."""
    passes = [p for p in passes_for("torch") if p.name != "emit-torch"]
    program = compile_source(case.text, path="case.linnet", entry=case.entry,
                             bind=dict(case.generics), target="torch", numerics="exact",
                             passes=passes).text
    return [r.numpy() for r in run(program, *(torch.from_numpy(np.asarray(x))
                                               for x in case.inputs))]


def negative(case: Case) -> bool:
    return any((out < 0).any() for out in interpret(case))


def _checks(case: Case) -> bool:
    spec = entry_spec(case)
    return not check_program("c.linnet", case.text).diagnostics and spec is not None \
        and fits(spec, case)


def _entry_stmts(case: Case) -> tuple:
    module, _ = parse(case.text, "c.linnet")
    return next(i for i in module.items if getattr(i, "name", "") == case.entry).body


# ---------------------------------------------------------------- program edits

def test_a_subexpression_is_kept_and_everything_else_goes():
    case = _sample()
    assert negative(case) and "exp(" in case.text
    r = reduce(case, lambda c: "exp(" in c.text, time_limit=120)
    assert "exp(" in r.case.text and _checks(r.case)
    assert r.stopped == "fixed point"
    module, _ = parse(r.case.text, "c.linnet")
    assert [i.name for i in module.items] == ["main"]  # fns, op, the unused fn: gone
    assert len(_entry_stmts(r.case)) <= 2
    assert len(r.case.inputs) == 1  # w, s and flag: unused, removed with their inputs
    assert len(r.case.text.splitlines()) <= 6
    assert r.steps and all(s.kind in ("program", "dims", "values") for s in r.steps)


def test_a_negative_output_is_kept():
    case = _sample()
    r = reduce(case, negative, time_limit=120)
    assert negative(r.case) and _checks(r.case)
    assert len(_entry_stmts(r.case)) <= 2
    assert r.case.generics["N"] <= 2
    assert len(r.case.text) < len(SAMPLE) / 4


def test_only_cases_that_check_and_fit_reach_the_predicate():
    seen: list[Case] = []

    def predicate(c: Case) -> bool:
        seen.append(c)
        return "tanh(" in c.text

    r = reduce(_sample(), predicate, max_tries=150, time_limit=120)
    assert len(seen) == r.tries > 10
    assert r.checks > r.tries  # some candidates were discarded by the checker
    assert all(_checks(c) for c in seen)


def test_kernels_and_grad_clauses_are_dropped():
    text = (ROOT / "examples" / "layer_norm.linnet").read_text()
    rng = np.random.default_rng(1)
    case = Case(text, "layer_norm_any", {"R": 6, "C": 8}, (
        rng.standard_normal((6, 8)).astype(np.float32),
        rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)))
    r = reduce(case, lambda c: "rsqrt(" in c.text, time_limit=120)
    assert "rsqrt(" in r.case.text and _checks(r.case)
    module, _ = parse(r.case.text, "c.linnet")
    assert not any(isinstance(i, t.Kernel) for i in module.items)
    assert "grad(" not in r.case.text
    assert len(r.case.text.splitlines()) <= 15 < len(text.splitlines()) / 5


def test_an_if_is_replaced_by_a_branch_and_a_call_inlined():
    text = (ROOT / "tests" / "spec" / "valid" / "18_if_expressions.linnet").read_text()
    case = Case(text, "main", {}, (np.array(1.5, np.float32), np.array(True),
                                   np.arange(4, dtype=np.float32)))
    r = reduce(case, lambda c: int(interpret(c)[0]) == 2, time_limit=120)
    assert int(interpret(r.case)[0]) == 2 and _checks(r.case)
    assert "fn classify" not in r.case.text and " if " not in r.case.text
    assert any(s.what.startswith("inline `classify(v)`") for s in r.steps)
    assert any(s.what.startswith("keep the then branch") for s in r.steps)


def test_a_loop_is_run_once_where_that_keeps_the_failure():
    text = (ROOT / "tests" / "spec" / "valid" / "14_for_carry.linnet").read_text()
    case = Case(text, "main", {}, (np.arange(4, dtype=np.float32),
                                   np.ones((6, 4), np.float32)))
    # steps = 1 + 2 + 3: the loop must stay; p = x * x * x * x: one pass of its loop is x * x
    r = reduce(case, lambda c: int(interpret(c)[-1]) == 6, time_limit=120)
    assert int(interpret(r.case)[-1]) == 6 and "for i in 1..4" in r.case.text
    assert "xs" not in r.case.text and len(r.case.inputs) == 1
    assert all(x.size == 0 for x in r.case.inputs)  # Tensor[4; f32] became Tensor[0; f32]


def test_a_case_that_does_not_check_is_reduced_by_program_edits():
    text = SAMPLE.replace("return c * 0.25", "return c * true")
    assert any(d.code == "E2103" or d.code.startswith("E2") for d in
               check_program("c.linnet", text).diagnostics)
    codes = {d.code for d in check_program("c.linnet", text).diagnostics}

    def same(c: Case) -> bool:
        return codes <= {d.code for d in check_program("c.linnet", c.text).diagnostics}

    r = reduce(_sample().with_text(text), same, time_limit=120)
    assert same(r.case) and "true" in r.case.text
    assert len(r.case.text) < len(text) / 3


# ---------------------------------------------------------------- sizes and values

def test_dims_shrink_to_the_smallest_failing_size_and_inputs_are_cut():
    text = (ROOT / "examples" / "softmax.linnet").read_text()
    entry = "softmax_any"
    spec = entry_spec(Case(text, entry))
    values = {"R": 40, "C": 9}
    rng = np.random.default_rng(2)
    inputs = tuple(rng.standard_normal(shape).astype(np.float32)
                   for shape, _ in spec.shapes(values))
    case = Case(text, entry, values, inputs)

    def big(c: Case) -> bool:  # "fails" with at least 3 rows and 2 columns, x[2, 1] as drawn
        return c.generics["R"] >= 3 and c.generics["C"] >= 2 and c.inputs[0][2, 1] == \
            inputs[0][2, 1] and bool(interpret(c))

    r = reduce(case, big, time_limit=120)
    assert r.case.generics == {"R": 3, "C": 2}
    for old, new in zip(inputs, r.case.inputs):
        np.testing.assert_array_equal(new, old[tuple(slice(0, n) for n in new.shape)])


def test_values_become_plain():
    case = _sample(4)

    def fails(c: Case) -> bool:
        return "flag" in c.text and negative(c)

    r = reduce(case, fails, time_limit=120)
    assert fails(r.case)
    assert all(plainness(x) <= 2 for x in r.case.inputs)  # zeros, ones or signs
    assert any(s.kind == "values" for s in r.steps)


def test_resized_cuts_or_repeats():
    x = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(resized(x, (2, 3)), [[0, 1, 2], [4, 5, 6]])
    np.testing.assert_array_equal(resized(x, (2, 5)), [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])
    assert resized(np.zeros((0,)), (3,)).tolist() == [0.0, 0.0, 0.0]


# ---------------------------------------------------------------- budget, order, report

def test_the_budget_is_respected():
    calls = []
    r = reduce(_sample(), lambda c: calls.append(c) or True, max_tries=4, time_limit=120)
    assert len(calls) == r.tries == 4 and r.stopped == "max_tries"
    assert len(r.steps) == 4 and r.case.text != SAMPLE
    r = reduce(_sample(), lambda c: True, time_limit=0.0)
    assert r.tries == 0 and r.stopped == "time_limit" and r.case is r.original


def test_reduction_is_deterministic():
    first = reduce(_sample(), negative, time_limit=120)
    second = reduce(_sample(), negative, time_limit=120)
    assert first.case.text == second.case.text and first.steps == second.steps
    assert first.case.generics == second.case.generics
    assert all(np.array_equal(a, b) for a, b in zip(first.case.inputs, second.case.inputs))


def test_write_report(tmp_path):
    r = reduce(_sample(), negative, time_limit=120)
    outputs = {"interpreter": interpret(r.case), "jax": RuntimeError("jax failed here")}
    report = write_report(r, outputs, tmp_path / "case")
    folder = report.parent
    assert (folder / "case.linnet").read_text() == r.case.text
    assert json.loads((folder / "bind.json").read_text()) == dict(r.case.generics)
    saved = np.load(folder / "inputs.npz")
    name = entry_spec(r.case).params[0][0]
    assert list(saved) == [name] and np.array_equal(saved[name], r.case.inputs[0])
    np.testing.assert_array_equal(np.load(folder / "outputs" / "interpreter.npz")["result0"],
                                  outputs["interpreter"][0])
    assert "RuntimeError: jax failed here" in (folder / "outputs" / "jax.txt").read_text()
    text = report.read_text()
    bind = " ".join(f"--bind {k}={v}" for k, v in r.case.generics.items())
    assert f"linnet torch case.linnet --entry main {bind}" in text
    assert r.case.text.strip() in text and str(r.steps[0]) in text
    env = child_env(ROOT)
    done = subprocess.run([sys.executable, "run.py"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("result 0: tensor(")
    for line in text.split("```sh\n")[1].split("```")[0].splitlines()[:2]:
        if line.startswith("linnet "):
            argv = line.split()
            done = subprocess.run([*python_command(env), "-m", "linnet", *argv[1:]],
                                  cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", ["examples/softmax.linnet", "examples/mlp.linnet"])
def test_examples_reduce_to_a_few_lines(name):
    text = (ROOT / name).read_text()
    needle = "exp(" if "softmax" in name else "tanh("
    entries = [line.split()[1].split("<")[0].split("(")[0] for line in text.splitlines()
               if line.startswith("entry ")]
    spec = entry_spec(Case(text, entries[-1]))
    values = {g: 5 for g in spec.dim_generics}
    inputs = tuple(np.ones(shape, np.float32) for shape, _ in spec.shapes(values))
    case = Case(text, entries[-1], values, inputs)
    r = reduce(case, lambda c: needle in c.text, time_limit=120)
    assert needle in r.case.text and _checks(r.case)
    assert len(r.case.text.splitlines()) <= min(12, len(text.splitlines()) / 3)
