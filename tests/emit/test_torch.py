"""emit-torch: the generated module's text, its names and comments, and the module cache.

The semantics of every primitive and control-flow node, run through both the generated
module and the interpreter, are tested in `tests/torch/test_interpreter.py`.
"""

from __future__ import annotations

import ast
import io
import inspect
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
import torch

import linnet.torch as linnet_torch
from linnet.emit import emit_torch
from linnet.emit import torch_ops as ops
from linnet.ir import tensor as ir
from linnet.ir.program_state import ProgramState
from linnet.torch import runtime
from linnet.torch.interpreter import run
from linnet.torch.runtime import import_generated


def T(dtype: str, *shape: int) -> ir.TType:
    return ir.TType(tuple(shape), dtype)


def V(name: str, ty: ir.Ty) -> ir.Var:
    return ir.Var(name, ty)


def bind(var: ir.Var, expr: ir.Expr) -> ir.Bind:
    return ir.Bind(var, expr)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path / "cache"))


EVIL = "secret_zebra\n import os; os.system('echo pwned')\r\x00\u2028\u00e9 */ \"\"\""


def evil_program() -> ir.Program:
    """User names everywhere a name can be: variables, functions, sources, meta, loop indices."""
    f32 = T("f32", 3)
    a, b = V("secret_alpha", f32), V("secret_beta" + EVIL, f32)
    s = V("secret_sum", f32)
    op = ir.Func("user_giraffe" + EVIL, "op", (a, b),
                 ir.Block((bind(s, ir.Prim("add", (a, b), f32)),), s), source="mod.giraffe<" + EVIL)
    x = V("secret_input", f32)
    h, i = V("secret_carry", f32), V("secret_index", T("i64"))
    h2 = V("secret_next" + EVIL, f32)
    y = V("secret_yield", ir.TupleTy((f32, f32)))
    body = ir.Block((bind(h2, ir.Call(op.name, (h, x), f32)),
                     bind(y, ir.MakeTuple((h2, h2), ir.TupleTy((f32, f32))))), y)
    tt = ir.TupleTy((f32, T("f32", 2, 3)))
    r = V("secret_scan", tt)
    last = V("secret_last", f32)
    c = V("secret_cond", T("bool"))
    out = V("secret_out", f32)
    neg = V("secret_neg", f32)
    main_body = ir.Block((
        bind(r, ir.Loop(i, 0, 2, (h,), (x,), body, tt, yields=True)),
        bind(last, ir.GetItem(r, 0, f32)),
        bind(c, ir.Prim("gt", (ir.Lit(1, T("i32")), ir.Lit(0, T("i32"))), T("bool"))),
        bind(out, ir.If(c, ir.Block((bind(neg, ir.Prim("neg", (last,), f32)),), neg),
                        ir.Block((), last), f32)),
    ), out)
    main = ir.Func("secret_main" + EVIL, "entry", (x,), main_body, source="secret_entry " + EVIL)
    return ir.Program((op, main), main.name,
                      ProgramState(source="/home/secret_user/" + EVIL))


def code_tokens(source: str) -> list[tokenize.TokenInfo]:
    return [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)]


def test_no_user_text_reaches_code_outside_comments():
    source = emit_torch(evil_program())
    assert source.isascii()
    code = " ".join(t.string for t in code_tokens(source))
    for word in ("secret", "giraffe", "pwned", "import os", "zebra"):
        assert word not in code
    assert "secret_alpha" in source  # in comments, where it helps a reader
    # every physical line is either code or a whole comment: nothing escaped a comment
    for line in source.splitlines():
        if "secret" in line or "pwned" in line:
            assert "#" in line and all(w not in line.split("#", 1)[0] for w in ("secret", "pwned"))
    # every name the printer makes (functions, parameters, assignments, loop variables) is
    # mangled from a fixed alphabet; the `_ln_*` helpers are fixed text from the table
    mangled = re.compile(r"^(v\d+|c\d+|a\d+|r|_d|inputs|f\d+_(entry|op|fn)|main)$")
    made = set()
    for fn in ast.parse(source).body:
        if isinstance(fn, ast.FunctionDef) and not fn.name.startswith("_ln_"):
            made.add(fn.name)
            made.update(a.arg for a in fn.args.args + ([fn.args.vararg] if fn.args.vararg else []))
            made.update(n.id for n in ast.walk(fn) if isinstance(n, ast.Name))
    made -= {"torch", "bool", "len", "range", "TypeError"} | {n for n in ops.HELPERS}
    assert made and all(mangled.match(n) for n in made), sorted(made)
    # and the module runs, the same as the interpreter
    module = import_generated(source, "evil")
    x = torch.tensor([1.0, 2.0, 3.0])
    (out,) = module.main(x)
    assert out.tolist() == [-3.0, -6.0, -9.0]
    assert torch.equal(run(evil_program(), x)[0], out)


def test_comments_are_sanitized():
    assert ops is not None
    from linnet.emit.torch import comment
    text = comment("a\nb\rc\x00d\u2028e\u00e9f\tg")
    assert "\n" not in text and "\r" not in text and text.isascii() and text.isprintable()
    assert text == "a\\nb\\rc\\x00d\\u2028e\\xe9f\\tg"


def test_module_layout_and_determinism():
    prog = evil_program()
    source = emit_torch(prog)
    assert source == emit_torch(prog)
    assert source.startswith("# Generated by Linnet: a PyTorch module for the entry")
    assert "# Compiled from /home/secret_user/" in source
    tree = ast.parse(source)
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [(type(n).__name__, [a.name for a in n.names]) for n in imports] == [("Import", ["torch"])]
    top = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert top[-3:] == ["f0_op", "f1_entry", "main"]
    assert all(n.startswith("_ln_") for n in top[:-3])
    assert "torch.stack(" in source and "for v" in source and "if bool(" in source


def test_importing_the_generated_module_needs_only_torch(tmp_path):
    path = runtime.source_path(emit_torch(evil_program()), "standalone")
    import_generated(emit_torch(evil_program()), "standalone")
    assert path.exists()
    script = (
        "import sys, importlib.util\n"
        "sys.modules['linnet'] = None\n"  # any import of linnet now fails
        f"spec = importlib.util.spec_from_file_location('gen', {str(path)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "import torch\n"
        "print(m.main(torch.tensor([1.0, 2.0, 3.0]))[0].tolist())\n"
        "print(sorted(k for k in sys.modules if k.split('.')[0] == 'linnet'))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[-3.0, -6.0, -9.0]", "['linnet']"]


def test_module_cache_writes_a_file_and_imports_it(tmp_path):
    source = emit_torch(evil_program())
    m1 = import_generated(source, "cached entry!")
    m2 = import_generated(source, "cached entry!")
    assert m1 is m2
    path = Path(m1.__file__)
    assert path.parent == tmp_path / "cache" / "torch" and path.name.startswith("cached_entry__")
    assert path.read_text() == source
    assert "def main(*inputs):" in inspect.getsource(m1.main)  # what @triton.jit needs
    other = import_generated(source + "\n# changed\n", "cached entry!")
    assert other is not m1 and Path(other.__file__) != path


def test_default_cache_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("LINNET_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert runtime.cache_dir() == tmp_path / "home" / ".cache" / "linnet"
    assert os.path.isdir(tmp_path / "home" / ".cache" / "linnet")


def test_loader_docstrings_say_how_generics_are_bound():
    doc = linnet_torch.load_function.__doc__
    assert "binding" in doc and "interpreter" in doc
    assert linnet_torch.load.__doc__


def _prog(*binds: ir.Bind, params=(), result=None, funcs=()) -> ir.Program:
    body = ir.Block(tuple(binds), result if result is not None else binds[-1].var)
    return ir.Program((ir.Func("main", "entry", tuple(params), body),) + tuple(funcs), "main")


def test_malformed_ir_is_rejected_when_printing():
    x = V("x", T("f32", 2))
    y = V("y", T("f32", 2))
    with pytest.raises(ValueError, match="unknown function"):
        emit_torch(_prog(bind(y, ir.Call("nowhere", (x,), x.type)), params=[x]))
    with pytest.raises(ValueError, match="unknown primitive"):
        emit_torch(_prog(bind(y, ir.Prim("launch_missiles", (x,), x.type)), params=[x]))
    with pytest.raises(ValueError, match="before it is bound"):
        emit_torch(_prog(bind(y, ir.Prim("neg", (x,), x.type))))
    with pytest.raises(ValueError, match="einsum spec"):
        emit_torch(_prog(bind(y, ir.Einsum("i->i'); import os; ('", (x,), x.type)), params=[x]))
    with pytest.raises(ValueError, match="integer"):
        emit_torch(_prog(bind(y, ir.Prim("permute", (x,), x.type, (("perm", ("0",)),))), params=[x]))
    with pytest.raises(TypeError):
        emit_torch(_prog(result=ir.Lit("0); import os; (", T("i32"))))
    with pytest.raises(ValueError, match="lower-index-notation"):
        emit_torch(_prog(bind(y, ir.Comprehension((("i", 2),), ir.IxAccess(x, ("i",), "f32"),
                                                  x.type)), params=[x]))


def test_generated_code_reads_like_torch():
    a, b = V("a", T("f32", 2, 3)), V("b", T("f32", 3, 4))
    c = V("c", T("f32", 2, 4))
    u = V("u", T("u32", 2))
    w = V("w", T("u32", 2))
    source = emit_torch(_prog(bind(c, ir.Einsum("ik,kj->ij", (a, b), c.type, "f32")),
                              bind(w, ir.Prim("add", (u, u), u.type)),
                              bind(V("t", ir.TupleTy((c.type, u.type))),
                                   ir.MakeTuple((c, w), ir.TupleTy((c.type, u.type)))),
                              params=[a, b, u]))
    assert "v3 = torch.einsum('ik,kj->ij', v0, v1)" in source
    assert "v4 = ((v2 + v2) & 0xffffffff)" in source  # u32 held in int64, masked
    assert "_ln_arg(inputs[2], torch.uint32, torch.int64, (2,), _d)" in source
    module = import_generated(source, "reads")
    out, s = module.main(torch.ones(2, 3), torch.ones(3, 4), torch.tensor([2**31, 5], dtype=torch.uint32))
    assert out.tolist() == [[3.0] * 4] * 2
    assert s.dtype == torch.uint32 and s.to(torch.int64).tolist() == [0, 10]


def test_literals_are_made_once_and_results_never_share_them(tmp_path):
    """A literal is a 0-d tensor made at its first use and shared by later calls (made at
    each call, it would be copied from the host, which waits for the GPU); a result that
    is one, or a view of one, is copied, so writing into it changes no later call."""
    lit = ops.helper_namespace()["_ln_lit"]
    cpu = torch.device("cpu")
    assert lit(1.5, torch.float32, cpu) is lit(1.5, torch.float32, cpu)
    assert lit(1.5, torch.float64, cpu) is not lit(1.5, torch.float32, cpu)
    negative_zero = lit(-0.0, torch.float32, cpu)
    assert torch.signbit(negative_zero) and not torch.signbit(lit(0.0, torch.float32, cpu))
    path = tmp_path / "lits.linnet"
    path.write_text("module lits\n\nentry main() -> (f32, Tensor[1; f32]) {\n"
                    "    let h: f32 = 2.5\n    return (h, broadcast_to(h, [1]))\n}\n")
    main = linnet_torch.load_function(str(path), "main")
    text = main.source()
    assert "_ln_lit(2.5, torch.float32, _d)" in text and "torch.tensor(2.5" not in text
    first = main()
    for y in first:
        y.add_(1.0)
    assert [float(y) for y in main()] == [2.5, 2.5]
