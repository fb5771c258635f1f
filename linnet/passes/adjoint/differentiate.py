"""differentiate: under `--grad`, the entry's reverse mode (tensor-core -> tensor-core).

The entry is replaced by one with the same parameters that returns the loss (the entry's
one floating scalar) and then, by reverse mode, the gradient of the loss with respect to
each floating parameter (f16, bf16, f32 or f64, scalar or tensor), in parameter order.
A parameter the loss does not depend on gets zeros.

Program surgery, before differentiating:
- every call of an op without a `grad` clause, or of another entry, is replaced by the
  callee's body (recursively), so that body is differentiated where it is used;
- each op with a clause that the entry calls keeps its call, and its clause becomes a
  Func of the program (`<op>__grad`, kind "op", a plain function to the printers), which
  the adjoint calls: the clause gives the gradient of the op's floating tensor parameters;
  its other parameters, floating scalars included, take none (docs/language.md, "Gradients").

The reverse sweep itself is `passes/adjoint/reverse.py` (blocks, calls, If), `passes/adjoint/loops.py`
(counted loops and scans) and `passes/adjoint/rules.py` (one rule per primitive).
"""

from __future__ import annotations

from dataclasses import replace

from ...diagnostics import NO_SPAN, CompileError, Diagnostic
from ...ir import tensor as ir
from ...ir.program_state import GradNote
from .emit import Emitter, is_float, lit
from .reverse import Reverse
from .values import Adjoints
from ..middle.inline_fns import Inliner
from ..traverse import NameSupply, func_names


def differentiate(program: ir.Program, options) -> ir.Program:
    """The program whose entry returns (loss, d loss / d each floating input)."""
    if not getattr(options, "grad", False):
        return program
    entry = program.func(program.entry)
    manifest = program.state.parameters
    entry, states = _split_states(entry, manifest)
    _check_loss(entry)
    entry = _inline_ops_without_grad(program, entry)
    funcs, grads = _grad_funcs(program, entry)
    frozen = _not_trained(manifest)
    body = _reverse_body(entry, {f.name: f for f in funcs}, grads, frozen, states)
    new_entry = replace(entry, body=body)
    wrt = tuple(p.name for p in entry.params if is_float(p.type) and p.name not in frozen)
    return replace(program, funcs=tuple(new_entry if f.name == entry.name else f
                                        for f in funcs),
                   state=program.state.set(grad=GradNote(wrt)))


def _check_loss(entry: ir.Func) -> None:
    """The front end reports this with a span (E2128); this guards hand-built IR."""
    ty = entry.body.result.type
    if not (is_float(ty) and ty.rank == 0):
        raise CompileError([Diagnostic(
            "E2128", f"--grad: the entry returns {ty}, not one floating scalar", NO_SPAN)])


def _inline_ops_without_grad(program: ir.Program, entry: ir.Func) -> ir.Func:
    """The entry with every call of an op that has no grad clause, or of another entry,
    replaced by its body (the inliner of `inline-fns`, given those instead of the fns)."""
    plain = {f.name: f for f in program.funcs
             if f.kind in ("op", "entry") and f.grad is None and f.name != entry.name}
    return Inliner(plain, {}).func(entry) if plain else entry


def _grad_funcs(program: ir.Program, entry: ir.Func) -> tuple[list[ir.Func], dict[str, str]]:
    """The program's Funcs plus a Func for the grad clause of each op with one; and the
    map from such an op's name to its clause's Func name."""
    funcs = list(program.funcs)
    taken = {f.name for f in funcs}
    grads: dict[str, str] = {}
    for f in program.funcs:
        if f.kind == "op" and f.grad is not None:
            name = f.name + "__grad"
            name = name if name not in taken else NameSupply(taken).fresh(name)
            taken.add(name)
            grads[f.name] = name
            funcs.append(replace(f.grad, name=name, kind="op", grad=None, kernel=None,
                                 source=f"grad clause of {f.source or f.name}"))
    return funcs, grads


def _split_states(entry: ir.Func, manifest) -> tuple[ir.Func, tuple[ir.Atom, ...]]:
    """A block entry that assigns states returns `(loss, next states...)`: the entry
    returning the loss alone, and the next states (kept after the gradients)."""
    if manifest is None or not manifest.assigned:
        return entry, ()
    binds = entry.body.binds
    last = binds[-1] if binds else None
    if last is None or last.var != entry.body.result or not isinstance(last.expr, ir.MakeTuple):
        raise CompileError([Diagnostic(
            "E2190", "not implemented yet: --grad of this block entry (its results are not "
            "one tuple of the loss and the next states)", NO_SPAN)])
    loss, *states = last.expr.items
    return replace(entry, body=replace(entry.body, binds=binds[:-1], result=loss)), \
        tuple(states)


def _not_trained(manifest) -> frozenset[str]:
    """A block entry's buffers and states: floating inputs that take no gradient."""
    if manifest is None:
        return frozenset()
    return frozenset(p.input for p in manifest.inputs if p.kind != "param")


def _reverse_body(entry: ir.Func, funcs: dict[str, ir.Func], grads: dict[str, str],
                  frozen: frozenset[str] = frozenset(), states: tuple = ()) -> ir.Block:
    """The entry's body, then its adjoint sweep seeded with d loss / d loss = 1 (and after
    the gradients, a block entry's next states)."""
    em = Emitter(NameSupply(func_names(entry)))
    active = {p for p in entry.params if is_float(p.type) and p.name not in frozen}
    rev = Reverse(em, active, funcs, grads)
    adj = Adjoints(em, rev.active)
    loss = entry.body.result
    rev.differentiate(entry.body, lit(1.0, loss.type.dtype), adj)
    results = [loss] + [adj.get(p) or em.zeros(p.type) for p in entry.params
                        if p in active] + list(states)
    ty = ir.TupleTy(tuple(a.type for a in results))
    return em.close(em.emit(ir.MakeTuple(tuple(results), ty), "loss_and_grads"))
