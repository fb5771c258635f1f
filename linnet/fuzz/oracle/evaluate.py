"""The oracle's entry points: evaluate a case, or a program's text, entry and inputs.

The program is parsed and checked by the front end (`linnet.syntax`, `linnet.check`), whose
instance of the entry gives every node's concrete type; everything after that is this
package's own NumPy evaluation of the surface tree, sharing nothing with the lowering, the
printers or the runtimes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from ...check.instance import Analysis, analyze_program, binding_from_values
from ...check.signatures import Binding
from ...check.types import DTYPES
from ...deepstack import call_with_deep_stack
from ...syntax.program import load_program
from ...syntax import tree as t
from ..case import Case
from .blocks import BlockEntry, block_entry, root_block, run_block_entry
from .calls import Machine
from .dtypes import FLOAT, Precision, to_dtype
from .errors import OracleError
from .values import flatten, gather, leaf_types

DEFAULT_PATH = "oracle_case.linnet"
PLANS_KEPT = 16  # per analysis


def evaluate(case: Case, precision: str = "native", path: str = DEFAULT_PATH, *,
             tanh_skew: float = 0.0) -> tuple[np.ndarray, ...]:
    """The entry's results on the case's inputs: one array per result, in the result
    dtypes (every float in f64 when `precision="f64"`). A block entry's results are
    followed by the next value of each state it assigns; `case.present` says which of its
    optional members the checkpoint holds. `tanh_skew`: see `Precision`."""
    return evaluate_source(case.text, case.entry, case.generics, case.inputs,
                           precision=precision, path=path, present=case.present,
                           tanh_skew=tanh_skew)


def evaluate_source(text: str, entry: str, generics: Mapping[str, object],
                    inputs: Sequence, *, precision: str = "native",
                    path: str = DEFAULT_PATH, root: str | None = None,
                    present: frozenset[str] | None = None,
                    tanh_skew: float = 0.0) -> tuple[np.ndarray, ...]:
    """As `evaluate`, without a Case. `path` places the file, for the modules it `use`s;
    `root` names the root block when several blocks have entries (as `--root`);
    `present` holds the parameter paths of the checkpoint (None: no optional member)."""
    if precision not in ("native", "f64"):
        raise ValueError(f"precision is 'native' or 'f64', not {precision!r}")
    analysis = _analysis(path, text)
    machine = Machine(analysis, Precision(f64=precision == "f64", tanh_skew=tanh_skew))
    plan = _kept_plan(analysis, machine, entry, generics, root, present)
    if plan.block is None:
        args = _inputs(plan.inst, inputs, machine.prec)
        result = call_with_deep_stack(lambda: machine.run(plan.inst, args))
        return results_of(plan.inst.signature.result, result, machine.prec)
    own = plan.own_inputs
    if len(inputs) != own + len(plan.block.inputs):
        raise OracleError(f"`{entry}` takes {own} inputs and {len(plan.block.inputs)} "
                          f"parameters, got {len(inputs)} inputs in all")
    args = _inputs(plan.inst, inputs[:own], machine.prec)
    params = tensor_inputs([m.path for m in plan.block.inputs],
                           [m.type for m in plan.block.inputs], inputs[own:], machine.prec,
                           entry)
    result, states = call_with_deep_stack(
        lambda: run_block_entry(machine, plan.block, plan.inst, args, params))
    by_path = {m.path: m for m in plan.block.parameters}
    return results_of(plan.inst.signature.result, result, machine.prec) + tuple(
        np.asarray(v).astype(machine.prec.np(by_path[p].type.dtype), copy=False)
        for p, v in zip(plan.block.assigned, states))


@dataclass
class _Plan:
    """What an entry needs: its instance, and for a block entry its tree and parameters."""
    inst: object
    block: BlockEntry | None = None

    @property
    def own_inputs(self) -> int:
        return sum(1 for ty in self.inst.signature.params for _ in leaf_types(ty))


def _kept_plan(analysis: Analysis, machine: Machine, name: str,
               generics: Mapping[str, object], root: str | None,
               present: frozenset[str] | None) -> _Plan:
    """`_plan`, made once per entry, generics and presence and kept on the analysis (as the
    instances are): `gradient_fd` evaluates the same entry twice per input element, and a
    block entry's tree costs more to build than a small entry takes to run. A plan is only
    read by the runs that use it (each block entry run has a store of its own)."""
    plans = getattr(analysis, "_oracle_plans", None)
    if plans is None:
        plans = analysis._oracle_plans = {}  # type: ignore[attr-defined]
    key = (name, tuple(sorted((k, repr(v)) for k, v in generics.items())), root, present)
    found = plans.get(key)
    if found is None:
        found = plans[key] = _plan(analysis, machine, name, generics, root, present)
        while len(plans) > PLANS_KEPT:  # the oldest first: a fuzzer draws many bindings
            del plans[next(iter(plans))]
    return found


def _plan(analysis: Analysis, machine: Machine, name: str, generics: Mapping[str, object],
          root: str | None, present: frozenset[str] | None = None) -> _Plan:
    item = _module_entry(analysis, name)
    if item is not None:
        return _Plan(machine.instance(item, _binding(item.generics, generics, item.name)))
    info = root_block(analysis, root)
    fn = info.fns.get(name) if info is not None else None
    if fn is None or fn.kind != "entry":
        raise OracleError(f"no entry named `{name}`")
    block_generics = tuple(info.item.generics)
    values = _binding(block_generics + tuple(fn.generics), generics, name)
    block_values = Binding({k: v for k, v in values.dims.items() if k in info.generics},
                           {k: v for k, v in values.dtypes.items() if k in info.generics})
    own = Binding({k: v for k, v in values.dims.items() if k not in info.generics},
                  {k: v for k, v in values.dtypes.items() if k not in info.generics})
    block = block_entry(analysis, info, fn, block_values, present)
    return _Plan(machine.block_instance(block.node, fn, own), block)


def results_of(ty, result, prec: Precision) -> tuple[np.ndarray, ...]:
    """An entry's value as a backend returns it: one array per result (a tuple spread, a
    struct as its fields), each in its result dtype."""
    leaves = list(leaf_types(ty))
    values = flatten(result, ty)
    return tuple(np.asarray(to_dtype(v, leaf.dtype, prec)).astype(prec.np(leaf.dtype),
                                                                   copy=False)
                 for v, leaf in zip(values, leaves))


@functools.lru_cache(maxsize=64)
def _analysis(path: str, text: str) -> Analysis:
    program = load_program(path, text)
    if program.diagnostics:
        raise OracleError(f"the program does not parse: {_first(program.diagnostics)}")
    analysis = call_with_deep_stack(lambda: analyze_program(program))
    if analysis.diagnostics:
        raise OracleError(f"the program has errors: {_first(analysis.diagnostics)}")
    return analysis


def _first(diagnostics) -> str:
    d = diagnostics[0]
    return f"{d.code} {d.message}"


def _module_entry(analysis: Analysis, name: str) -> t.Function | None:
    for item in analysis.program.root_module.items:
        if isinstance(item, t.Function) and item.kind == "entry" and item.name == name:
            return item
    return None


def _binding(declared: tuple[t.Generic, ...], generics: Mapping[str, object], what: str):
    dims, dtypes, packs = {}, {}, {}
    for g in declared:
        value = generics[g.name] if g.name in generics else _default(g)
        if g.kind == "Dim":
            dims[g.name] = int(value)  # type: ignore[arg-type]
        elif g.kind == "Shape":
            packs[g.name] = _pack(value)
        elif value in DTYPES:
            dtypes[g.name] = value
        else:
            raise OracleError(f"generic `{g.name}: {g.kind}` bound to {value!r}")
    unknown = set(generics) - {g.name for g in declared}
    if unknown:
        raise OracleError(f"`{what}` has no generic {sorted(unknown)[0]}")
    return binding_from_values(None, dims, dtypes, packs)


def _default(g: t.Generic) -> object:
    if isinstance(g.default, t.IntLit):
        return g.default.value
    if isinstance(g.default, (t.Name, t.TypeName)):
        return getattr(g.default, "id", None) or getattr(g.default, "name")
    raise OracleError(f"generic `{g.name}` needs a value")


def _pack(value) -> tuple[int, ...]:
    if isinstance(value, str):
        return tuple(int(p) for p in value.split(",") if p.strip())
    return tuple(int(v) for v in value)  # type: ignore[union-attr]


def _inputs(inst, inputs: Sequence, prec: Precision) -> list:
    """The entry's arguments from its inputs: one input per tensor, a struct parameter
    taking one per field."""
    names = [f"{p.name}" for p, ty in zip(inst.item.params, inst.signature.params)
             for _ in leaf_types(ty)]
    arrays = tensor_inputs(names, [leaf for ty in inst.signature.params
                                   for leaf in leaf_types(ty)], inputs, prec, inst.item.name)
    leaves = iter(arrays)
    return [gather(ty, leaves) for ty in inst.signature.params]


def tensor_inputs(names: Sequence[str], types: Sequence, inputs: Sequence, prec: Precision,
                  what: str) -> list:
    """Each input as an array of its tensor type (its shape checked)."""
    if len(inputs) != len(types):
        raise OracleError(f"`{what}` takes {len(types)} inputs, got {len(inputs)}")
    args = []
    for name, ty, x in zip(names, types, inputs):
        arr = np.asarray(_numpy(x))
        shape = tuple(d.as_int() for d in ty.dims)
        if arr.shape != shape:
            raise OracleError(f"input `{name}` has shape {list(arr.shape)}, "
                              f"the parameter {list(shape)}")
        args.append(arr.astype(prec.np(ty.dtype)))
    return args


def _numpy(x):
    """NumPy arrays pass; a torch tensor (bf16 included) is converted."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        import torch
        x = x.detach().cpu()
        if x.dtype == torch.bfloat16:
            import ml_dtypes
            return x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return x.numpy()
    return x


def floating_inputs(case: Case, path: str = DEFAULT_PATH) -> list[int]:
    """The positions of the inputs a gradient is taken for: the entry's floating
    parameters (scalars included), then, for a block entry, its floating params (not its
    buffers nor its states)."""
    analysis = _analysis(path, case.text)
    plan = _plan(analysis, Machine(analysis, Precision()), case.entry, case.generics, None,
                 case.present)
    leaves = [leaf for ty in plan.inst.signature.params for leaf in leaf_types(ty)]
    found = [k for k, ty in enumerate(leaves) if ty.dtype in FLOAT]
    if plan.block is not None:
        found += [len(leaves) + k for k, m in enumerate(plan.block.inputs)
                  if m.kind == "param" and m.type.dtype in FLOAT]
    return found


def returned_states(case: Case, path: str = DEFAULT_PATH) -> int:
    """How many next states a block entry returns after its results (0 for any other)."""
    analysis = _analysis(path, case.text)
    plan = _plan(analysis, Machine(analysis, Precision()), case.entry, case.generics, None,
                 case.present)
    return 0 if plan.block is None else len(plan.block.assigned)
