"""The command line's answers to a newcomer's first mistakes: an unknown name gets the
near one, a bare `inspect` shows the file, a dump of a pass that did not run says so."""

from __future__ import annotations

from pathlib import Path

from linnet.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = str(ROOT / "examples" / "softmax.linnet")


def test_verify_an_unknown_op_suggests_the_near_one(capsys) -> None:
    assert main(["verify", SOFTMAX, "--op", "softmx"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"linnet verify: no op named `softmx` in {SOFTMAX}; its ops with a kernel: softmax "
        "(did you mean `softmax`?)")


def test_verify_an_unknown_entry_suggests_the_near_one(capsys) -> None:
    assert main(["verify", SOFTMAX, "--entry", "mian"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"linnet verify: no entry named `mian` in {SOFTMAX}; its entries: main, softmax_any "
        "(did you mean `main`?)")


def _report(op: str):
    """A one-trial report of the op of examples/ (softmax: no grad clause; relu: one), the
    comparison made up: printing the report is what is tested, not running kernels."""
    from linnet.fuzz.comparison import Comparison, OutputError, Tolerance
    from linnet.fuzz.harness import target_spec
    from linnet.fuzz.verify import Report, Trial
    spec = target_spec(str(ROOT / "examples" / f"{op}.linnet"), op)
    err = OutputError("x", "f32", (2, 3), 1e-8, 1e-7, 0.01, Tolerance(1e-5, 1e-5))
    same = OutputError("x", "f32", (2, 3), 0.0, 0.0, 0.0, Tolerance(1e-5, 1e-5))
    comparison = Comparison(op, {}, "equivalent", "cpu", [err], [same], True, True, "cpu")
    values = {g.name: 2 for g in spec.generics}
    return Report(spec, [Trial(values, "normal", 0, comparison)])


def test_verify_an_op_without_grad_clause_does_not_claim_its_gradient(capsys) -> None:
    from linnet.fuzz.verify import format_report
    text = format_report(_report("softmax"), "cpu", "equivalent")
    assert "body's in both" in text and "0.0e+00" not in text
    assert "tried: the forward pass agrees" in text and "all agree" not in text
    assert ("note: `softmax` has no `grad` clause, so both runs differentiate its body: the "
            "gradient was not compared against the kernel") in text


def test_verify_an_op_with_a_grad_clause_reports_its_gradient(capsys) -> None:
    from linnet.fuzz.verify import format_report
    text = format_report(_report("relu"), "cpu", "equivalent")
    assert "0.0e+00/0.0e+00" in text and "all agree" in text and "no `grad`" not in text


NOT_RUN = "// differentiate did not run: it runs under --grad only; the IR is its input, unchanged"


def test_a_dump_after_a_pass_that_did_not_run_says_so(capsys, tmp_path) -> None:
    dumps = tmp_path / "stages"
    assert main(["compile", str(ROOT / "examples" / "relu.linnet"), "--entry", "main",
                 "--dump-after=differentiate,fast-math", "--dump-dir", str(dumps)]) == 0
    out = capsys.readouterr().out.splitlines()
    after = out.index("// ----- IR after differentiate (tensor-core) -----")
    assert out[after + 1] == NOT_RUN
    fast = out.index("// ----- IR after fast-math (tensor-dots) -----")
    assert out[fast + 1] == ("// fast-math did not run: it runs under --numerics fast only; "
                             "the IR is its input, unchanged")
    (written,) = dumps.glob("*-differentiate.txt")
    assert written.read_text().splitlines()[0] == NOT_RUN
    (ran,) = dumps.glob("*-lower-index-notation.txt")
    assert "did not run" not in ran.read_text()


def test_the_dump_of_a_pass_that_did_not_run_says_so_from_python() -> None:
    from linnet.pipeline import compile_file
    compiled = compile_file(ROOT / "examples" / "relu.linnet", entry="main")
    assert compiled.dump("differentiate").splitlines()[0] == NOT_RUN
    assert compiled.result.stages[[s.name for s in compiled.result.stages].index(
        "differentiate")].skipped == "it runs under --grad only"


def test_inspect_without_a_flag_shows_what_the_file_declares(capsys) -> None:
    assert main(["inspect", SOFTMAX]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{SOFTMAX}: module examples.softmax",
        "entries:",
        "  main(x: Tensor[64, 1000; f32]) -> Tensor[64, 1000; f32]",
        "  softmax_any<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32]",
        "ops:",
        "  softmax<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32], kernel "
        "row_softmax<R, C, 1024>, no grad clause",
        "kernels:",
        "  row_softmax<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; f32]) writes "
        "(y: Tensor[R, C; f32])",
    ]


def test_inspect_without_a_flag_lists_blocks_and_their_members(capsys) -> None:
    import json
    model = str(ROOT / "examples" / "block_model.linnet")
    assert main(["inspect", model]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("  block Model<L: Dim = 3, H: Dim = 4, V: Dim = 5>")
    assert out[start + 1:start + 6] == [
        "    param embed: Tensor[V, H; f32]", "    sub layers: [Mlp<H, 2 * H>; L]",
        "    state steps: Tensor[1; i64]",
        "    entry main<B: Dim = 2>(x: Tensor[B, H; f32]) -> Tensor[B, V; f32]",
        "    entry loss<B: Dim = 2>(x: Tensor[B, H; f32]) -> f32"]
    assert main(["inspect", "--json", model]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [b["name"] for b in data["blocks"]] == ["Mlp", "Model"]
    assert data["fns"] == []  # its layers call the library's linear_2d
