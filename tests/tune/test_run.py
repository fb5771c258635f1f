"""`linnet tune` and `linnet.tune.tune`: candidates, the body check, timing, recording, and
the loaders using what was recorded. Kernels run in Triton's interpreter on tiny shapes
(tests/conftest.py), or on the GPU where there is one (records are then under its name);
timers are injected where the order of times matters."""

from __future__ import annotations

import json

import pytest
import torch

from linnet.cli.main import main
from linnet.torch import LinnetError, load_function
from linnet.tune import TuneError, TuningFile, plan, tune
from linnet.tune.tuner import device_name
from programs import write_program
from tuning_programs import EIGHT_WIDE, LINEAR_BIND, MATMUL, ROWS, linear_program

ROW_BIND = {"R": 8, "C": 48}
ROW_OP = "tuning_rows.row_sums"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NAME = device_name(DEVICE)  # "cpu" here


def rows(tmp_path) -> str:
    return write_program(tmp_path, ROWS, "rows.linnet")


def by_bc(times: dict[int, float], calls: list | None = None):
    """A timer that gives each candidate the time of its BC, noting what it timed."""
    def timer(candidate, run) -> float:
        if calls is not None:
            calls.append(candidate)
        return times[dict(candidate.generics)["BC"]]
    return timer


# ------------------------------------------------------------------------------------------
# Candidates.

def test_default_candidates_are_the_header_and_its_neighbours(tmp_path) -> None:
    space = plan(rows(tmp_path), "row_sums", ROW_BIND)
    assert space.tunable == {"BR": 16, "BC": 16}
    assert space.header.describe() == "BR=16 BC=16 warps=4 stages=2"
    assert space.candidates[0] == space.header
    seen = {(dict(c.generics)["BR"], dict(c.generics)["BC"]) for c in space.candidates}
    assert seen == {(br, bc) for br in (8, 16, 32) for bc in (8, 16, 32)}
    assert {c.warps for c in space.candidates} == {4, 8}
    assert {c.stages for c in space.candidates} == {2, 3, 4}
    assert space.considered == len(space.candidates) == 3 * 3 * 2 * 3
    assert not space.filtered and not space.capped and space.cap_note() == ""


def test_the_where_clause_and_tile_rules_filter_declared_values(tmp_path) -> None:
    space = plan(rows(tmp_path), "row_sums", ROW_BIND, candidates={"BC": [8, 24, 32, 64]},
                 warps=[4], stages=[2])
    reasons = {c.describe(): why for c, why in space.filtered}
    assert reasons == {
        "BR=8 BC=64": "`rows_floor`'s `where BC <= 32` fails",
        "BR=16 BC=64": "`rows_floor`'s `where BC <= 32` fails",
        "BR=32 BC=64": "`rows_floor`'s `where BC <= 32` fails",
        "BR=8 BC=24": "E2127: tile sizes must be powers of two: a tile of shape [24]",
        "BR=16 BC=24": "E2127: tile sizes must be powers of two: a tile of shape [24]",
        "BR=32 BC=24": "E2127: tile sizes must be powers of two: a tile of shape [24]",
    }
    assert {dict(c.generics)["BC"] for c in space.candidates} == {8, 16, 32}
    assert space.header in space.candidates  # BC=16 was not declared: the baseline


def test_the_cap_keeps_those_nearest_the_header_and_says_so(tmp_path) -> None:
    space = plan(rows(tmp_path), "row_sums", ROW_BIND, max_candidates=4)
    assert len(space.candidates) == 4 and space.capped
    assert space.candidates[0] == space.header
    changed = [sum(a != b for a, b in zip(c.generics, space.header.generics))
               + (c.warps != 4) + (c.stages != 2) for c in space.candidates[1:]]
    assert changed == [1, 1, 1]
    assert space.cap_note().startswith("the cap (4) cut 50 of 54 candidates")


def test_tiles_bound_by_expressions_are_tunable_at_their_binding_value(tmp_path) -> None:
    ops = write_program(tmp_path, linear_program(), "linear.linnet")
    space = plan(ops, "linear", LINEAR_BIND, warps=[8], stages=[3])
    assert space.tunable == {"BM": 128, "BN": 128, "BK": 32}  # min(128, ...) at M=4096
    assert space.header.describe() == "BM=128 BN=128 BK=32 warps=8 stages=3"
    assert space.candidates[0] == space.header
    seen = {tuple(v for _, v in c.generics) for c in space.candidates}
    assert (128, 64, 32) in seen and (256, 128, 32) in seen and (128, 128, 16) in seen
    small = plan(ops, "linear", {"M": 4, "N": 512, "K": 512}, warps=[8], stages=[3])
    assert small.tunable == {"BM": 16, "BN": 32, "BK": 32}  # the expressions at M=4
    with pytest.raises(TuneError, match="--try M: `M` is not tunable: `M` is a size of "
                                        "`linear_tiles`"):
        plan(ops, "linear", LINEAR_BIND, candidates={"M": [64]})


def test_a_literal_bound_to_a_size_is_not_tunable(tmp_path) -> None:
    path = write_program(tmp_path, EIGHT_WIDE, "eight.linnet")
    space = plan(path, "eight_sums", {"R": 32}, warps=[4], stages=[2])
    assert space.tunable == {"BR": 16}
    assert {dict(c.generics)["BR"] for c in space.candidates} == {8, 16, 32}
    with pytest.raises(TuneError, match=r"--try C: `C` is not tunable: `C` is a size of "
                                        r"`rows_of`, not a tile choice .*\(tunable: BR\)"):
        plan(path, "eight_sums", {"R": 32}, candidates={"C": [4]})


@pytest.mark.parametrize("kw, message", [
    (dict(candidates={"BX": [8]}), "--try BX: `rows_floor` has no generic named `BX` "
                                   "(tunable: BR, BC)"),
    (dict(candidates={"R": [8]}), "--try R: `R` is not tunable"),
    (dict(candidates={"BC": [0]}), "--try BC: values must be positive integers"),
    (dict(warps=[3]), "--warps: each value must be a power of two up to 32"),
    (dict(warps=[64]), "--warps: each value must be a power of two up to 32"),
    (dict(stages=[9]), "--stages: each value must be an integer from 1 to 8"),
    (dict(numerics="exact"), "numerics 'exact': kernels run under equivalent or fast"),
])
def test_candidate_mistakes_are_tune_errors(tmp_path, kw, message) -> None:
    with pytest.raises(TuneError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan(rows(tmp_path), "row_sums", ROW_BIND, **kw)


@pytest.mark.parametrize("op, bind, message", [
    ("nope", ROW_BIND, "no op named `nope`"),
    ("sums", ROW_BIND, "`sums` is an entry"),
    ("row_sums", {"R": 8}, "needs a size for each generic: --bind C=..."),
    ("row_sums", {"R": 8, "C": 4, "Q": 1}, "--bind Q: op `row_sums` has no generic named `Q`"),
])
def test_op_and_binding_mistakes_are_tune_errors(tmp_path, op, bind, message) -> None:
    with pytest.raises(TuneError, match=message):
        plan(rows(tmp_path), op, bind)


# ------------------------------------------------------------------------------------------
# Tuning: the check decides who may win, the timer who does.

def test_the_fastest_candidate_loses_when_it_disagrees_with_the_body(tmp_path) -> None:
    calls: list = []
    result = tune(rows(tmp_path), "row_sums", ROW_BIND, candidates={"BR": [16],
                  "BC": [8, 16, 32]}, warps=[4], stages=[2],
                  timer=by_bc({8: 2.0, 16: 3.0, 32: 1.0}, calls))
    trials = {dict(t.candidate.generics)["BC"]: t for t in result.trials}
    assert trials[32].time_ms == 1.0 and not trials[32].checked  # fastest: 48 / 32 rounds down
    assert trials[32].problem.startswith("disagrees with the body: result: max abs")
    assert trials[8].checked and trials[16].checked
    assert result.winner is trials[8] and result.speedup() == pytest.approx(1.5)
    assert len(calls) == 3
    assert result.recorded
    saved = TuningFile.load(tmp_path / "linnet.tuning.json")
    entry = saved.lookup(NAME, ROW_OP, "R=8 C=48", "equivalent")
    assert entry["generics"] == {"BR": 16, "BC": 8} and entry["kernel"] == "rows_floor"
    assert (entry["warps"], entry["stages"], entry["time_ms"]) == (4, 2, 2.0)
    assert entry["header_time_ms"] == 3.0 and entry["linnet"] and entry["date"]


def test_nothing_is_recorded_when_no_candidate_agrees(tmp_path) -> None:
    result = tune(rows(tmp_path), "row_sums", {"R": 8, "C": 40},  # no BC divides 40
                  candidates={"BR": [16], "BC": [16, 32]}, warps=[4], stages=[2],
                  timer=by_bc({16: 1.0, 32: 1.0}))
    assert len(result.trials) == 2 and result.winner is None and not result.ok
    assert all(t.problem.startswith("disagrees") for t in result.trials)
    assert not (tmp_path / "linnet.tuning.json").exists()


def test_rerunning_replaces_the_record_and_keeps_the_others(tmp_path) -> None:
    path = rows(tmp_path)
    file = tmp_path / "tuned.json"
    base = dict(candidates={"BR": [16], "BC": [8, 16]}, warps=[4], stages=[2], tuning=file)
    tune(path, "row_sums", ROW_BIND, timer=by_bc({8: 1.0, 16: 2.0}), **base)
    tune(path, "row_sums", {"R": 8, "C": 32}, timer=by_bc({8: 1.0, 16: 2.0}), **base)
    tune(path, "row_sums", ROW_BIND, timer=by_bc({8: 2.0, 16: 1.0}), **base)
    saved = TuningFile.load(file)
    assert saved.lookup(NAME, ROW_OP, "R=8 C=48", "equivalent")["generics"]["BC"] == 16
    assert saved.lookup(NAME, ROW_OP, "R=8 C=32", "equivalent")["generics"]["BC"] == 8


def test_the_loaders_use_what_was_recorded(tmp_path) -> None:
    path = rows(tmp_path)
    tune(path, "row_sums", ROW_BIND, candidates={"BR": [16], "BC": [8, 16]}, warps=[4],
         stages=[2], timer=by_bc({8: 1.0, 16: 2.0}))
    sums = load_function(path, "sums")  # the file beside the program
    x = torch.randn(8, 48, device=DEVICE)
    torch.testing.assert_close(sums(x), x.sum(1), rtol=1e-5, atol=1e-5)
    (key,) = sums.by_inputs  # compiled once, for the inputs' device
    assert key[-1] == NAME
    text = sums.source(R=8, C=48)
    assert "rows_floor__R8_C48_BR16_BC8" in text
    assert "tuned: BR=16 BC=8 warps=4 stages=2 from" in text
    assert text.count(f"for {NAME}") == 1
    untuned = load_function(path, "sums", tuning=False).source(R=8, C=48)
    assert "BR16_BC16" in untuned and "# tuning" not in untuned
    other = sums.source(R=8, C=64)
    assert "BC16" in other and "header's choice" in other


def test_a_bad_tuning_file_fails_loading_and_tuning(tmp_path) -> None:
    path = rows(tmp_path)
    (tmp_path / "linnet.tuning.json").write_text("[]")
    with pytest.raises(LinnetError, match="not a Linnet tuning file"):
        load_function(path, "sums")
    from linnet.tune import TuningFileError
    with pytest.raises(TuningFileError):
        tune(path, "row_sums", ROW_BIND, timer=by_bc({}))


def test_the_jax_loader_reads_the_recorded_choice(tmp_path) -> None:
    pytest.importorskip("jax")
    from linnet.jax import load_function as jax_load
    path = rows(tmp_path)
    tune(path, "row_sums", ROW_BIND, candidates={"BR": [16], "BC": [8, 16]}, warps=[4],
         stages=[2], timer=by_bc({8: 1.0, 16: 2.0}))
    text = jax_load(path, "sums").source(R=8, C=48)
    assert "# tuning: op row_sums<R=8, C=48>: tuned: BR=16 BC=8" in text


# ------------------------------------------------------------------------------------------
# The command line.

def test_cli_records_and_prints_json(tmp_path, capsys) -> None:
    path, file = rows(tmp_path), tmp_path / "t.json"
    argv = ["tune", path, "--op", "row_sums", "--bind", "R=8", "--bind", "C=48", "--try",
            "BR=16", "--try", "BC=16,32,64", "--warps", "4", "--stages", "2", "--tuning",
            str(file), "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["op"] == ROW_OP and out["binding"] == "R=8 C=48" and out["device"] == NAME
    assert out["winner"]["generics"] == {"BR": 16, "BC": 16}
    assert out["tuning_file"] == str(file)
    wrong = next(c for c in out["candidates"] if c["generics"]["BC"] == 32)
    assert wrong["checked"] is False and wrong["winner"] is False
    assert [f["generics"]["BC"] for f in out["filtered"]] == [64]
    assert TuningFile.load(file).lookup(NAME, ROW_OP, "R=8 C=48", "equivalent")


def test_cli_table_and_list(tmp_path, capsys) -> None:
    path = rows(tmp_path)
    argv = ["tune", path, "--op", "row_sums", "--bind", "R=8", "--bind", "C=48", "--try",
            "BR=16", "--try", "BC=16,32", "--warps", "4", "--stages", "2"]
    assert main(argv + ["--list"]) == 0
    listed = capsys.readouterr().out
    assert "op row_sums<R=8, C=48> (kernel rows_floor), numerics equivalent: 2 candidates" \
        in listed and "BR=16 BC=16 warps=4 stages=2  (header's choice)" in listed
    assert not (tmp_path / "linnet.tuning.json").exists()
    assert main(argv + ["--no-record"]) == 0
    table = capsys.readouterr().out
    assert "candidate" in table and "checked" in table and "DISAGREE" in table
    assert "winner: BR=16 BC=16 warps=4 stages=2 at" in table and "not recorded" in table
    assert not (tmp_path / "linnet.tuning.json").exists()


def test_cli_exit_1_when_nothing_agrees(tmp_path, capsys) -> None:
    argv = ["tune", rows(tmp_path), "--op", "row_sums", "--bind", "R=8", "--bind", "C=40",
            "--try", "BR=16", "--try", "BC=16", "--warps", "4", "--stages", "2"]
    assert main(argv) == 1
    assert "no candidate agreed with the op's body: nothing recorded" in \
        capsys.readouterr().out


def test_cli_exit_1_for_a_bad_tuning_file(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    argv = ["tune", rows(tmp_path), "--op", "row_sums", "--bind", "R=8", "--bind", "C=48",
            "--tuning", str(bad)]
    assert main(argv) == 1
    assert "bad.json: not valid JSON" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--try", "BC"], "--try BC: write NAME=V,V,..."),
    (["--try", "BC=a"], "--try BC=a: 'a': write integers separated by commas"),
    (["--try", "BQ=8"], "`rows_floor` has no generic named `BQ`"),
    (["--bind", "Z=3"], "op `row_sums` has no generic named `Z`"),
    (["--max-candidates", "0"], "--max-candidates and --checks take positive integers"),
])
def test_cli_exit_2_for_command_line_mistakes(tmp_path, capsys, extra, message) -> None:
    argv = ["tune", rows(tmp_path), "--op", "row_sums", "--bind", "R=8", "--bind", "C=48",
            "--list"]
    assert main(argv + extra) == 2
    assert message in capsys.readouterr().err


def test_cli_exit_2_for_a_missing_file_or_op(tmp_path, capsys) -> None:
    assert main(["tune", str(tmp_path / "none.linnet"), "--op", "x"]) == 2
    assert main(["tune", str(MATMUL), "--op", "nope", "--list"]) == 2
    assert "no op named `nope`" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["tune", str(MATMUL)])  # --op is required
    assert exit_.value.code == 2
