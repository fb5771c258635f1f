"""The oracle's entry points: evaluate a case, or a program's text, entry and inputs.

The program is parsed and checked by the front end (`linnet.syntax`, `linnet.check`), whose
instance of the entry gives every node's concrete type; everything after that is this
package's own NumPy evaluation of the surface tree, sharing nothing with the lowering, the
printers or the runtimes.
"""

from __future__ import annotations

import functools
from typing import Mapping, Sequence

import numpy as np

from ...check.instance import Analysis, analyze_program, binding_from_values
from ...check.types import DTYPES, TensorT, TupleT
from ...deepstack import call_with_deep_stack
from ...program import load_program
from ...syntax import tree as t
from ..case import Case
from .calls import Machine
from .dtypes import FLOAT, Precision, to_dtype
from .errors import OracleError
from .values import flatten, gather, leaf_types

DEFAULT_PATH = "oracle_case.linnet"


def evaluate(case: Case, precision: str = "native", path: str = DEFAULT_PATH
             ) -> tuple[np.ndarray, ...]:
    """The entry's results on the case's inputs: one array per result, in the result
    dtypes (every float in f64 when `precision="f64"`)."""
    return evaluate_source(case.text, case.entry, case.generics, case.inputs,
                           precision=precision, path=path)


def evaluate_source(text: str, entry: str, generics: Mapping[str, object],
                    inputs: Sequence, *, precision: str = "native",
                    path: str = DEFAULT_PATH) -> tuple[np.ndarray, ...]:
    """As `evaluate`, without a Case. `path` places the file, for the modules it `use`s."""
    if precision not in ("native", "f64"):
        raise ValueError(f"precision is 'native' or 'f64', not {precision!r}")
    analysis = _analysis(path, text)
    item = _entry(analysis, entry)
    machine = Machine(analysis, Precision(f64=precision == "f64"))
    inst = machine.instance(item, _binding(item, generics))
    args = _inputs(inst, inputs, machine.prec)
    result = call_with_deep_stack(lambda: machine.run(inst, args))
    return results_of(inst.signature.result, result, machine.prec)


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


def _entry(analysis: Analysis, name: str) -> t.Function:
    for item in analysis.program.root_module.items:
        if isinstance(item, t.Function) and item.kind == "entry" and item.name == name:
            return item
    raise OracleError(f"no entry named `{name}`")


def _binding(entry: t.Function, generics: Mapping[str, object]):
    dims, dtypes, packs = {}, {}, {}
    for g in entry.generics:
        value = generics[g.name] if g.name in generics else _default(g)
        if g.kind == "Dim":
            dims[g.name] = int(value)  # type: ignore[arg-type]
        elif g.kind == "Shape":
            packs[g.name] = _pack(value)
        elif value in DTYPES:
            dtypes[g.name] = value
        else:
            raise OracleError(f"generic `{g.name}: {g.kind}` bound to {value!r}")
    unknown = set(generics) - {g.name for g in entry.generics}
    if unknown:
        raise OracleError(f"`{entry.name}` has no generic {sorted(unknown)[0]}")
    return binding_from_values(entry, dims, dtypes, packs)


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
    """The positions of the entry's floating parameters (scalars included)."""
    analysis = _analysis(path, case.text)
    item = _entry(analysis, case.entry)
    inst = Machine(analysis, Precision()).instance(item, _binding(item, case.generics))
    leaves = [leaf for ty in inst.signature.params for leaf in leaf_types(ty)]
    return [k for k, ty in enumerate(leaves) if ty.dtype in FLOAT]
