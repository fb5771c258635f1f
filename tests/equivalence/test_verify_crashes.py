"""`linnet verify` survives a kernel that kills its process: the sizes run in a child, a
death is the verdict `crashed: SIGABRT` at those sizes (shrunk like a disagreement), and
the command goes on with a fresh child and exits 1.

The planted crash (`aborting_kernels.py`, imported by the child through
`verify_trials.CHILD_IMPORTS`) is deterministic and needs no kernel to misbehave; the real
one is a kernel whose store is unmasked (tile 128 over 100 columns), which corrupts the
Triton interpreter's heap until `linnet check` rejects it (E2131).
"""

from __future__ import annotations

import pickle

import pytest

from linnet.fuzz import verify_trials
from linnet.cli.verify import main
from linnet.check.frontend import check_program
from linnet.fuzz.harness import Comparison, ProgramError, target_spec
from linnet.fuzz.verify import format_report, verify_target
from linnet.fuzz.child_process import Died
from linnet.fuzz.verify_trials import Settings, Trial

from kernel_cases import example

UNMASKED = """\
module unmasked

kernel rows_unmasked<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R, C; f32] grid(R)
where B >= C {
    let row = program_id(0)
    let cols = iota<i32>(B)
    let v = load(x[row, cols], cols < C)
    store(y[row, cols], v * 2.0)
}

op double<R: Dim>(x: Tensor[R, 100; f32]) -> Tensor[R, 100; f32] kernel rows_unmasked<R, 100, 128> {
    return x * 2.0
}
"""


def test_a_kernel_that_aborts_is_a_verdict_and_the_command_goes_on(monkeypatch,
                                                                   capsys) -> None:
    """The first file's kernel aborts its child; the second file runs in a new child."""
    monkeypatch.setattr(verify_trials, "CHILD_IMPORTS", ("aborting_kernels",))
    assert main(["verify", example("softmax"), example("relu"), "--examples", "1",
                 "--no-grad"]) == 1
    out = capsys.readouterr().out
    softmax, relu = out.split("op relu")
    assert "R=1 C=1" in softmax and "crashed: SIGABRT" in softmax
    assert "crash after 1 size" in softmax
    assert "smallest failing sizes found: R=1 C=1 (x: f32[1, 1]" in softmax
    assert "the process running these sizes died of SIGABRT" in softmax
    assert "1 size tried: all agree" in relu


class _Planted:
    """Trials with no process: sizes with more than 16 columns crash, the rest agree."""

    def __init__(self) -> None:
        self.sizes: list[dict] = []

    def __call__(self, spec, values, style, seed, settings: Settings) -> Trial:
        self.sizes.append(dict(values))
        if values["C"] > 16:
            return Trial(dict(values), style, seed, crashed="SIGSEGV")
        return Trial(dict(values), style, seed, comparison=Comparison(
            spec.label, dict(values), settings.numerics, "cpu", [], [], True, True, "planted"))

    def close(self) -> None:
        pass


def test_a_crash_is_shrunk_to_the_smallest_sizes_that_crash() -> None:
    spec = target_spec(example("softmax"), "softmax")
    planted = _Planted()
    report = verify_target(spec, examples=8, seed=2, max_dim=300, trials=planted)
    assert report.crashed and not report.ok
    assert report.smallest.values == {"R": 1, "C": 17}
    assert report.smallest.crashed == "SIGSEGV"
    text = format_report(report, "planted", "equivalent")
    assert "crashed: SIGSEGV" in text and "crash after" in text
    assert "smallest failing sizes found: R=1 C=17 (x: f32[1, 17]" in text
    assert len(planted.sizes) < 30
    assert planted.sizes.count({"R": 1, "C": 17}) == 1  # not run again to report it


def test_same_failure_keeps_a_crash_a_crash() -> None:
    crash = Trial({}, "normal", 0, crashed="SIGABRT")
    wrong = Trial({}, "normal", 0, error="RuntimeError: launch failed")
    assert crash.same_failure(crash) and wrong.same_failure(wrong)
    assert not wrong.same_failure(crash) and not crash.same_failure(wrong)
    assert not Trial({}, "normal", 0, crashed="SIGSEGV").same_failure(crash)


def test_an_unmasked_store_is_rejected_or_a_crash_verdict(tmp_path, capsys) -> None:
    """A store of a 128-wide tile over 100 columns with no mask: `linnet check` rejects it
    once it proves memory accesses in bounds (E2131); until then `verify` must report the
    crash it causes, not die of it (it died of SIGABRT, with no table), and exit 1."""
    path = tmp_path / "unmasked.linnet"
    path.write_text(UNMASKED)
    if any(d.code == "E2131" for d in check_program(str(path)).diagnostics):
        pytest.skip("linnet check rejects the unmasked store (E2131)")
    assert main(["verify", str(path), "--examples", "1", "--no-grad"]) == 1
    out = capsys.readouterr().out
    assert "op double (kernel rows_unmasked)" in out and "R=1    x: f32[1, 100]" in out
    # glibc notices the corrupted heap when the size runs (usually), or when the child
    # frees its memory as it ends: then the table agrees and the death is said after it
    assert "crashed: SIG" in out or (
        "crash: the verify child died of SIG" in out and "as it ended" in out
        and "(op double (kernel rows_unmasked) at R=1)" in out), out


class _FakeWorker:
    """Answers planted in turn: a `Died` ends the current child, the next call starts one."""

    def __init__(self, answers: list, at_close: Died | None) -> None:
        self.answers, self.at_close, self.served = iter(answers), at_close, 0

    @property
    def fresh(self) -> bool:
        return self.served == 0

    def call(self, fn, job, timeout=None):
        answer = next(self.answers)
        self.served = 0 if isinstance(answer, Died) else self.served + 1
        return answer

    def close(self) -> Died | None:
        return self.at_close


def test_a_death_after_other_sizes_is_tried_alone_before_it_is_blamed() -> None:
    """Size 2 kills a child that ran size 1 but passes alone: the death is said, naming
    size 1; size 4 kills a child that ran size 3 and kills a fresh one too: its verdict;
    the last child dies as it ends: the sizes it ran are named."""
    spec = target_spec(example("relu"), "relu")
    ok = [Trial({"N": n}, "normal", 0, comparison=Comparison(
        spec.label, {"N": n}, "equivalent", "cpu", [], [], True, True, "planted"))
        for n in range(6)]
    trials = verify_trials.ChildTrials()
    trials.worker = _FakeWorker([ok[1], Died(-6), ok[2], ok[3], Died(-11), Died(-11),
                                 ok[5]], at_close=Died(-6))
    settings = Settings()
    got = [trials(spec, {"N": n}, "normal", 0, settings) for n in (1, 2, 3, 4, 5)]
    assert [t.crashed for t in got] == [None, None, None, "SIGSEGV", None]
    assert got[1] is ok[2]
    trials.close()
    assert trials.deaths == [
        "the verify child died of SIGABRT running op relu (kernel relu_blocks) at N=2, which "
        "did not crash alone: a size it ran before may have corrupted its memory (op relu "
        "(kernel relu_blocks) at N=1)",
        "the verify child died of SIGABRT as it ended: a size it ran before may have "
        "corrupted its memory (op relu (kernel relu_blocks) at N=5)"]


def test_a_program_error_comes_back_from_the_child_whole() -> None:
    """The child sends what it raises pickled: a program with errors keeps its diagnostics
    and sources, so the command prints them as it does in one process."""
    with pytest.raises(ProgramError) as caught:
        target_spec("bad.linnet", "f", "module bad\nfn f(x: f32, y: bf16) -> f32 {\n"
                                       "    return x + y\n}\n")
    again = pickle.loads(pickle.dumps(caught.value))
    assert [d.code for d in again.diagnostics] == ["E2103"]
    assert list(again.sources) == ["bad.linnet"] and "bad.linnet:3:12" in str(again)
