"""The generator's differentiated block entries (`GeneratorConfig(grad=True,
block_grad=True)`): every program checks, its first entry is a root block's returning one
floating scalar, its cells add loss terms through an optional param and an op with a
`grad` clause called from a block `fn`, its cases' inputs are the compiled entry's in
manifest order at the case's checkpoint paths, and the rest of the program is what the
seed gives without the flag.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest

from linnet.syntax import tree as t
from linnet.syntax.parser import parse
from linnet.syntax.printer import print_module
from linnet.fuzz.programs import GeneratorConfig, generate

BLOCK_GRAD = GeneratorConfig(grad=True, block_grad=True)
GRAD = GeneratorConfig(grad=True)


def _root(module: t.Module) -> t.BlockDef:
    (root,) = [i for i in module.items if isinstance(i, t.BlockDef)
               and any(isinstance(m, t.Function) and m.kind == "entry" for m in i.members)]
    return root


def _member(block: t.BlockDef, name: str):
    return next(m for m in block.members if getattr(m, "name", None) == name)


def test_block_grad_needs_grad():
    with pytest.raises(ValueError, match="needs grad"):
        GeneratorConfig(block_grad=True)


def test_every_program_checks_and_its_first_entry_is_a_block_loss():
    """50 seeds: each program checks (`generate` raises otherwise) and prints back; `main`
    is the entry of a root block and returns one floating scalar (the loss `--grad`
    differentiates), to which `first` and each cell of `cells` add their `term()`."""
    for seed in range(50):
        prog = generate(seed, BLOCK_GRAD)
        module, diagnostics = parse(prog.text, "fuzz.linnet")
        assert not diagnostics and print_module(module) == prog.text, seed
        root = _root(module)
        main = _member(root, "main")
        # one scalar, or no `-> T` at all (the generator's untyped form: its body says)
        assert main.result is None or isinstance(main.result, t.TypeName), seed
        returned = main.body[-1].value
        assert isinstance(returned, t.Binary) and returned.op == "+", seed
        total = returned.right if isinstance(returned.right, t.Name) else \
            returned.right.args[0].value  # cast<F>(lt) for a dtype generic loss
        decl = next(s for s in main.body if isinstance(s, t.VarDecl) and s.name == total.id)
        assert decl.value == t.MemberCall(t.Name("first"), "term", None, ()), seed
        assert prog.cases[0].entry == "main"


def test_cells_hold_an_optional_bias_read_through_an_op_with_a_grad_clause():
    """The cell's `term()` matches on its optional param `bias`, calling an op whose `grad`
    clause is written by grads.py; the op's body sums over the bias."""
    prog = generate(3, BLOCK_GRAD)
    module, _ = parse(prog.text, "fuzz.linnet")
    cell = next(i for i in module.items if isinstance(i, t.BlockDef) and i.name.startswith(
        "Cell"))
    bias = _member(cell, "bias")
    assert bias.kind == "param" and isinstance(bias.type, t.OptionalType)
    assert isinstance(bias.init, t.NoneLit)
    term = _member(cell, "term")
    match = term.body[-1].value
    assert isinstance(match, t.Match) and match.scrutinee == t.Name("bias")
    op_name = match.arms[0].value.callee
    op = next(i for i in module.items if isinstance(i, t.Op) and i.name == op_name)
    assert op.grad is not None and isinstance(op.body[-1].value, t.Reduce)


def test_the_constructs_appear_and_presence_varies():
    seen: Counter = Counter()
    presents = set()
    arrays = set()
    for seed in range(60):
        prog = generate(seed, BLOCK_GRAD, check=False)
        seen.update(prog.constructs)
        presents.add(len(prog.cases[0].present or ()))
        root = _root(prog.module)
        arrays.add(_member(root, "cells").type.count.value)
    for construct in ("block", "block:grad_term", "grad:block_fn", "optional:param",
                      "optional:param_present", "block:sub_array", "block:empty_array",
                      "loss", "grad"):
        assert seen[construct], construct
    assert seen["block"] == 60  # always a block: struct parameters stay out of `main`
    assert {0, 1, 2} <= presents and arrays == {0, 1, 2, 3}


def test_inputs_are_the_compiled_entry_s_in_manifest_order():
    """Each case's inputs: the entry's own, then one per present param, buffer and state in
    the compiler's manifest order at the case's checkpoint paths (a present `bias` is an
    input, an absent one is not), each of its shape and dtype."""
    from linnet.pipeline import compile_source
    from linnet.fuzz.oracle.dtypes import dtype_name
    for seed in range(12):
        prog = generate(seed, BLOCK_GRAD)
        case = prog.cases[0]
        manifest = compile_source(prog.text, entry="main", bind=dict(case.generics),
                                  target="torch", present=case.present).parameters
        held = manifest.inputs
        own = len(case.inputs) - len(held)
        assert own >= 0
        for p, x in zip(held, case.inputs[own:]):
            assert (tuple(x.shape), dtype_name(x)) == (p.shape, p.dtype), (seed, p.path)
        biases = {p.path for p in held if p.path.endswith(".bias")}
        assert biases == set(case.present or ()), seed


def test_the_seed_s_program_is_the_one_without_the_flag_plus_the_block():
    """`block_grad` changes nothing but the model layer: the helpers and a second entry
    are the same items, and the block entry's body holds the plain entry's statements in
    order (after the block's prefix, before the loss terms), its loss plus the terms."""
    for seed in range(30):
        plain, block = generate(seed, GRAD), generate(seed, BLOCK_GRAD)
        items = {_key(i): i for i in plain.module.items}
        kept = [i for i in block.module.items if _key(i) in items]
        assert all(items[_key(i)] == i for i in kept if _key(i)[0] in ("op", "fn")), seed
        main = next(i for i in plain.module.items if isinstance(i, t.Function)
                    and i.name == "main")
        entry = _member(_root(block.module), "main")
        body = [s for s in main.body if not _struct_read(s)]
        start = next(k for k, s in enumerate(entry.body) if s == body[0])
        assert list(entry.body[start:start + len(body) - 1]) == body[:-1], seed
        assert entry.body[-1].value.left == body[-1].value, seed


def _key(item) -> tuple[str, str]:
    return (getattr(item, "kind", type(item).__name__), item.name)


def _struct_read(stmt) -> bool:
    """`let x = inp0.x`: a struct parameter's field read (struct parameters stay out of a
    differentiated block entry)."""
    return isinstance(stmt, t.Let) and isinstance(stmt.value, t.Field) \
        and isinstance(stmt.value.base, t.Name) and stmt.value.base.id.startswith("inp")


def test_the_same_seed_gives_the_same_program_and_case():
    a, b = generate(21, BLOCK_GRAD), generate(21, BLOCK_GRAD)
    assert a.text == b.text and a.cases[0].present == b.cases[0].present
    for x, y in zip(a.cases[0].inputs, b.cases[0].inputs):
        assert np.array_equal(x.astype(np.float64), y.astype(np.float64))
