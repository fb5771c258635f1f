"""The e-graph passes' results kept in the private cache (`linnet.passes.egraph.cache`)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from linnet.cli.main import main
from linnet.passes import compile_memo
from linnet.passes.egraph import cache as egraph_cache
from linnet.pipeline import compile_source
from linnet.testing.child_env import child_env

ROOT = Path(__file__).resolve().parents[3]
SOFTMAX = ROOT / "examples" / "softmax.linnet"

PROBE = """
import sys
from linnet.cli.main import main
code = main(["torch", sys.argv[1], "--entry", "main", "-o", sys.argv[2]])
print("egglog imported" if "egglog" in sys.modules else "egglog not imported")
sys.exit(code)
"""


def _print_twice(tmp_path: Path) -> list[subprocess.CompletedProcess]:
    env = child_env(ROOT, LINNET_CACHE=str(tmp_path / "cache"))
    return [subprocess.run([sys.executable, "-c", PROBE, str(SOFTMAX), str(tmp_path / f"{k}.py")],
                           env=env, capture_output=True, text=True, timeout=300)
            for k in range(2)]


def test_printing_again_reads_the_result_and_imports_no_egglog(tmp_path):
    first, second = _print_twice(tmp_path)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.strip() == "egglog imported"
    assert second.stdout.strip() == "egglog not imported"
    assert (tmp_path / "0.py").read_text() == (tmp_path / "1.py").read_text()
    assert len(list((tmp_path / "cache" / "egraph").glob("*.pickle"))) == 2  # one per pass


def test_a_cached_result_is_the_computed_one(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path))
    fresh = compile_source(path=str(SOFTMAX), entry="main", target="torch")
    again = compile_source(path=str(SOFTMAX), entry="main", target="torch")
    assert len(list((tmp_path / "egraph").glob("*.pickle"))) == 2
    for stage in ("egraph-tiles", "egraph-products"):
        assert str(again.stage(stage)) == str(fresh.stage(stage))
    assert "tl.dot" not in fresh.text or "tl.dot" in again.text
    assert again.text == fresh.text


def test_edited_rule_sets_are_never_cached(tmp_path, monkeypatch):
    from linnet.rules import MODULES
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path))
    rules = [m.RULE_SET for m in MODULES]
    compile_source(path=str(SOFTMAX), entry="main", target="torch", rules=rules)
    assert not list((tmp_path / "egraph").glob("*.pickle"))


def test_a_program_of_many_bindings_is_never_cached(tmp_path, monkeypatch):
    """Keying and reading back a long program costs more than the pass (a `static for` of
    10^5 trips: 4.5 s against 0.3 s)."""
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path))
    monkeypatch.setattr(egraph_cache, "LARGEST", 3)
    fresh = compile_source(path=str(SOFTMAX), entry="main", target="torch")
    assert not list((tmp_path / "egraph").glob("*.pickle"))
    monkeypatch.setattr(egraph_cache, "LARGEST", 10_000)
    compile_memo.forget()  # the same request again, now under the patch
    assert compile_source(path=str(SOFTMAX), entry="main", target="torch").text == fresh.text
    assert len(list((tmp_path / "egraph").glob("*.pickle"))) == 2


def test_an_unreadable_file_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path))
    fresh = compile_source(path=str(SOFTMAX), entry="main", target="torch").text
    for path in (tmp_path / "egraph").glob("*.pickle"):
        path.write_bytes(b"not a pickle")
    assert compile_source(path=str(SOFTMAX), entry="main", target="torch").text == fresh


def test_equal_programs_have_one_key_whatever_objects_they_share():
    """The key pickles without a memo: a program that holds one object twice and one that
    holds two equal objects are the same value, and get the same key."""
    from linnet.ir import tensor as ir
    ty = ir.TType((4,), "f32")
    one = ir.Var("x", ty)
    shared = (one, one)
    equal = (ir.Var("x", ty), ir.Var("x", ir.TType((4,), "f32")))
    assert egraph_cache._canonical(shared) == egraph_cache._canonical(equal)
    assert egraph_cache._key("egraph_tiles", shared, None) == \
        egraph_cache._key("egraph_tiles", equal, None)
    assert egraph_cache._key("egraph_tiles", shared, None) != \
        egraph_cache._key("egraph_products", shared, None)


def test_the_key_covers_what_the_stage_reads_besides_the_ir():
    """The state records the e-graph passes read (the report they extend) and the printers
    after them print are part of the program's value, and the numerics come from the
    options: a change to either is another key."""
    from linnet.ir import tensor as ir
    from linnet.ir.program_state import ProgramState
    from linnet.passes.manager import Options
    program = compile_source(SOFTMAX.read_text(), path=str(SOFTMAX), entry="main",
                             tuning=False).stage("drop-dead-carries")
    key = egraph_cache._key("egraph_tiles", program, Options())
    reported = program.with_state(egraph_report="// egraph-tiles earlier: 1 e-nodes")
    renamed = program.with_state(module="elsewhere")
    assert key == egraph_cache._key("egraph_tiles", program.with_state(), Options())
    assert key != egraph_cache._key("egraph_tiles", reported, Options())
    assert key != egraph_cache._key("egraph_tiles", renamed, Options())
    assert key != egraph_cache._key("egraph_tiles", program, Options(numerics="fast"))
    bare = ir.Program(program.funcs, program.entry, ProgramState())
    assert key != egraph_cache._key("egraph_tiles", bare, Options())


# ----------------------------------------- what is read is checked against its key

RELU = ROOT / "examples" / "relu.linnet"
MATMUL = ROOT / "examples" / "matmul.linnet"


def _entries(folder: Path) -> list[Path]:
    return sorted((folder / "egraph").glob("*.pickle"))


CORRUPTIONS = [
    lambda data: pickle.dumps(42),                          # a pickle of something else
    lambda data: data[:len(data) // 2],                     # a torn write
    lambda data: data[:-40] + bytes(40),                    # the result's bytes changed
    lambda data: data.partition(b"\n")[2],                  # no header: an older format
]


def test_a_corrupt_entry_is_ignored(tmp_path, monkeypatch):
    """Each corruption is a miss; the CLI then runs the pass (it exited 3 on a pickle of
    something else)."""
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path))
    fresh = compile_source(path=str(RELU), entry="main", target="torch").text
    good = {p: p.read_bytes() for p in _entries(tmp_path)}
    for corrupt in CORRUPTIONS:
        for path, data in good.items():
            path.write_bytes(data)
            assert egraph_cache._read(path.stem) is not None
            path.write_bytes(corrupt(data))
            assert egraph_cache._read(path.stem) is None
    out = tmp_path / "y.py"
    assert main(["torch", str(RELU), "--entry", "main", "-o", str(out)]) == 0
    assert out.read_text() == fresh


def test_an_entry_copied_over_another_name_is_not_trusted(tmp_path, monkeypatch):
    """relu's results renamed as matmul's: matmul's module is still matmul's."""
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path))
    relu = compile_source(path=str(RELU), entry="main", target="torch").text
    relu_entries = _entries(tmp_path)
    matmul = compile_source(path=str(MATMUL), entry="main", target="torch").text
    matmul_entries = [p for p in _entries(tmp_path) if p not in relu_entries]
    assert len(relu_entries) == len(matmul_entries) == 2 and relu != matmul
    for source, target in zip(relu_entries, matmul_entries):
        target.write_bytes(source.read_bytes())
    assert compile_source(path=str(MATMUL), entry="main", target="torch").text == matmul


def test_an_entry_records_the_source_of_every_module_the_pass_ran(tmp_path, monkeypatch):
    """The numerics policy, the rules and the passes are among them; an entry made by a
    numerics policy edited since is not read."""
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path))
    compile_source(path=str(SOFTMAX), entry="main", target="torch")
    (entry, *_) = _entries(tmp_path)
    head, _, payload = entry.read_bytes().partition(b"\n")
    header = json.loads(head)
    for rel in ("ir/kernel_numerics.py", "rules/mask_facts.py", "passes/egraph/egraph_tiles.py",
                "passes/egraph/egraph_products.py", "ir/tensor.py"):
        assert rel in header["sources"], rel
    key = header["key"]
    assert egraph_cache._read(key) is not None
    header["sources"]["ir/kernel_numerics.py"] = "0" * 64  # as if edited since
    entry.write_bytes(json.dumps(header).encode() + b"\n" + payload)
    assert egraph_cache._read(key) is None
