"""Compiling with tuned kernel choices: the override changes the generated code, the header
says which choice each op took, and a choice that no longer fits is ignored with a note."""

from __future__ import annotations

import json
import re

import pytest

from linnet.cli.main import main
from linnet.pipeline import compile_source
from linnet.tune import TuningFile, TuningFileError
from linnet.passes.kernels.kernel_tuning import TunedChoice
from programs import write_program
from tuning_programs import LINEAR_BIND, MATMUL, linear_program, matmul_choice, record, tuning_of

BIND = {"M": 64, "N": 64, "K": 64}


def matmul_text(tuning, target: str = "torch", numerics: str = "equivalent",
                bind=None, **options) -> str:
    return compile_source(path=str(MATMUL), entry="matmul_any", bind=bind or BIND,
                          numerics=numerics, target=target, tuning=tuning, **options).text


def tuning_lines(text: str) -> list[str]:
    """The header's lines about tuning (`# tuning: ...` and its continuation lines)."""
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("# tuning: "))
    found = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("#   op "):
            break
        found.append(line)
    return found


def test_a_tuned_choice_changes_tile_sizes_and_launch_hints() -> None:
    header = matmul_text(False)
    tuned = matmul_text(tuning_of(matmul_choice()))
    assert "tl.arange(0, 128)" in header and "num_warps=8, num_stages=4" in header
    assert "# tuning:" not in header  # no tuning file: nothing said
    assert "tl.arange(0, 128)" not in tuned and "tl.arange(0, 32)" in tuned
    assert "tl.arange(0, 16)" in tuned  # BK
    assert "num_warps=4, num_stages=2" in tuned
    assert "matmul_tiles__M64_N64_K64_Tf32_BM32_BN64_BK16_G8" in tuned
    assert tuning_lines(tuned) == [
        "# tuning: op matmul<M=64, N=64, K=64>: tuned: BM=32 BN=64 BK=16 warps=4 stages=2 "
        "from test choices for cpu"]


def test_a_choice_may_leave_the_kernels_hints_alone() -> None:
    text = matmul_text(tuning_of(matmul_choice(generics=(("BN", 32),), warps=None,
                                               stages=None)))
    assert "BM128_BN32_BK32_G8" in text and "num_warps=8, num_stages=4" in text


def test_the_jax_module_takes_the_choice_and_says_so() -> None:
    text = matmul_text(tuning_of(matmul_choice()), target="jax")
    assert "grid=(2,)" in text  # 64 / BM=32 tile rows times 64 / BN=64 tile columns
    assert '"num_warps": warps' in text and "_lp_params(4, 2)" in text
    assert "# tuning: op matmul<M=64, N=64, K=64>: tuned: BM=32" in text


def test_a_choice_applies_only_at_its_binding_and_numerics() -> None:
    other_size = matmul_text(tuning_of(matmul_choice()), bind={"M": 64, "N": 64, "K": 65})
    assert "BM128_BN128_BK32" in other_size
    assert "header's choice (test choices has no choice for it on cpu under numerics " \
           "equivalent)" in tuning_lines(other_size)[0]
    fast_only = matmul_text(tuning_of(matmul_choice(numerics="fast")))
    assert "BM128_BN128_BK32" in fast_only
    assert tuning_lines(fast_only)[0].endswith("it has one under numerics fast)")
    assert "BM32_BN64_BK16" in matmul_text(tuning_of(matmul_choice(numerics="fast")),
                                           numerics="fast")


@pytest.mark.parametrize("choice, why", [
    (matmul_choice(generics=(("BK", 8),)), "`matmul_tiles`'s `where BK >= 16` fails"),
    (matmul_choice(generics=(("BM", 48),)), "E2127: tile sizes must be powers of two"),
    (matmul_choice(generics=(("BX", 32),)), "`BX` is not a generic of `matmul_tiles`)"),
    (matmul_choice(generics=(("M", 32),)), "`M` is a size of `matmul_tiles`, not a tile "
                                           "choice (its parameter or result types mention it)"),
    (matmul_choice(kernel="old_tiles"), "it is for kernel `old_tiles`, and the op binds "
                                        "`matmul_tiles`"),
    (matmul_choice(warps=6), "`warps=6` is not a power of two up to 32"),
    (matmul_choice(warps=2 ** 30), "`warps=1073741824` is not a power of two up to 32"),
    (matmul_choice(stages=10 ** 9), "`stages=1000000000` is not an integer from 1 to 8"),
    (matmul_choice(generics=(("BM", 2 ** 20),)),
     "a tile of 134217728 elements with BM=1048576 warps=4 stages=2 (a tile holds at most "
     "1048576)"),
])
def test_a_choice_that_no_longer_fits_is_ignored_with_a_note(choice, why) -> None:
    text = matmul_text(tuning_of(choice))
    assert "BM128_BN128_BK32" in text and "num_warps=8, num_stages=4" in text
    (line,) = tuning_lines(text)
    assert line.startswith("# tuning: op matmul<M=64, N=64, K=64>: header's choice (the "
                           "choice in test choices is ignored: ")
    assert why in line


def linear_choice(binding: str = "M=4096 N=512 K=512", **generics) -> TunedChoice:
    return TunedChoice("tuning_linear.linear", binding, "equivalent", "linear_tiles",
                       tuple(generics.items()))


def test_a_choice_replaces_a_tile_the_header_binds_by_an_expression(tmp_path) -> None:
    path = write_program(tmp_path, linear_program(), "linear.linnet")

    def linear_text(tuning, bind) -> str:
        return compile_source(path=path, entry="project", bind=bind, tuning=tuning).text

    header = linear_text(False, LINEAR_BIND)
    assert "linear_tiles__M4096_N512_K512_BM128_BN128_BK32" in header
    assert "f1_kernel[(32, 4)](a0, a1, o0, num_warps=8, num_stages=3)" in header
    tuned = linear_text(tuning_of(linear_choice(BN=64)), LINEAR_BIND)
    assert tuning_lines(tuned) == [
        "# tuning: op linear<M=4096, N=512, K=512>: tuned: BN=64 from test choices for cpu"]
    assert "linear_tiles__M4096_N512_K512_BM128_BN64_BK32" in tuned
    assert "tl.arange(0, 64)" in tuned  # the BN columns of a tile
    assert "f1_kernel[(32, 8)](a0, a1, o0, num_warps=8, num_stages=3)" in tuned  # 512 / 64
    decode = {"M": 16, "N": 512, "K": 512}
    elsewhere = linear_text(tuning_of(linear_choice(BN=64)), decode)
    assert "linear_tiles__M16_N512_K512_BM16_BN32_BK32" in elsewhere  # min(128, max(32, 32))
    assert tuning_lines(elsewhere) == [
        "# tuning: op linear<M=16, N=512, K=512>: header's choice (test choices has no "
        "choice for it on cpu under numerics equivalent)"]
    refused = linear_text(tuning_of(linear_choice("M=16 N=512 K=512", BN=8)), decode)
    assert "linear_tiles__M16_N512_K512_BM16_BN32_BK32" in refused
    assert tuning_lines(refused)[0].endswith("is ignored: `linear_tiles`'s `where BN >= 16` "
                                             "fails)")


def test_every_op_instance_gets_a_line(tmp_path) -> None:
    text = compile_source(path=str(MATMUL), entry="main", tuning=tuning_of(matmul_choice(
        binding="M=200 N=136 K=72"))).text
    assert tuning_lines(text) == [
        "# tuning: op matmul<M=200, N=136, K=72>: tuned: BM=32 BN=64 BK=16 warps=4 stages=2 "
        "from test choices for cpu"]


def test_exact_numerics_and_other_targets_say_nothing_of_tuning() -> None:
    tuning = tuning_of(matmul_choice())
    assert "tuning" not in matmul_text(tuning, numerics="exact")
    assert "tuning" not in matmul_text(tuning, target="stablehlo")


# ------------------------------------------------------------------------------------------
# Tuning files: which one, which device.

def write_file(path, devices: dict) -> str:
    path.write_text(json.dumps({"format": "linnet-tuning", "version": 1, "devices": devices}))
    return str(path)


def matmul_records(device: str = "cpu", **generics) -> dict:
    generics = generics or {"BM": 32, "BN": 64, "BK": 16}
    return {device: {"examples.matmul.matmul": {"M=64 N=64 K=64": {
        "equivalent": record(generics)}}}}


def test_a_file_gives_the_choices_of_its_only_device(tmp_path) -> None:
    path = write_file(tmp_path / "t.json", matmul_records("NVIDIA H200"))
    text = matmul_text(path)
    assert "BM32_BN64_BK16" in text
    assert f"tuned: BM=32 BN=64 BK=16 warps=4 stages=2 from {path} for NVIDIA H200" in text


def test_a_named_device_picks_its_choices(tmp_path) -> None:
    devices = {**matmul_records("NVIDIA H200", BM=64), **matmul_records("cpu", BM=32)}
    path = write_file(tmp_path / "t.json", devices)
    assert "BM64_BN128_BK32" in matmul_text(path, device="NVIDIA H200")
    assert "BM32_BN128_BK32" in matmul_text(path, device="cpu")
    several = matmul_text(path)
    assert "BM128_BN128_BK32" in several
    assert "records choices for several devices (NVIDIA H200, cpu); name one" in several
    absent = matmul_text(path, device="NVIDIA A100")
    assert "BM128_BN128_BK32" in absent
    assert "has no choices for NVIDIA A100 (devices: NVIDIA H200, cpu)" in absent


def test_the_file_beside_the_source_and_the_environment(tmp_path, monkeypatch) -> None:
    source = tmp_path / "matmul.linnet"
    source.write_text(MATMUL.read_text())
    beside = write_file(tmp_path / "linnet.tuning.json", matmul_records(BM=32))
    compile_beside = lambda **kw: compile_source(  # noqa: E731
        path=str(source), entry="matmul_any", bind=BIND, **kw).text
    assert f"from {beside} for cpu" in compile_beside()
    assert "BM128" in compile_beside(tuning=False)
    elsewhere = write_file(tmp_path / "other.json", matmul_records(BM=64))
    monkeypatch.setenv("LINNET_TUNING", elsewhere)
    assert "BM64_BN128" in compile_beside()
    assert "BM32_BN128" in compile_beside(tuning=beside)  # the argument wins
    monkeypatch.setenv("LINNET_TUNING", str(tmp_path / "missing.json"))
    with pytest.raises(TuningFileError, match="missing.json: no such tuning file"):
        compile_beside()


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON (line 1, column 2"),
    ('{"a": 1}', 'not a Linnet tuning file (it has no "format": "linnet-tuning")'),
    ('[1, 2]', "not a Linnet tuning file"),
    ('{"format": "linnet-tuning", "version": 2, "devices": {}}',
     "tuning file version 2, written by a newer Linnet; this Linnet reads version 1"),
    ('{"format": "linnet-tuning", "version": 1, "devices": []}',
     "devices: expected an object, found list"),
    ('{"format": "linnet-tuning", "version": 1, "devices": {"cpu": {"m.op": {"N=4": '
     '{"fast": {"kernel": "k", "generics": {"B": "x"}}}}}}}',
     "cpu/m.op/N=4/fast: generic `B` must be a positive integer, found 'x'"),
    ('{"format": "linnet-tuning", "version": 1, "devices": {"cpu": {"m.op": {"N=4": '
     '{"quick": {"kernel": "k", "generics": {}}}}}}}', "unknown numerics 'quick'"),
    ('{"format": "linnet-tuning", "version": 1, "devices": {"cpu": {"m.op": {"N=4": '
     '{"fast": {"kernel": "k", "generics": {}, "warps": 0}}}}}}',
     "`warps` must be a positive integer or null, found 0"),
    ('{"format": "linnet-tuning", "version": 1, "devices": {"cpu": {"m.op": {"N=4": '
     '{"fast": {"kernel": "k", "generics": {}, "warps": 1073741824}}}}}}',
     "`warps` must be a power of two up to 32 or null, found 1073741824"),
    ('{"format": "linnet-tuning", "version": 1, "devices": {"cpu": {"m.op": {"N=4": '
     '{"fast": {"kernel": "k", "generics": {}, "stages": 1000000000}}}}}}',
     "`stages` must be an integer from 1 to 8 or null, found 1000000000"),
    ('{"format": "linnet-tuning", "version": 1, "devices": {"cpu": {"m.op": {"N=4": '
     '{"fast": {"kernel": "k", "generics": {"BM": 2097152}}}}}}}',
     "generic `BM` must be at most 1048576 (2**20, the largest tile), found 2097152"),
    ('{"format": "linnet-tuning", "version": 1, "devices": {"cpu": {"m.op": {"N=4": '
     '{"fast": {"kernel": "k", "generics": {"BM": ' + "9" * 5000 + '}}}}}}}',
     "not a tuning file (Exceeds the limit (4300 digits)"),
    ('{"format": "linnet-tuning", "version": 1, "devices": ' + "[" * 100_000
     + "]" * 100_000 + "}", "not a tuning file (nested too deeply)"),
])
def test_a_corrupt_or_foreign_file_is_a_clear_error(tmp_path, text, message) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(TuningFileError) as err:
        TuningFile.load(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)


def test_the_file_round_trips(tmp_path) -> None:
    path = tmp_path / "sub" / "t.json"
    file = TuningFile.load(path, missing_ok=True)
    assert file.devices == {}
    entry = record({"BM": 32, "BN": 64, "BK": 16})
    file.record("NVIDIA H200", "examples.matmul.matmul", "M=64 N=64 K=64", "fast", entry)
    file.record("cpu", "examples.matmul.matmul", "M=64 N=64 K=64", "equivalent", entry)
    file.save()
    again = TuningFile.load(path)
    assert again.devices == file.devices
    assert again.lookup("cpu", "examples.matmul.matmul", "M=64 N=64 K=64",
                        "equivalent") == entry
    assert json.loads(path.read_text())["format"] == "linnet-tuning"
    (choice,) = again.for_device("NVIDIA H200").choices
    assert choice == matmul_choice(numerics="fast", generics=(("BK", 16), ("BM", 32),
                                                              ("BN", 64)))
    assert [p.name for p in path.parent.iterdir()] == ["t.json"]  # no temporary left
    with pytest.raises(TuningFileError, match="`kernel` must be the kernel's name"):
        again.record("cpu", "m.op", "N=4", "fast", {"generics": {}})


# ------------------------------------------------------------------------------------------
# The command line.

def test_linnet_torch_takes_tuning_and_device(tmp_path, capsys) -> None:
    devices = {**matmul_records("NVIDIA H200", BM=64), **matmul_records("cpu", BM=32)}
    path = write_file(tmp_path / "t.json", devices)
    argv = ["torch", str(MATMUL), "--entry", "matmul_any", "--bind", "M=64", "--bind", "N=64",
            "--bind", "K=64", "--tuning", path]
    assert main(argv + ["--device", "NVIDIA H200"]) == 0
    out = capsys.readouterr().out
    assert "BM64_BN128_BK32" in out and re.search(r"# tuning: .*for NVIDIA H200", out)
    assert main(argv + ["--no-tuning"]) == 0
    assert "# tuning" not in capsys.readouterr().out


def test_linnet_torch_with_a_bad_tuning_file(tmp_path, capsys) -> None:
    bad = tmp_path / "t.json"
    bad.write_text("{}")
    argv = ["torch", str(MATMUL), "--entry", "main"]
    assert main(argv + ["--tuning", str(bad)]) == 1
    assert "not a Linnet tuning file" in capsys.readouterr().err
    assert main(argv + ["--tuning", str(tmp_path / "none.json")]) == 2
    assert "no such tuning file" in capsys.readouterr().err


@pytest.mark.parametrize("target", ["torch", "jax", "onnx", "stablehlo", "compile"])
def test_every_generating_command_takes_no_tuning(tmp_path, capsys, target) -> None:
    """A broken linnet.tuning.json beside the program: read (exit 1) unless --no-tuning."""
    source = tmp_path / "matmul.linnet"
    source.write_text(MATMUL.read_text())
    (tmp_path / "linnet.tuning.json").write_text("{broken")
    argv = [target, str(source), "--entry", "main", "-o", str(tmp_path / "out")]
    assert main(argv) == 1
    assert "linnet.tuning.json: not valid JSON" in capsys.readouterr().err
    assert main(argv + ["--no-tuning"]) == 0


def test_tuning_false_reads_no_file(tmp_path) -> None:
    """`tuning=False` means no file, also where the loaders check the program first."""
    import linnet.torch as lt
    source = tmp_path / "matmul.linnet"
    source.write_text(MATMUL.read_text())
    (tmp_path / "linnet.tuning.json").write_text("{broken")
    assert lt.load_function(str(source), "main", tuning=False) is not None
    assert lt.load(str(source), tuning=False).main is not None
    with pytest.raises(Exception, match="not valid JSON"):
        lt.load_function(str(source), "main")


def test_keys_of_a_tuning_file_are_printed_escaped(tmp_path, capsys) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"format": "linnet-tuning", "version": 1, "devices": '
                    '{"cpu\\u001b[31m": {"op\\n": 3}}}')
    assert main(["torch", str(MATMUL), "--entry", "main", "--tuning", str(path)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "cpu\\x1b[31m/op\\x0a: expected an object" in err
    assert err.count("\n") == 1


def test_verify_takes_the_tuning_options(tmp_path, capsys) -> None:
    """`linnet verify` reads the tuning file as the generating commands do (it read none
    for --target torch and the file beside the program for --target jax)."""
    source = tmp_path / "matmul.linnet"
    source.write_text(MATMUL.read_text())
    (tmp_path / "linnet.tuning.json").write_text("{broken")
    assert main(["verify", str(source), "--op", "matmul", "--device", "cpu"]) == 1
    assert "linnet.tuning.json: not valid JSON" in capsys.readouterr().err
    assert main(["verify", str(source), "--tuning", str(tmp_path / "none.json")]) == 2
    assert "no such tuning file" in capsys.readouterr().err
