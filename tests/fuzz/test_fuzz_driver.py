"""The fuzz driver: findings and their classes, reduction and reports, worker processes, the
rules hook, and the `linnet fuzz` command."""

from __future__ import annotations

import numpy as np
import pytest

from linnet.cli.main import main as linnet
from linnet.fuzz import backends
from linnet.fuzz.case import Case
from linnet.fuzz import Source, corpus, fuzz
from linnet.fuzz import execute
from linnet.fuzz.findings import slug
from linnet.fuzz.sources import corpus_paths

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

TEXT = """module small

entry main<N: Dim>(x: Tensor[N; f32], k: Tensor[N; i32]) -> (Tensor[N; f32], Tensor[N; i32], f32) {
    let y = x * 2.0 + 1.0
    let s = sum[i] y[i] * x[i]
    let unused = exp(x)
    return (y, k / 2, s)
}
"""


def small(k_values=(4, -7, 9)) -> Source:
    n = len(k_values)
    case = Case(TEXT, "main", {"N": n}, (np.linspace(-1, 1, n).astype(np.float32),
                                         np.array(k_values, np.int32)))
    return Source("small", TEXT, [case])


def test_a_program_that_agrees_everywhere_has_no_findings() -> None:
    """In this process (`isolate=False`): a worker process costs an import of every
    runtime, and the tests of dying workers below run programs in them."""
    report = fuzz(programs=[small()], isolate=False)
    assert (report.programs, report.cases, report.skipped, report.runs) == (1, 1, 0, 5)
    assert report.findings == [] and not report.failed


def test_a_corpus_kernel_runs_with_kernels_and_agrees() -> None:
    paths = [p for p in corpus_paths() if p.name == "softmax.linnet"]
    report = fuzz(programs=corpus(paths), kernels=True, targets=("torch", "jax"), isolate=False)
    assert report.cases >= 1 and report.runs >= 4  # forward and kernels, on both
    assert report.findings == []


def test_a_wrong_backend_is_a_disagreement_reduced_and_reported(tmp_path, monkeypatch) -> None:
    real = backends.loader

    def off_by_one(target: str):
        def load(compiled, name):
            main = real(target)(compiled, name)
            return lambda *xs: [r + 1 for r in main(*xs)]
        return load if target == "onnx" else real(target)
    monkeypatch.setattr(backends, "loader", off_by_one)
    report = fuzz(programs=[small()], targets=("interpreter", "onnx"), out=tmp_path, isolate=False,
                  reduce_tries=60, reduce_time=120)
    assert report.failed
    keys = set(report.classes)
    assert keys == {"disagree | onnx | compare | value float",
                    "disagree | onnx | compare | value integer"}
    assert all(f.program == "small" and f.entry == "main" for f in report.findings)
    for key in keys:
        (reduced,) = report.reductions[key]
        folder = tmp_path / slug(key)
        assert reduced.folder == str(folder)
        for name in ("report.md", "case.linnet", "inputs.npz", "finding.txt",
                     "original.linnet", "outputs/onnx.txt", "outputs/oracle.txt"):
            assert (folder / name).exists(), name
        assert "exp(" not in reduced.text  # the unused statement is reduced away
        assert len(reduced.text) < len(TEXT) and reduced.steps > 0
        assert key in (folder / "finding.txt").read_text()


def test_crashes_and_late_diagnostics_get_class_keys(monkeypatch) -> None:
    from linnet.diagnostics import CompileError
    real = backends.compile_entry

    def broken(text, path, entry, bind, target, *rest, **options):
        if target == "jax":
            return {}["missing"]
        if target == "stablehlo":
            raise CompileError([])
        return real(text, path, entry, bind, target, *rest, **options)
    monkeypatch.setattr(backends, "compile_entry", broken)
    report = fuzz(programs=[small()], isolate=False)
    (crash,) = [f for f in report.findings if f.kind == "crash"]
    assert crash.key.startswith("crash | jax | compile | KeyError")
    assert crash.detail.startswith("KeyError: 'missing'")
    (late,) = [f for f in report.findings if f.kind == "late"]
    assert (late.target, late.stage) == ("stablehlo", "compile") and report.failed


def test_an_oracle_error_is_counted_apart_and_does_not_fail(monkeypatch) -> None:
    from linnet.fuzz.oracle import OracleError

    def lacking(case, path):
        raise OracleError("no rule for `frobnicate` at 3")
    monkeypatch.setattr(execute, "_evaluate", lacking)
    report = fuzz(programs=[small()], isolate=False)
    (finding,) = report.findings
    assert (finding.kind, finding.target, finding.stage) == ("oracle", "oracle", "evaluate")
    assert finding.signature == "no rule for _ at N" and not report.failed


def test_an_undefined_case_is_skipped() -> None:
    """A shift by a negative count is undefined (a division by zero is not: it gives 0)."""
    text = TEXT.replace("k / 2", "shl(k, k)")
    source = small((4, -1, 9))
    source = Source("undefined", text, [source.cases[0].with_text(text)])
    report = fuzz(programs=[source], isolate=False)
    assert (report.cases, report.skipped, report.runs, report.findings) == (1, 1, 0, [])


def test_the_report_does_not_depend_on_the_number_of_workers() -> None:
    """Two worker processes against this process alone (the other end of the range)."""
    one = fuzz(seed=3, count=4, targets=("interpreter", "torch"), isolate=False)
    two = fuzz(seed=3, count=4, targets=("interpreter", "torch"), jobs=2)
    assert one.programs == two.programs == 4
    assert (one.cases, one.skipped, one.runs) == (two.cases, two.skipped, two.runs)
    assert [f.key for f in one.findings] == [f.key for f in two.findings]


def test_an_unsound_rule_is_found_within_a_fixed_budget() -> None:
    """A mask rule that compares the wrong ends of two intervals (`x < y` is false as soon
    as x can reach y) masks every ragged kernel tile out: the kernels' results disagree."""
    from egglog import i64, rule, ruleset, union, vars_

    from linnet.pipeline import compile_source, rules_in_effect
    from linnet.rules import RULE_SETS
    from linnet.rules.terms import FALSE, Ix, Mask, hi, lo, lt
    x, y = vars_("x y", Ix)
    (m,) = vars_("m", Mask)
    hx, ly = vars_("hx ly", i64)
    wrong = ruleset(rule(m == lt(x, y), hi(x) == hx, lo(y) == ly, hx >= ly,
                         name="lt false when x reaches y").then(union(m).with_(FALSE)),
                    name="wrong-end")
    rules = [*RULE_SETS, wrong]
    report = fuzz(seed=0, count=4, kernels=True, targets=("torch",), rules=rules)
    found = [f for f in report.findings if f.kind == "disagree"]
    assert found and {f.target for f in found} == {"torch kernels"}
    clean = fuzz(seed=0, count=4, kernels=True, targets=("torch",))
    assert clean.findings == []
    # the hook itself: inside the block a compilation runs the given rule sets
    softmax = (corpus_paths()[0].parent / "softmax.linnet").read_text()

    def kernel_text() -> str:
        return compile_source(softmax, entry="main", numerics="equivalent").text
    plain = kernel_text()
    with rules_in_effect(rules):
        masked_out = kernel_text()
    assert masked_out != plain and kernel_text() == plain


def test_the_command_reports_and_sets_its_exit_status(capsys, monkeypatch) -> None:
    assert linnet(["fuzz", "--count", "2", "--targets", "interpreter,torch", "--in-process"]) == 0
    out = capsys.readouterr()
    assert "2 programs" in out.out and "no findings" in out.out
    real = backends.loader

    def broken(target: str):
        def load(compiled, name):
            raise ValueError("planted")
        return load if target == "torch" else real(target)
    monkeypatch.setattr(backends, "loader", broken)
    assert linnet(["fuzz", "--count", "1", "--targets", "torch", "--in-process"]) == 1
    out = capsys.readouterr().out
    assert "crash  torch   load   ValueError: planted  seed 0 #0" in out


@pytest.mark.parametrize("argv", [["--count", "0"], ["--targets", "cuda"], ["--time", "soon"],
                                  ["--count", "3", "--time", "10"], ["--rules", "no.such"],
                                  ["--in-process", "--jobs", "2"]])
def test_command_line_mistakes_exit_2(argv, capsys) -> None:
    try:
        status = linnet(["fuzz", *argv])
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2


def test_a_backend_that_kills_its_process_is_a_crash_of_that_target(tmp_path) -> None:
    """The rules module `dying_backend` makes the ONNX runs of its workers die of SIGSEGV:
    the program is run again alone, run by run, the crash is ONNX's (the interpreter's run
    counts), and the class is reduced with each candidate in a process of its own (one
    candidate: each costs a process importing every runtime)."""
    report = fuzz(programs=[small()], targets=("interpreter", "onnx"),
                  rules="dying_backend", out=tmp_path, reduce_tries=1)
    assert report.programs == 1 and report.runs == 1 and report.failed
    keys = {f.key for f in report.findings}
    assert keys == {"crash | onnx | run | process died: SIGSEGV"}
    (reduced,) = report.reductions[next(iter(keys))]
    assert (tmp_path / slug(next(iter(keys))) / "original.linnet").read_text() == TEXT
    assert reduced.text.startswith("module small")


def test_a_death_no_program_repeats_alone_is_reported_not_failed(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LINNET_TEST_DIE_ONCE", str(tmp_path / "died"))
    report = fuzz(programs=[small()], targets=("interpreter", "onnx"), rules="dying_backend")
    assert (report.programs, report.runs, report.findings) == (1, 2, [])
    assert report.deaths == ["running small; alone, none died again"] and not report.failed
    assert "a worker died unexplained: running small" in report.summary()


def test_a_run_stuck_in_native_code_is_a_hang_of_that_target(monkeypatch) -> None:
    """SIGALRM cannot interrupt native code: the worker ends itself past its hard limit,
    and the program, run again alone, names the target that was stuck."""
    monkeypatch.setenv("LINNET_TEST_STICK", "1")
    # The limit is per stage: on a loaded machine a fresh worker's first oracle stage
    # (imports included) may take a second, and ONNX's compile stage took more than 1.5 s
    # under a load of 7 (a compile-stage hang, not the run's); the stuck run waits forever,
    # so 2.5 s loses nothing but flakiness.
    report = fuzz(programs=[small()], targets=("interpreter", "onnx"), rules="dying_backend",
                  seconds=2.5)
    assert {f.key for f in report.findings} == {
        "hang | onnx | run | process stuck past the time limit"}
    assert report.failed and report.deaths == []


def test_workers_that_cannot_start_are_an_error_not_findings() -> None:
    from linnet.fuzz.isolate import StartFailed
    with pytest.raises(StartFailed, match="could not start: ModuleNotFoundError"):
        fuzz(programs=[small()], rules="no_such_rules_module")


def test_normalized_messages_name_a_class_without_its_values() -> None:
    a = backends.normalize("index 7 is out of bounds for dimension 0 with size 3")
    b = backends.normalize("index 12 is out of bounds for dimension 1 with size 40")
    assert a == b == "index N is out of bounds for dimension N with size N"
    assert backends.normalize("bad `x3` in module_4c07a934a09880360a499b9f") == \
        "bad _ in _"
    assert slug("disagree | torch kernels | compare | value float").startswith(
        "disagree-torch-kernels-compare-")


def test_gradients_of_an_entry_without_floating_inputs_are_just_the_loss() -> None:
    text = "module fuzz\n\nentry main<N: Dim>() -> f64\nwhere N >= 1 {\n    return 0\n}\n"
    report = fuzz(programs=[Source("constant", text, [Case(text, "main", {"N": 1}, ())])],
                  grad=True, isolate=False)
    # forward and --grad on five targets, autograd on torch and jax
    assert (report.runs, report.findings) == (12, [])


def test_a_gradient_at_a_tie_of_min_is_not_compared_where_the_loss_has_no_derivative() -> None:
    """Column 0 holds two equal minima: the central difference there is 1/2, autograd's
    subgradient another value; both are right. Only those elements are left out."""
    text = ("module fuzz\n\nentry main<N: Dim>(p: Tensor[N, N; f32]) -> f32\nwhere N >= 1 {\n"
            "    let y[j] = min[i] p[i, j]\n    return y[0]\n}\n")
    x = np.array([[1, 2, 0], [1, 0, 3], [2, 5, 1]], np.float32)
    case = Case(text, "main", {"N": 3}, (x,))
    runner = execute._Runner(case, execute.Plan(), execute.PATH, "tie", 0)
    assert execute._kinks(runner, 0).tolist() == [[True, False, False], [True, False, False],
                                                  [False, False, False]]
    report = fuzz(programs=[Source("tie", text, [case])], grad=True, isolate=False)
    assert report.runs == 12 and report.findings == []


def test_oracle_gradients_past_the_time_limit_are_computed_once(monkeypatch) -> None:
    """Finite differences past the time limit: one `slow` finding, not one per gradient
    attempt (each of which waited out the limit again)."""
    from linnet.fuzz import oracle
    calls = []

    def too_slow(case, path, dtypes=None):
        calls.append(dtypes)
        raise backends.Timeout()
    monkeypatch.setattr(oracle, "gradient_fd", too_slow)
    text = ("module fuzz\n\nentry main<N: Dim>(p: Tensor[N; f32]) -> f32\nwhere N >= 1 {\n"
            "    return sum[i] p[i] * p[i]\n}\n")
    case = Case(text, "main", {"N": 3}, (np.array([1, 2, 3], np.float32),))
    report = fuzz(programs=[Source("slow", text, [case])], grad=True, isolate=False)
    assert calls == [("f32", "f64")]
    assert [(f.kind, f.target, f.stage) for f in report.findings] == [
        ("slow", "oracle", "gradient")] and not report.failed


CANCELS = """module t
entry main(a: f32, b: f32) -> (f32, f32) {
    return ((a + b) - a, a * b)
}
"""


def _cancelling_case() -> Case:
    """`(a + b) - a` with b below a's last bit: 0 in f32, 1 in f64 (rounding decides it)."""
    return Case(CANCELS, "main", {}, (np.array(1e8, np.float32), np.array(1.0, np.float32)))


def _count_f64_evaluations(monkeypatch) -> list[str]:
    """Every evaluation of the oracle, by precision (each entry point goes through
    `evaluate_source`)."""
    import importlib
    module = importlib.import_module("linnet.fuzz.oracle.evaluate")
    real, seen = module.evaluate_source, []

    def counted(*args, **kw):
        seen.append(kw.get("precision", "native"))
        return real(*args, **kw)
    monkeypatch.setattr(module, "evaluate_source", counted)
    return seen


def _interpreter_off_by(monkeypatch, position: int, delta: float) -> None:
    """The interpreter's output `position` off by `delta` (its forward run goes through
    `load_function`'s callable and `runtime_forward.as_outputs`)."""
    from linnet.fuzz import runtime_forward
    real = runtime_forward.as_outputs

    def shifted(result):
        return [r + delta if k == position else r for k, r in enumerate(real(result))]
    monkeypatch.setattr(runtime_forward, "as_outputs", shifted)


def test_a_cancellation_is_evaluated_in_f64_once_and_not_compared(monkeypatch) -> None:
    """Output 0 is 3 off the oracle (beyond the tolerance and the rounding slack): it is
    left out as unstable, from the one f64 evaluation that gave the slack."""
    seen = _count_f64_evaluations(monkeypatch)
    _interpreter_off_by(monkeypatch, 0, 3.0)
    result = execute.run_case(_cancelling_case(), execute.Plan(targets=("interpreter",)))
    assert result.runs == 1 and result.findings == []
    assert seen.count("f64") == 1 and seen.count("native") == 1


def test_a_well_conditioned_output_of_the_same_case_is_still_compared(monkeypatch) -> None:
    seen = _count_f64_evaluations(monkeypatch)
    _interpreter_off_by(monkeypatch, 1, 1e6)
    result = execute.run_case(_cancelling_case(), execute.Plan(targets=("interpreter",)))
    assert [f.detail.split(":")[0] for f in result.findings] == ["result 1"]
    assert seen.count("f64") == 1


def test_the_runner_flags_what_unstable_outputs_flags() -> None:
    from linnet.fuzz.oracle import evaluate, unstable_outputs
    case = _cancelling_case()
    run = execute._Runner(case, execute.Plan(), execute.PATH, "t", 0)
    run.expected = evaluate(case, path=execute.PATH)
    assert run.unstable() == unstable_outputs(case, path=execute.PATH) == [0]


@pytest.mark.parametrize("off, found", [(4, False), (100, True)])
def test_a_gradient_may_carry_a_saturated_tanh_a_few_ulps_off(monkeypatch, off, found) -> None:
    """The slope of `tanh(6.9)`, `1 - t*t` = 4e-6, is what reverse mode reads off t: a t 4
    ulps off (XLA's f32 tanh is up to 4.6 off) makes it 12% off, which the fuzzer allows
    (`oracle.gradient_slack`, a tanh 5 ulps off); a t 100 ulps off is a disagreement."""
    import torch
    from linnet.fuzz import autograd
    text = ("module fuzz\n\nentry main(x: Tensor[1; f32]) -> f32 {\n"
            "    return sum[i] tanh(x[i]) * 1000000.0\n}\n")
    x = np.array([6.9], np.float32)
    real = autograd.module_autograd

    def skewed(target, fn, case, floats, device):
        loss, grads = real(target, fn, case, floats, device)
        t = np.float32(np.tanh(6.9)) - np.float32(off * 2.0 ** -24)
        return loss, [torch.tensor(1e6 * (1 - np.array([t], np.float64) ** 2),
                                   dtype=torch.float32)] if target == "torch" else grads
    monkeypatch.setattr(autograd, "module_autograd", skewed)
    report = fuzz(programs=[Source("tanh", text, [Case(text, "main", {}, (x,))])], grad=True,
                  targets=("torch",), isolate=False)
    assert [f.key for f in report.findings] == (
        ["disagree | torch autograd | compare | gradient float"] if found else [])
