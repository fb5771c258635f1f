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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..check.dim_normal_form import Dim
from ..check.dims import Facts
from ..check.instance import Analysis, analyze_program
from ..check.items import item_frame
from ..check.signatures import Binding, match_dims
from ..check.value_types import OptionalT, as_tuples, leaves
from ..check.types import DTYPE_KINDS, TensorT, Type
from ..diagnostics import CompileError, DiagnosticBag, SourceFile, render
from ..errors import first_line
from ..syntax.program import load_program
from ..syntax import tree as t
from ..syntax.printer import print_item
from ..torch.loader import LinnetError
from .block_specs import BlockEntry, block_entries, block_entry_spec
from .comparison import (Comparison, OutputError, Tolerance, compare_outputs,  # noqa: F401
                         tolerance_for)
from .inputs import (INPUT_STYLES, TORCH_DTYPE_NAMES, Override, default_device, make_inputs,
                     torch_dtype)
from .precision import carried_dtype, program_floats
from .sizes import draw_values, dtype_choices, shrink

__all__ = [
    "Tolerance", "tolerance_for", "OutputError", "Comparison", "TargetSpec", "target_spec",
    "kernel_ops", "make_inputs", "INPUT_STYLES", "compare_kernel_and_body", "compare_outputs",
    "default_device", "kernel_runtime", "compiled", "draw_values", "shrink", "LinnetError",
    "ProgramError",
]

# ------------------------------------------------------------------------------------------
# What an op or entry takes, and which sizes are allowed.

_VERIFY_ENTRY = "verify_entry_"


@dataclass
class TargetSpec:
    """An op (with the entry that calls it) or an entry, ready to be compiled at any sizes.

    `where` holds the op's (or entry's) own clauses, `kernel_where` the kernel's clauses
    written in the op's generics (through the binding `kernel name<...>`), both as
    `(left, op, right)` comparisons of `Dim`s. `source` is the text to compile: the file's
    text, plus for an op a generic entry named `entry` that calls it.
    """
    path: str
    text: str = field(repr=False)
    name: str
    kind: str  # "op" or "entry"
    entry: str
    source: str = field(repr=False)
    generics: tuple[t.Generic, ...]
    params: list[tuple[str, Type]]
    result: Type | None
    where: list[tuple[Dim, str, Dim]]
    kernel: str | None = None
    kernel_where: list[tuple[Dim, str, Dim]] = field(default_factory=list)
    kernel_args: dict[str, Dim] = field(default_factory=dict)
    # an op without a `grad` clause is differentiated through its body, with or without its
    # kernel: comparing the two gradients compares the body with itself
    grad_clause: bool = True
    block: BlockEntry | None = field(default=None, repr=False, compare=False)
    """A root block's entry: its parameters at given generic values, the inputs after the
    entry's own, and how it compiles (`block_specs.py`)."""
    _facts: Facts | None = field(default=None, repr=False, compare=False)
    _op_facts: Facts | None = field(default=None, repr=False, compare=False)

    def compile_options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """compile_source's `entry`, `bind` (and, for a block entry, `root` and `present`)
        for the drawn generic values."""
        if self.block is None:
            return {"entry": self.entry, "bind": dict(values)}
        return self.block.compile_options(self.entry, values)

    @property
    def dim_generics(self) -> list[str]:
        return [g.name for g in self.generics if g.kind == "Dim"]

    @property
    def dtype_generics(self) -> list[t.Generic]:
        return [g for g in self.generics if g.kind in DTYPE_KINDS]

    @property
    def label(self) -> str:
        name = f"{self.block.root}.{self.name}" if self.block is not None else self.name
        return f"{self.kind} {name}" + (f" (kernel {self.kernel})" if self.kernel else "")

    def _facts_for(self, clauses) -> Facts:
        return Facts(self.dim_generics).assume_all(clauses)

    def allows(self, values: Mapping[str, Any]) -> bool:
        """Do the op's (or entry's) own `where` clauses hold at `values`?"""
        if self._op_facts is None:
            self._op_facts = self._facts_for(self.where)
        return self._consistent(self._op_facts, values)

    def satisfies(self, values: Mapping[str, Any]) -> bool:
        """Do both the op's and its kernel's `where` clauses hold (so the kernel applies)?"""
        if self._facts is None:
            self._facts = self._facts_for(self.where + self.kernel_where)
        return self._consistent(self._facts, values)

    def _consistent(self, facts: Facts, values: Mapping[str, Any]) -> bool:
        env = {n: values[n] for n in self.dim_generics}
        try:
            return facts.is_consistent_with(env) and all(
                n >= 0 for shape, _ in self.shapes(values) for n in shape)
        except (KeyError, ZeroDivisionError):
            return False

    def inputs(self, values: Mapping[str, Any]) -> list[tuple[str, Type]]:
        """Every input at `values`: the parameters, then a block entry's parameters."""
        extra = self.block.parameters(values) if self.block is not None else []
        return list(self.params) + extra

    def shapes(self, values: Mapping[str, Any]) -> list[tuple[tuple[int, ...], str]]:
        """Each input's concrete shape and dtype at `values`."""
        out = []
        for _, ty in self.inputs(values):
            if not isinstance(ty, TensorT) or ty.has_pack:
                raise LinnetError(f"{self.label}: parameters of type {ty} are not supported")
            shape = tuple(d.evaluate(values) for d in ty.dims)  # type: ignore[union-attr]
            out.append((shape, str(values.get(ty.dtype, ty.dtype))))
        return out

    def tile_sizes(self) -> list[int]:
        """The constant kernel generics and the constants of the `where` clauses: the sizes
        around which ragged edges are worth trying."""
        sizes = {d.as_int() for d in self.kernel_args.values()}
        for left, _, right in self.where + self.kernel_where:
            sizes |= {left.as_int(), right.as_int()}
        return sorted(s for s in sizes if s is not None and s > 1)

    def candidates(self, name: str, max_dim: int) -> list[int]:
        """Interesting values for one `Dim` generic, up to `max_dim`: 1 and other small
        sizes, and each tile size and constant bound minus one, itself, plus one."""
        picks = {1, 2, 3, 5, 7, 8, 13}
        for s in self.tile_sizes():
            picks |= {s - 1, s, s + 1, 2 * s + 1}
        picks.add(max_dim)
        return sorted(v for v in picks if 1 <= v <= max_dim)

    def describe(self, values: Mapping[str, Any]) -> str:
        """`R=3 C=5` (generics in declaration order)."""
        return " ".join(f"{g.name}={values[g.name]}" for g in self.generics if g.name in values)

    def describe_inputs(self, values: Mapping[str, Any]) -> str:
        parts = []
        for (name, _), (shape, dtype) in zip(self.inputs(values), self.shapes(values)):
            parts.append(f"{name}: {dtype}[{', '.join(map(str, shape))}]" if shape
                         else f"{name}: {dtype}")
        return ", ".join(parts)


_SPECS: dict[tuple, TargetSpec] = {}
_LOCK = threading.Lock()


def source_text(path: str, text: str | None) -> str:
    return Path(path).read_text(encoding="utf-8") if text is None else text


def analyze_source(path: str, text: str) -> Analysis:
    program = load_program(path, text)
    if program.diagnostics:
        raise program_error(program.diagnostics, program.sources)
    analysis = analyze_program(program)
    if analysis.diagnostics:
        raise program_error(analysis.diagnostics, program.sources)
    return analysis


class ProgramError(LinnetError):
    """The program has errors; `diagnostics` and `sources` render them."""

    def __init__(self, message: str = "", diagnostics=None, sources=None) -> None:
        super().__init__("", diagnostics, sources)  # defaults: it pickles (verify's child)


def program_error(diagnostics, sources) -> ProgramError:
    text = "\n\n".join(render(d, sources) for d in diagnostics)
    return ProgramError(text, diagnostics, sources)


def kernel_ops(path: str, text: str | None = None) -> list[str]:
    """The names of the ops with a kernel declared in the file's own module, in order."""
    analysis = analyze_source(path, source_text(path, text))
    return [i.name for i in analysis.program.root_module.items
            if isinstance(i, t.Op) and i.kernel is not None]


def entries(path: str, text: str | None = None) -> list[str]:
    """The module-level entries, then those of the root block (the only block with
    entries), as `--entry` names them."""
    analysis = analyze_source(path, source_text(path, text))
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
    analysis = analyze_source(path, text)
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


def backend_params(params: tuple[t.Param, ...], types: list) -> list[tuple[str, Type]]:
    """An entry's inputs as a backend takes them: a struct parameter is its fields."""
    return [(p.name if len(leaves(ty)) == 1 else f"{p.name}_{k}", leaf)
            for p, ty in zip(params, types) for k, leaf in enumerate(leaves(ty))]


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
    from ..pipeline import compile_source
    from ..torch.runtime import import_generated
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


def result_names(spec: TargetSpec, count: int) -> list[str]:
    if count == 1:
        return ["result"]
    return [f"result {k}" for k in range(count)]


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
        from .jax_compare import compare_jax
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


def dtype_name(x) -> str:
    name = str(x.dtype).replace("torch.", "")
    return {v: k for k, v in TORCH_DTYPE_NAMES.items()}.get(name, name)
