"""`--grad` over the whole corpus: every entry with floating inputs and results, made into a
loss by a pass inserted before `differentiate` (the sum of every floating result, in f64),
is differentiated, verified after every pass, run from generated PyTorch on the corpus's
own input strategies, and compared with PyTorch autograd through the original entry's
generated module (numerics "exact": op bodies, grad clauses through their Functions).

The corpus's inputs lie on a coarse grid, so ties (`max` of equal values, `abs` at 0,
`select` on a comparison of equal values) are common; the tie rules of `passes/adjoint/rules.py`
follow PyTorch's, so gradients must agree there too. An entry whose `while` loop carries
floats that depend on an input must be refused with E2129.
`LINNET_GRAD_CORPUS_EXAMPLES` sets the number of examples per entry.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linnet.diagnostics import CompileError
from linnet.ir import tensor as ir
from linnet.passes.adjoint.differentiate import differentiate
from linnet.passes.manager import Instrumentation, Options, Pass, run_pipeline
from linnet.pipeline import compile_source, passes_for
from linnet.torch.runtime import import_generated

from tests.bodies import test_corpus_numpy as corpus  # noqa: E402

refs = corpus.refs
EXAMPLES = int(os.environ.get("LINNET_GRAD_CORPUS_EXAMPLES", 3))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])
FLOATS = ("f32", "f64")  # half dtypes are left to the body tests: their rounding dominates


def _leaves(ty: ir.Ty) -> list[tuple[tuple[int, ...], ir.TType]]:
    """(path, type) of each tensor inside a (possibly nested) tuple type."""
    if isinstance(ty, ir.TupleTy):
        return [((k, *p), t) for k, item in enumerate(ty.items) for p, t in _leaves(item)]
    return [((), ty)]


def wrap_loss(program: ir.Program, options) -> ir.Program:
    """A new entry: the old one called, and the sum of its floating results in f64."""
    old = program.func(program.entry)
    binds: list[ir.Bind] = []

    def let(name: str, expr: ir.Expr) -> ir.Var:
        var = ir.Var(f"{name}_{len(binds)}", expr.type)
        binds.append(ir.Bind(var, expr))
        return var

    f64 = ir.TType((), "f64")
    total: ir.Atom = ir.Lit(0.0, f64)
    result = let("r", ir.Call(old.name, tuple(old.params), old.body.result.type))
    for path, ty in _leaves(result.type):
        if ty.dtype not in FLOATS:
            continue
        value: ir.Atom = result
        for k in path:
            value = let("item", ir.GetItem(value, k, value.type.items[k]))
        axes = tuple(range(ty.rank))
        value = let("sum", ir.Prim("reduce_sum", (value,), ir.TType((), ty.dtype),
                                   (("axes", axes),)))
        value = let("wide", ir.Prim("cast", (value,), f64))
        total = let("total", ir.Prim("add", (total, value), f64))
    entry = ir.Func("loss_of_entry", "entry", old.params, ir.Block(tuple(binds), total))
    return replace(program, funcs=program.funcs + (entry,), entry=entry.name)


def _differentiate(program: ir.Program, options) -> ir.Program:
    """`differentiate` as under `--grad` (the front end's own --grad checks, which would
    refuse the entry before it is wrapped, are left out: numerics "exact" drops kernels)."""
    return differentiate(program, replace(options, grad=True))


def _split() -> tuple[list[Pass], list[Pass]]:
    """The torch pipeline cut before `differentiate`: the passes before, and those from it."""
    passes = passes_for("torch")
    at = [p.name for p in passes].index("differentiate")
    return passes[:at], passes[at:]


def _grad_passes() -> list[Pass]:
    """The torch pipeline's passes from `differentiate` on, the entry first wrapped into a
    loss, then differentiated."""
    _, rest = _split()
    return [Pass("wrap-loss", "the sum of the entry's floating results", "tensor-core",
                 "tensor-core", wrap_loss),
            replace(rest[0], run=_differentiate, skipped=None)] + rest[1:]


_MODULES: dict[tuple, object] = {}
_CUT: dict[tuple, tuple[ir.Program, Options]] = {}
"""Each compiled binding's program where the pipeline was cut, with the options it ran
under: the differentiated module's compile goes on from there, so the front end and the
passes before `differentiate` run once for both modules."""
SHOWN = Instrumentation(verify_each=True, emit=lambda text: None)


def module(key: tuple[str, str], values: dict[str, object], grad: bool):
    """The entry's generated module for one binding (grad: the loss's, differentiated), each
    compiled once and verified after every pass. The plain one is compiled first."""
    cache = (*key, tuple(sorted((k, str(v)) for k, v in values.items())))
    if (*cache, grad) not in _MODULES:
        _MODULES[(*cache, grad)] = import_generated(
            _differentiated(cache) if grad else _plain(key, values, cache),
            f"grad_corpus_{key[1]}")
    return _MODULES[(*cache, grad)]


def _plain(key: tuple[str, str], values: dict[str, object], cache: tuple) -> str:
    """The plain module's text, by the torch pipeline with a pass at the cut that keeps
    the program there (and changes nothing)."""
    def keep(program: ir.Program, options: Options) -> ir.Program:
        _CUT[cache] = program, options
        return program
    before, rest = _split()
    path = corpus.PATHS[key[0]]
    out = compile_source(path.read_text(), path=str(path), target="torch", entry=key[1],
                         bind=values, numerics="exact", shown=SHOWN, passes=before + [
                             Pass("keep", "the program before differentiate", "tensor-core",
                                  "tensor-core", keep)] + rest)
    return out.text


def _differentiated(cache: tuple) -> str:
    """The differentiated module's text: the grad passes on the program kept at the cut."""
    program, options = _CUT[cache]
    return run_pipeline(_grad_passes(), program, options, SHOWN).ir


@pytest.mark.parametrize("key", [corpus._param(k) for k in corpus.KEYS])
@SETTINGS
@given(data=st.data())
def test_every_corpus_entry_differentiates_like_autograd(key, data) -> None:
    inputs = data.draw(refs.REFERENCES[key].inputs, label="inputs")
    tensors = [corpus.to_torch(x) for x in inputs]
    values = corpus.entry_function(key, False).binding_for(tuple(tensors))
    leaves = [t.clone().requires_grad_() if x.dtype in FLOATS else t
              for t, x in zip(tensors, inputs)]
    results = module(key, values, grad=False).main(*leaves)
    loss = sum(r.double().sum() for r in results if str(r.dtype)[6:] in ("float32", "float64"))
    if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
        return  # no f32/f64 result depends on an f32/f64 input: nothing to compare
    loss.backward()
    try:
        differentiated = module(key, values, grad=True)
    except CompileError as err:  # a while loop carrying floats that depend on an input
        assert [d.code for d in err.diagnostics] == ["E2129"], err.diagnostics
        assert "while" in corpus.PATHS[key[0]].read_text()
        return
    got_loss, *grads = differentiated.main(*tensors)
    torch.testing.assert_close(got_loss, loss.detach(), rtol=1e-5, atol=1e-6, equal_nan=True)
    floats = [k for k, x in enumerate(inputs) if x.dtype in FLOATS + ("f16", "bf16")]
    assert len(grads) == len(floats)
    for g, k in zip(grads, floats):
        want = leaves[k].grad if leaves[k].grad is not None else torch.zeros_like(tensors[k])
        if inputs[k].dtype in FLOATS:
            torch.testing.assert_close(g, want, rtol=1e-4, atol=1e-5, equal_nan=True,
                                       msg=lambda m: f"gradient of input {k}: {m}")
