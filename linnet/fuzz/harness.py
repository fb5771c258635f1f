"""The differential harness: run an op's kernel and its body on the same inputs, compare.

The op's body is its definition (docs/language.md, "Kernels"), so the body, compiled with
`numerics="exact"` (no kernels at all), is the oracle; the same entry compiled with
`numerics="equivalent"` (or `"fast"`) runs the kernel wherever its `where` holds. Both are
the generated PyTorch module (`linnet torch`), imported from the cache directory, so what
is compared is exactly what `linnet.torch.load_function` runs.

The pieces, all usable alone:

- `target_spec(path, name)`: what an op (or an entry) takes, and which generic values
  satisfy both its `where` clause and, for an op, its kernel's `where` clause, read from the
  checked program. For an op it also writes a small generic entry that calls the op, so any
  op can be run at any sizes, whatever entries the file declares.
- `make_inputs(spec, values, seed=...)`: random inputs of the right shapes and dtypes.
- `compare_kernel_and_body(path, op_or_entry, inputs)`: the forward and gradient comparison,
  with a verdict against per-dtype, per-numerics tolerances (`tolerance_for`, in
  `comparison.py`, which this module re-exports).

The kernel runs when Triton imports and the inputs are CUDA tensors, or when
`TRITON_INTERPRET=1` was set before Triton was first imported (the CPU interpreter);
otherwise the generated module runs the body in both cases and the comparison is trivial.
`Comparison.kernel_ran` says which happened.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..check.dim_normal_form import Dim
from ..check.instance import Analysis
from ..check.items import item_frame
from ..check.signatures import Binding, match_dims
from ..check.value_types import OptionalT, as_tuples
from ..check.types import TensorT
from ..diagnostics import CompileError, DiagnosticBag, SourceFile
from ..errors import LinnetError, first_line
from ..pipeline import compile_source
from ..syntax import tree as t
from ..syntax.printer import print_item
from ..torch.runtime import import_generated
from .block_specs import BlockEntry, block_entries, block_entry_spec  # noqa: F401
from .comparison import (Comparison, OutputError, Tolerance, compare_outputs,  # noqa: F401
                         result_names, tolerance_for)
from .inputs import (INPUT_STYLES, TORCH_DTYPE_NAMES, Override, default_device,  # noqa: F401
                     dtype_name, make_inputs, torch_dtype)
from .jax_compare import compare_jax
from .precision import carried_dtype, program_floats
from .sizes import draw_values, dtype_choices, shrink  # noqa: F401
from .spec import (ProgramError, TargetSpec, analyze_source, backend_params,  # noqa: F401
                   program_error, source_text)

__all__ = [
    "Tolerance", "tolerance_for", "OutputError", "Comparison", "TargetSpec", "target_spec",
    "kernel_ops", "make_inputs", "INPUT_STYLES", "compare_kernel_and_body", "compare_outputs",
    "default_device", "kernel_runtime", "compiled", "draw_values", "shrink", "LinnetError",
    "ProgramError",
]

# ------------------------------------------------------------------------------------------
# What an op or entry takes, and which sizes are allowed.

_VERIFY_ENTRY = "verify_entry_"


_SPECS: dict[tuple, TargetSpec] = {}
_LOCK = threading.Lock()
_ANALYSES: dict[tuple[str, str], Analysis] = {}  # the latest few, oldest first
_ANALYSES_KEPT = 4
_ANALYSES_LOCK = threading.Lock()  # taken inside _LOCK (a spec is built holding it)


def _analysis(path: str, text: str) -> Analysis:
    """The checked program at path with this text, kept as `_SPECS` keeps specs (by path
    and text): a file's entries and the spec of each then cost one check, not one each."""
    key = (path, hashlib.sha256(text.encode()).hexdigest())
    with _ANALYSES_LOCK:
        found = _ANALYSES.pop(key, None)
    if found is None:
        found = analyze_source(path, text)
    with _ANALYSES_LOCK:
        _ANALYSES[key] = found
        while len(_ANALYSES) > _ANALYSES_KEPT:
            del _ANALYSES[next(iter(_ANALYSES))]
    return found


def kernel_ops(path: str, text: str | None = None) -> list[str]:
    """The names of the ops with a kernel declared in the file's own module, in order."""
    analysis = analyze_source(path, source_text(path, text))
    return [i.name for i in analysis.program.root_module.items
            if isinstance(i, t.Op) and i.kernel is not None]


def entries(path: str, text: str | None = None) -> list[str]:
    """The module-level entries, then those of the root block (the only block with
    entries), as `--entry` names them."""
    analysis = _analysis(path, source_text(path, text))
    plain = [i.name for i in analysis.program.root_module.items
             if isinstance(i, t.Function) and i.kind == "entry"]
    return plain + [name for name in block_entries(analysis) if name not in plain]


def target_spec(path: str | os.PathLike, name: str, text: str | None = None) -> TargetSpec:
    """The spec of the op or entry `name` of the program at `path` (its text, if given).

    Raises `LinnetError` (a `ProgramError` with the rendered diagnostics) when the program
    does not check, and `KeyError` when it has no op or entry of that name.
    """
    path = str(path)
    text = source_text(path, text)
    key = (path, hashlib.sha256(text.encode()).hexdigest(), name)
    with _LOCK:
        if key not in _SPECS:
            _SPECS[key] = _build_spec(path, text, name)
        return _SPECS[key]


def _build_spec(path: str, text: str, name: str) -> TargetSpec:
    analysis = _analysis(path, text)
    root = analysis.root
    item = root.globals.items.get(name)
    if isinstance(item, t.Function) and item.kind == "entry" \
            and item in analysis.program.root_module.items:
        sig = root.signatures[name]
        where = [(l, op, r) for l, op, r, _ in sig.where]
        return TargetSpec(path, text, name, "entry", name, text, item.generics,
                          backend_params(item.params, sig.params), as_tuples(sig.result),
                          where)
    if not isinstance(item, t.Op):
        spec = block_entry_spec(analysis, path, text, name)
        if spec is None:
            raise KeyError(name)
        return spec
    module = analysis.module_of(item)
    sig = module.signatures[name]
    where = [(l, op, r) for l, op, r, _ in sig.where]
    entry_name = _fresh_name(_VERIFY_ENTRY + name, root.globals.items)
    wrapper = print_item(_wrapper_entry(item, entry_name))
    source = (text.rstrip("\n") + "\n\n// Added by linnet.fuzz: a generic entry calling the "
              "op.\n" + wrapper + "\n")
    spec = TargetSpec(path, text, name, "op", entry_name, source, item.generics,
                      [(p.name, ty.inner if isinstance(ty, OptionalT) else ty)
                       for p, ty in zip(item.params, sig.params)], sig.result, where)
    spec.grad_clause = item.grad is not None
    if item.kernel is not None:
        spec.kernel = item.kernel.name
        spec.kernel_args, spec.kernel_where = _kernel_binding(item, module)
    return spec


def _fresh_name(base: str, taken) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


def _wrapper_entry(op: t.Op, name: str) -> t.Function:
    """`entry NAME<op's generics>(op's params) -> op's result where op's where
    { return op<generics>(params) }`, destructuring a tuple result. An optional parameter
    is taken as the value it holds and passed `some(p)`: the instance that runs the kernel
    (docs/models.md)."""
    generics = tuple(t.Name(g.name) for g in op.generics)
    optional = {p.name for p in op.params if isinstance(p.type, t.OptionalType)}
    call = t.Call(op.name, generics or None, tuple(
        t.Arg(t.Some(t.Name(p.name)) if p.name in optional else t.Name(p.name))
        for p in op.params))
    params = tuple(dataclasses.replace(p, type=p.type.inner, default=None)
                   if p.name in optional else p for p in op.params)
    if isinstance(op.result, t.TupleType):
        names = tuple(_fresh_name(f"verify_result_{k}", {p.name for p in op.params})
                      for k in range(len(op.result.items)))
        body: tuple[t.Stmt, ...] = (
            t.LetTuple(names, call), t.Return(t.TupleExpr(tuple(t.Name(n) for n in names))))
    else:
        body = (t.Return(call),)
    generics_decl = tuple(t.Generic(g.name, g.kind, g.pack, g.default) for g in op.generics)
    return t.Function("entry", name, generics_decl, params, op.result, op.where, body)


def _kernel_binding(op: t.Op, module) -> tuple[dict[str, Dim], list[tuple[Dim, str, Dim]]]:
    """The kernel's generics in terms of the op's, and its `where` clauses rewritten so."""
    kernel = module.globals.items[op.kernel.name]
    ksig = module.signatures[kernel.name]
    _, checker = item_frame(op, module.globals, DiagnosticBag(), module.signatures)
    b = Binding()
    for g, a in zip(kernel.generics, op.kernel.args or ()):
        checker.bind_generic_arg(g, a, b)
    where = [(l.substitute(b.dims), op_, r.substitute(b.dims)) for l, op_, r, _ in ksig.where]
    return dict(b.dims), where


# ------------------------------------------------------------------------------------------
# Compiling and running.

_MODULES: dict[tuple, tuple[Callable, str]] = {}


def compiled(spec: TargetSpec, values: Mapping[str, Any], numerics: str,
             tuning: Any = False) -> tuple[Callable[..., tuple], str]:
    """`main` of the generated PyTorch module of `spec`'s entry at `values` (a dict of
    generic values) under `numerics`, and the module's text; cached per process.

    Kernels take the op headers' tiles and hints; `tuning` (a `KernelTuning`, say: what
    `linnet tune` compiles each candidate with) is compile_source's."""
    options = spec.compile_options(values)
    key = (spec.path, hashlib.sha256(spec.source.encode()).hexdigest(), spec.entry,
           repr(sorted((k, str(v)) for k, v in options.items())), numerics, tuning)
    if key not in _MODULES:
        try:
            compiled = compile_source(spec.source, path=spec.path, numerics=numerics,
                                      tuning=tuning, **options)
        except CompileError as err:
            sources = {spec.path: SourceFile.of(spec.path, spec.source)}
            for d in err.diagnostics:
                if d.span.file not in sources and Path(d.span.file).is_file():
                    sources[d.span.file] = SourceFile.of(d.span.file,
                                                         Path(d.span.file).read_text())
            raise program_error(err.diagnostics, sources) from None
        module = import_generated(compiled.text, f"{spec.name}_{numerics}")
        _MODULES[key] = (module.main, compiled.text)
    return _MODULES[key]


def kernel_runtime(device: str) -> tuple[bool, str]:
    """Would a generated module launch its kernels for inputs on `device`, and how?

    True when Triton imports and the device is CUDA (`"the GPU"`), or `TRITON_INTERPRET=1`
    is set (`"the Triton interpreter"`); else False (`"the body: ..."`).
    """
    try:
        import triton  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means: no Triton
        return False, "the body (Triton does not import)"
    if str(device).startswith("cuda"):
        return True, "Triton on the GPU"
    if os.environ.get("TRITON_INTERPRET") == "1":
        return True, "the Triton interpreter (CPU)"
    return False, "the body (CPU tensors without TRITON_INTERPRET=1)"


def _binding_from_inputs(spec: TargetSpec, inputs: Sequence[Any]) -> dict[str, Any]:
    """The generic values the entry's own inputs determine (a block entry's parameters,
    after them, follow from the values: `_check_count`)."""
    if len(inputs) != len(spec.params) and (spec.block is None
                                            or len(inputs) < len(spec.params)):
        raise TypeError(f"{spec.label} takes {len(spec.params)} inputs, got {len(inputs)}")
    names = {g.name for g in spec.generics}
    b = Binding()
    for (_, ty), value in zip(spec.params, inputs):
        if not isinstance(ty, TensorT):
            continue
        shape = getattr(value, "shape", None)
        if ty.dtype in names and hasattr(value, "dtype"):
            b.dtypes.setdefault(ty.dtype, dtype_name(value))
        if shape is not None and ty.rank:
            match_dims(ty.dims, tuple(Dim.const(n) for n in shape), names, b)
    values: dict[str, Any] = {k: d.as_int() for k, d in b.dims.items()}
    values.update(b.dtypes)
    return values


def _reduction_length(spec: TargetSpec, values: Mapping[str, Any]) -> int:
    return max([n for shape, _ in spec.shapes(values) for n in shape] or [1])


def _check_count(spec: TargetSpec, values: Mapping[str, Any], inputs: Sequence[Any]) -> None:
    """A block entry takes its own inputs, then one per present parameter at `values`."""
    if spec.block is None:
        return
    wanted = spec.inputs(values)
    if len(inputs) != len(wanted):
        raise TypeError(f"{spec.label} takes {len(spec.params)} inputs and "
                        f"{len(wanted) - len(spec.params)} parameters at "
                        f"{spec.describe(values)}, got {len(inputs)} inputs in all")


def _run(main, spec: TargetSpec, values: Mapping[str, Any], inputs: Sequence[Any],
         grad: bool):
    """`main` on the inputs, each floating tensor input differentiated (a block entry's
    floating parameters too), with autograd on."""
    import torch
    args, wrt, names = [], [], []
    for (name, ty), x in zip(spec.inputs(values), inputs):
        if isinstance(x, torch.Tensor):
            x = x.detach().clone()
            if grad and x.dtype.is_floating_point and x.dim() > 0:
                x.requires_grad_(True)
                wrt.append(x)
                names.append(name)
        args.append(x)
    with torch.enable_grad():
        outputs = main(*args)
    return outputs, wrt, names


def compare_kernel_and_body(path: str | os.PathLike, op_or_entry: "str | TargetSpec",
                            inputs: Sequence[Any],
                            *, numerics: str = "equivalent", device: str | None = None,
                            grad: bool = True, text: str | None = None,
                            values: Mapping[str, Any] | None = None,
                            reduction_length: int | None = None, seed: int = 0,
                            tolerance: Mapping[str, Tolerance] | Tolerance | None = None,
                            target: str = "torch", tuning: Any = False) -> Comparison:
    """Run `op_or_entry` of the program at `path` with `numerics="exact"` (the op's body) and
    with `numerics` (its kernel where the kernel's `where` holds) on the same `inputs`, and
    compare every output and, when `grad`, the gradient of every floating tensor input
    (autograd through both, with the same random cotangents, seeded by `seed`).

    `op_or_entry` names an op (it is called through a generic entry added for the purpose)
    or an entry, or is a spec already made (a block entry's: `block_specs.py`). Generics
    are bound from the inputs' shapes and dtypes; give `values` for any that no input
    determines (a block entry's inputs end with its parameters, `TargetSpec.inputs`). Inputs are moved to `device` (default: CUDA when
    available, else the CPU). `reduction_length` scales the tolerance (default: the largest
    dimension of any input); `tolerance` replaces it, one for all outputs or one per dtype.

    `target="jax"` compiles both through `linnet jax` instead (the kernel through Pallas;
    `jax_compare.py`), with the inputs on the CPU. `tuning` is compile_source's for the
    kernel (False, the default: the op headers' tiles and hints).

    Returns a `Comparison`: `.ok`, the worst errors per output and gradient, and whether the
    kernel was chosen and launched (`.kernel_ran`). A program with errors raises
    `LinnetError` with the diagnostics.
    """
    import torch
    spec = op_or_entry if isinstance(op_or_entry, TargetSpec) \
        else target_spec(path, op_or_entry, text)
    device = "cpu" if target == "jax" else device or default_device()
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
    bound = _binding_from_inputs(spec, inputs)
    bound.update(values or {})
    bound = {g.name: bound[g.name] for g in spec.generics if g.name in bound}
    _check_count(spec, bound, inputs)
    n = reduction_length or _reduction_length(spec, bound)
    ran, runtime = kernel_runtime(device)
    floats = program_floats(spec.source, bound, [dtype_name(x) for x in inputs
                                                 if isinstance(x, torch.Tensor)])

    def tol(dtype: str) -> Tolerance:
        if isinstance(tolerance, Tolerance):
            return tolerance
        if isinstance(tolerance, Mapping) and dtype in tolerance:
            return tolerance[dtype]
        return tolerance_for(carried_dtype(dtype, floats), numerics, n)

    if target == "jax":
        return compare_jax(spec, bound, inputs, numerics=numerics, grad=grad, seed=seed, tol=tol,
                           tuning=tuning)
    body_main, _ = compiled(spec, bound, "exact")
    kernel_main, kernel_text = compiled(spec, bound, numerics, tuning)
    chosen = "@triton.jit" in kernel_text
    result = Comparison(spec.label, dict(bound), numerics, str(device), [], [], chosen,
                        chosen and ran, runtime if chosen else "the body (no kernel chosen)")
    body_out, body_wrt, wrt_names = _run(body_main, spec, bound, inputs, grad)
    try:
        kernel_out, kernel_wrt, _ = _run(kernel_main, spec, bound, inputs, grad)
    except Exception as err:  # noqa: BLE001 - a crashing kernel is a finding, not a harness bug
        result.problem = f"the kernel raised {type(err).__name__}: {first_line(err)}"
        return result
    names = result_names(spec, len(body_out))
    for name, b, k in zip(names, body_out, kernel_out):
        result.outputs.append(compare_outputs(name, b, k, tol(dtype_name(b))))
    if not grad or not body_wrt:
        return result
    g = torch.Generator().manual_seed(seed + 1)
    pairs = [(b, k) for b, k in zip(body_out, kernel_out)
             if b.dtype.is_floating_point and b.requires_grad]
    if not pairs:
        return result
    if not all(k.requires_grad for _, k in pairs):
        result.problem = "the kernel's outputs carry no gradient (autograd cannot reach it)"
        return result
    cotangents = [torch.randn(b.shape, generator=g, dtype=torch.float64).to(b.dtype).to(b.device)
                  for b, _ in pairs]
    body_grads = torch.autograd.grad([b for b, _ in pairs], body_wrt, cotangents,
                                     allow_unused=True)
    try:
        kernel_grads = torch.autograd.grad([k for _, k in pairs], kernel_wrt, cotangents,
                                           allow_unused=True)
    except Exception as err:  # noqa: BLE001
        result.problem = f"the kernel's backward raised {type(err).__name__}: {first_line(err)}"
        return result
    for name, x, gb, gk in zip(wrt_names, body_wrt, body_grads, kernel_grads):
        gb = torch.zeros_like(x) if gb is None else gb
        gk = torch.zeros_like(x) if gk is None else gk
        result.grads.append(compare_outputs(f"d{name}", gb, gk, tol(dtype_name(gb))))
    return result

