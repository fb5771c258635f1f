"""Time and size limits of the front end: linear in blank lines and statements, and
literals too large for any dtype are E2105, never a crash or a hang."""

from __future__ import annotations

import importlib.util
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

import linnet
from linnet.check import dims as dims_module
from linnet.check.dim_normal_form import Dim
from linnet.check.types import LitT, Val, choice_of
from linnet.deepstack import call_with_deep_stack
from linnet.check.frontend import check_program
from linnet.ir import tensor as ir
from linnet.passes.middle import dce as dce_module
from linnet.passes import traverse
from linnet.passes.egraph import egraph_products
from linnet.passes.front import surface_walks as elaborate_walks
from linnet.passes.front.builder import Builder
from linnet.pipeline import compile_source, passes_for
from linnet.syntax.lexer import LARGEST_LITERAL, _scan, tokenize

F32 = None  # the type of a fresh variable does not matter to naming


def _body(lines: str) -> str:
    return f"module m\nfn f(x: f32) -> f32 {{\n    let y = x\n{lines}    return y\n{lines}}}\n"


# ------------------------------------------------------------------ the lexer

@pytest.mark.parametrize("run", ["\n", "    // a comment\n", "  /* block */  \n", "\t\n"])
def test_a_run_of_blank_or_comment_lines_is_one_newline(run):
    raw, _ = _scan(_body(run * 50), "m.linnet")
    kinds = [t.type for t in raw]
    assert "NL NL" not in " ".join(kinds)
    assert kinds.count("NL") == 5  # module, `{`, `let` and its run, `return` and its run, `}`
    laid_out = [t.type for t in tokenize(_body(run * 50), "m.linnet").tokens]
    assert laid_out.count("NL") == 1  # ends `let y = x`; the others continue or close


def test_line_numbers_survive_collapsed_runs():
    text = _body("\n" * 7)
    ret = next(t for t in tokenize(text, "m.linnet").tokens if t.type == "RETURN")
    assert ret.line == 4 + 7


def test_a_hundred_thousand_blank_lines_before_a_brace_are_fast():
    text = _body("    // note\n\n" * 50_000)
    start = time.perf_counter()
    result = check_program("m.linnet", text)
    assert time.perf_counter() - start < 5.0  # was quadratic: over a minute
    assert result.ok


# ----------------------------------------------------------------- literals

def _literal(lit: str) -> str:
    return f"module m\nentry main(x: f64) -> f64 {{\n    return x + {lit}\n}}\n"


@pytest.mark.parametrize("lit", ["1" + "0" * 5000, "9" * 4301, "0x" + "f" * 300,
                                 "0x" + "f" * 1_000_000, "0b" + "1" * 1025, "1_000" * 200,
                                 str(LARGEST_LITERAL + 1)])
def test_literals_beyond_every_dtype_are_e2105(lit):
    start = time.perf_counter()
    result = check_program("m.linnet", _literal(lit))
    assert time.perf_counter() - start < 5.0
    (d,) = result.diagnostics
    assert d.code == "E2105" and "every dtype" in d.message
    assert len(d.message) < 120  # the literal is shortened, not printed whole
    assert (d.span.start, d.span.end) == (result.sources["m.linnet"].text.index(lit[:8]),
                                           result.sources["m.linnet"].text.index(lit[:8])
                                           + len(lit))


@pytest.mark.parametrize("lit", [str(LARGEST_LITERAL), str(2**64 - 1), "0x" + "f" * 16,
                                 "1" + "0" * 30])
def test_literals_some_dtype_holds_pass_the_lexer(lit):
    assert tokenize(_literal(lit), "m.linnet").diagnostics == []


def test_the_largest_literal_is_f64s_largest_value():
    assert float(LARGEST_LITERAL) == 1.7976931348623157e308
    assert len(str(LARGEST_LITERAL)) == 309


# ------------------------------------------------------------------ elaborate

class _CountingSet(set):
    probes = 0

    def __contains__(self, item) -> bool:
        _CountingSet.probes += 1
        return super().__contains__(item)


def test_fresh_names_cost_one_probe_each():
    builder = Builder()
    builder.taken = _CountingSet({"a_5"})  # a user's own name in the way
    _CountingSet.probes = 0
    names = [builder.fresh("a", F32).name for _ in range(3000)]
    assert names[:7] == ["a", "a_1", "a_2", "a_3", "a_4", "a_6", "a_7"]
    assert len(set(names)) == 3000 and "a_5" not in names
    assert _CountingSet.probes < 2 * 3000 + 10  # was about 3000 * 3000 / 2


def test_a_static_for_of_ten_thousand_trips_elaborates_quickly():
    text = ("module m\nentry main(x: f32) -> f32 {\n    var a = x\n"
            "    static for i in 0..10000 {\n        a = a + 1.0\n    }\n    return a\n}\n")
    start = time.perf_counter()
    result = compile_source(text, path="m.linnet", passes=passes_for("torch")[:4])
    assert time.perf_counter() - start < 10.0  # was about 30 s
    main = result.text.func("main")
    assert len(main.body.binds) >= 10000


# ------------------------------------------------ growth: the six programs of benchmarks/limits.py
# Each test counts the calls of the step that was super-linear, at n and at 4n: linear work
# grows about 4 times, quadratic 16, cubic 64. Counting, not timing, keeps them steady on a
# busy machine.

_SPEC = importlib.util.spec_from_file_location(
    "limits_benchmark", Path(__file__).resolve().parents[2] / "benchmarks" / "limits.py")
BENCH = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(BENCH)


def _calls(monkeypatch, owner, name: str, run) -> int:
    """How many times run() calls owner.name (patched with a counting wrapper)."""
    original = getattr(owner, name)
    count = [0]

    def counting(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)
    monkeypatch.setattr(owner, name, counting)
    try:
        run()
    finally:
        monkeypatch.setattr(owner, name, original)
    return count[0]


def _growth(monkeypatch, owner, name: str, make, n: int) -> float:
    """Calls of owner.name at 4n over those at n."""
    small = _calls(monkeypatch, owner, name, make(n))
    return _calls(monkeypatch, owner, name, make(4 * n)) / max(small, 1)


def _to_elaborate(text: str):
    return lambda: compile_source(text, path="m.linnet", passes=passes_for("torch")[:4])


def test_joining_literal_arms_compares_each_value_a_bounded_number_of_times(monkeypatch):
    kind = LitT("float")

    def chain(n: int):
        def run() -> None:
            acc = Val(kind, fconst=-1.0)
            for i in range(n):
                acc = choice_of(kind, Val(kind, fconst=float(i % (n // 2))), acc)
        return run
    eq = _growth(monkeypatch, Val, "__eq__", chain, 200)
    hashes = _growth(monkeypatch, Val, "__hash__", chain, 200)
    assert eq < 6 and hashes < 6  # was cubic: a list scan per value per arm


def test_choice_of_keeps_first_seen_order_and_each_value_once():
    kind = LitT("int")
    one, two, three = (Val(kind, Dim.const(k)) for k in (1, 2, 3))
    inner = choice_of(kind, two, three)
    assert choice_of(kind, one, inner).alternatives == (one, two, three)
    assert choice_of(kind, three, inner).alternatives == (three, two)
    assert choice_of(kind, inner, one, two).alternatives == (two, three, one)
    assert choice_of(kind, one, one).alternatives == (one,)


def test_a_long_else_if_chain_of_literal_arms_checks(monkeypatch):
    growth = _growth(monkeypatch, Val, "__eq__",
                     lambda n: lambda: check_program("m.linnet", BENCH.literal_chain_text(n)),
                     50)
    assert growth < 6  # was cubic
    result = check_program("m.linnet", BENCH.literal_chain_text(800))  # was 44 s
    assert result.ok


def test_elaborating_an_else_if_chain_walks_each_branch_a_bounded_number_of_times(monkeypatch):
    growth = _growth(monkeypatch, elaborate_walks, "child_nodes",
                     lambda n: _to_elaborate(BENCH.computed_chain_text(n)), 40)
    assert growth < 6  # was quadratic: `assigned_outer` of every nested branch, per level


def test_dce_of_nested_blocks_reads_each_expression_a_bounded_number_of_times(monkeypatch):
    def program(n: int) -> ir.Program:
        return compile_source(BENCH.computed_chain_text(n), path="m.linnet",
                              passes=passes_for("torch")[:4]).text
    small, large = program(40), program(160)
    counts = [_calls(monkeypatch, traverse, "expr_atoms", lambda p=p: dce_module.dce(p))
              for p in (small, large)]
    assert counts[1] / counts[0] < 6  # was quadratic: the free variables of each level


def _nest(depth: int) -> ir.Block:
    """`if c { x } else { if c { x } else { ... x * 2 } }`, depth levels deep."""
    f32, b = ir.TType((), "f32"), ir.TType((), "bool")
    x, c = ir.Var("x", f32), ir.Var("c", b)
    v = ir.Var(f"v{depth}", f32)
    block = ir.Block((ir.Bind(v, ir.Prim("mul", (x, ir.Lit(2.0, f32)), f32)),), v)
    for k in range(depth - 1, -1, -1):
        v = ir.Var(f"v{k}", f32)
        block = ir.Block((ir.Bind(v, ir.If(c, ir.Block((), x), block, f32)),), v)
    return block


def test_walks_of_deeply_nested_blocks_need_no_deep_stack():
    block = _nest(5000)  # nested generators would pass each item through 5,000 frames
    assert [v.name for v in traverse.bound_vars(block)] == [f"v{k}" for k in range(5001)]
    assert sum(1 for _ in traverse.all_binds(block)) == 5001
    assert traverse.uses(block)["x"] == 5001


def test_where_clauses_are_each_coerced_a_bounded_number_of_times(monkeypatch):
    growth = _growth(monkeypatch, dims_module, "coerce_or_raise",
                     lambda n: lambda: check_program("m.linnet", BENCH.where_clauses_text(n)),
                     50)
    assert growth < 6  # was cubic: the other clauses assumed one by one, for each clause
    result = check_program("m.linnet", BENCH.where_clauses_text(1000))
    assert result.ok


def test_inlining_a_chain_of_fns_names_each_variable_once(monkeypatch):
    growth = _growth(monkeypatch, traverse.NameSupply, "fresh",
                     lambda n: lambda: compile_source(BENCH.chained_fns_text(n),
                                                      path="m.linnet", passes=passes_for("torch")[:7]),
                     40)
    assert growth < 6  # was quadratic: each fn inlined into the next, then copied whole


def test_inlined_names_follow_the_fully_inlined_callee():
    text = ("module m\nfn inner(x: f32) -> f32 {\n    let y = x * 2.0\n    return y\n}\n"
            "fn same(x: f32) -> f32 {\n    return x\n}\n"
            "fn mid(x: f32) -> f32 {\n    let a = inner(x)\n    let b = same(a)\n"
            "    let y = b + 1.0\n    return inner(y)\n}\n"
            "entry main(x: f32) -> f32 {\n    let y = mid(x)\n    let z = mid(y)\n"
            "    return z\n}\n")
    compiled = compile_source(text, path="m.linnet", passes=passes_for("torch")[:7])
    main = compiled.text.func("main")
    assert [str(b.var) for b in main.body.binds] == ["a_1", "y_1", "y", "a_2", "y_2", "z"]
    assert [str(a) for a in main.body.binds[1].expr.args] == ["a_1", "1.0:f32"]


def test_egraph_products_translates_no_body_without_a_product_or_math(monkeypatch):
    made = []

    class Counting(egraph_products._Translate):
        def __init__(self, *args) -> None:
            made.append(args)
            super().__init__(*args)
    monkeypatch.setattr(egraph_products, "_Translate", Counting)
    compile_source(BENCH.static_for_text(50), path="m.linnet", tuning=False)
    assert made == []  # 50 adds: an egglog call or two each, for nothing to run
    text = ("module m\nentry main(a: Tensor[4, 4; f32], b: Tensor[4, 4; f32]) -> Tensor[4, 4; f32] {\n"
            "    let c[i, j] = sum[k] a[i, k] * b[k, j]\n    return c\n}\n")
    compiled = compile_source(text, path="m.linnet", tuning=False)
    assert len(made) == 1 and "dot" in str(compiled.stage("egraph-products"))


def test_a_module_items_home_is_the_first_module_listing_it():
    result = compile_source(BENCH.leaves_text(3), path="m.linnet", passes=passes_for("torch")[:2])
    analysis = result.text
    (path, module), = analysis.program.modules.items()
    item = module.items[0]
    assert analysis.home_of(item) is analysis.modules[path]
    built = analysis._homes
    assert analysis.home_of(module.items[1]) is analysis.modules[path]
    assert analysis._homes is built  # one index for every lookup


# ------------------------------------- growth: lines of linnet run, the six programs to PyTorch

def _lines_run(text: str) -> Counter[str]:
    """Lines of linnet's own code run while compiling text to PyTorch, per file: a count of
    Python work that does not depend on the machine's load (a scope stack walked per lookup,
    a walk repeated per level, shows as a file whose count grows faster than the input)."""
    root = str(Path(linnet.__file__).parent)
    per: Counter[str] = Counter()

    def line(frame, event, arg):
        if event == "line":
            per[frame.f_code.co_filename] += 1
        return line

    def call(frame, event, arg):
        return line if frame.f_code.co_filename.startswith(root) else None

    def job() -> None:
        previous = sys.gettrace()  # a coverage tool's or debugger's, given back after
        sys.settrace(call)
        try:
            compile_source(text, path="m.linnet", target="torch", tuning=False)
        finally:
            sys.settrace(previous)
    call_with_deep_stack(job)
    return per


@pytest.mark.parametrize("program, n", [
    ("literal_chain_text", 50), ("computed_chain_text", 50), ("where_clauses_text", 50),
    ("chained_fns_text", 40), ("static_for_text", 200), ("leaves_text", 64)])
def test_each_file_runs_about_four_times_the_lines_at_four_times_the_size(program, n):
    make = getattr(BENCH, program)
    _lines_run(make(3))  # first-use work (caches, lazy imports) out of the counts
    small, large = _lines_run(make(n)), _lines_run(make(4 * n))
    assert sum(large.values()) / sum(small.values()) < 4.5
    grew = {Path(f).name: round(large[f] / small[f], 1) for f in small
            if small[f] > 2000 and large[f] / small[f] > 5}
    assert grew == {}  # the else-if chain's scope stacks grew 8 to 15 times (quadratic)
