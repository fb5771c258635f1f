"""`make demo`, module-level entries: each entry of an example run as a user runs it.

An entry with generics gets small sizes that satisfy its `where` clauses and, where the
file has kernels, let one of them run (`choose_values`): a user calls `softmax_any` on a
matrix of a few rows, not on one the kernel's `where` turns away. An example with kernels
compares them with its op bodies (`linnet.fuzz.harness.compare_kernel_and_body`, the
check behind `linnet verify`), forward and gradient; an example without kernels is
exported to ONNX (run by onnxruntime) and StableHLO (run by XLA), each compared with the
generated PyTorch, and an entry whose result is a floating scalar (a loss) also under
`--grad`. Each run gives one `Outcome` line; `linnet/demo/main.py` prints them.
"""

from __future__ import annotations

import itertools
import math
import random
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from ..check.frontend import check_program
from ..check.types import DTYPE_KINDS, TensorT
from ..errors import first_line
from ..fuzz.harness import compare_kernel_and_body, compiled, make_inputs, target_spec
from ..fuzz.onnx_run import load_onnx
from ..fuzz.reduce.names import reachable
from ..fuzz.sizes import dtype_choices
from ..fuzz.stablehlo_run import run_stablehlo
from ..ir.prim_types import FLOATS
from ..pipeline import compile_source, passes_for
from ..syntax import tree as t
from ..torch.runtime import import_generated

__all__ = ["Outcome", "failure", "SIZES", "choose_values", "run_entry", "own_inputs", "close",
           "run_export", "export_outcome", "count", "is_loss", "kernels_chosen", "seed_of",
           "sizes_text"]

BASE = (2, 3, 4, 5)
"""The sizes the `Dim` generics take first, in turn: small (Triton's interpreter runs the
programs of a grid one by one, in Python), and apart, so that an axis mixed up with
another shows."""
RAISED = (16, 32)
"""The sizes one generic is raised to when no kernel applies at the base sizes: the powers
of two that tile kernels often require (attention's head dim is 16, 32, 64 or 128)."""
SIZES = (2, 3, 4, 5, 8, 16, 32)  # drawn from when the base sizes break a `where` clause
MAX_ELEMENTS = 4096  # per drawn input: the interpreter runs every program of a grid in Python
TRIES = 200
KERNEL_CHECKS = 12


@dataclass(frozen=True)
class Outcome:
    """One line of the demo: what ran and whether it agreed."""
    label: str
    line: str
    ok: bool


def failure(label: str, err: BaseException) -> Outcome:
    """A run that raised: the exception's first line is its outcome, not a traceback."""
    return Outcome(label, f"FAILED: {type(err).__name__}: {first_line(err)}", False)


def seed_of(*names: str) -> int:
    """A fixed seed per entry: the demo prints the same sizes on every run."""
    return zlib.crc32("/".join(names).encode())


def choose_values(spec: Any, seed: int, *, fixed: Mapping[str, Any] | None = None,
                  kernels: Callable[[dict], list[str]] | None = None) -> dict[str, Any]:
    """Generic values for `spec` (a `linnet.fuzz.harness.TargetSpec`): the `fixed` ones,
    a generic's default, else small sizes (`candidates`) for which the `where` clauses hold
    and no input exceeds `MAX_ELEMENTS`. With `kernels` (the kernels the compiler chooses at
    given values), the first such candidate for which it chooses one, within
    `KERNEL_CHECKS` tries; else the first candidate that held."""
    valid = (v for v in candidates(spec, seed, fixed or {})
             if spec.allows(v) and (not _drawn(spec, fixed) or _largest(spec, v) <= MAX_ELEMENTS))
    first = next(valid, None)
    if first is None:
        raise RuntimeError(f"no sizes from {SIZES} satisfy the `where` clauses of "
                           f"{spec.label}")
    if kernels is None or not _drawn(spec, fixed):
        return first
    for values in itertools.chain([first], itertools.islice(valid, KERNEL_CHECKS - 1)):
        if kernels(values):
            return values
    return first


def candidates(spec: Any, seed: int, fixed: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The base sizes, then each drawn generic raised in turn (`RAISED`), then draws from
    `SIZES` (seeded by `seed`)."""
    given: dict[str, Any] = {}
    drawn: list[str] = []
    for g in spec.generics:
        if g.name in fixed:
            given[g.name] = fixed[g.name]
        elif g.default is not None and hasattr(g.default, "value"):
            given[g.name] = g.default.value
        elif g.kind == "Dim":
            drawn.append(g.name)
        elif g.kind in DTYPE_KINDS:
            given[g.name] = dtype_choices(g)[0]
    base = {**given, **{name: BASE[k % len(BASE)] for k, name in enumerate(drawn)}}
    yield base
    for name in drawn:
        for size in RAISED:
            yield {**base, name: size}
    rng = random.Random(seed)
    for _ in range(TRIES):
        yield {**given, **{name: rng.choice(SIZES) for name in drawn}}


def _drawn(spec: Any, fixed: Mapping[str, Any] | None) -> bool:
    """Does any generic take a drawn value (so another draw may differ)?"""
    return any(g.kind == "Dim" and g.name not in (fixed or {}) and g.default is None
               for g in spec.generics)


def _largest(spec: Any, values: Mapping[str, Any]) -> int:
    return max((math.prod(shape) for shape, _ in spec.shapes(values)), default=0)


def kernels_chosen(spec: Any, values: Mapping[str, Any]) -> list[str]:
    """The kernel instances the compiler chooses for `spec`'s entry at `values`: the
    pipeline run up to `instantiate-kernels` only (a tenth of a second)."""
    passes = passes_for("torch")
    upto = [p.name for p in passes].index("instantiate-kernels") + 1
    program = compile_source(spec.source, path=spec.path, passes=passes[:upto],
                             **spec.compile_options(values)).text
    return [f.source or f.name for f in program.funcs if f.kind == "kernel"]


def own_inputs(spec: Any, values: Mapping[str, Any], seed: int) -> list:
    """Random inputs for the entry's own parameters (not a block's), on the CPU: floats
    normal, float scalars in [0.05, 1], and integers (ids, such as tokens) in [0, n), n the
    smallest size above 1 among the values (at most 16): an id valid on any axis it may
    index."""
    import torch
    n = min([v for v in values.values() if isinstance(v, int) and v > 1] + [16])
    ints = {name: (lambda shape, dtype, g: torch.randint(0, n, shape, generator=g))
            for name, ty in spec.params
            if isinstance(ty, TensorT) and ty.dtype not in FLOATS and ty.dtype != "bool"}
    return make_inputs(spec, values, seed=seed, overrides=ints, device="cpu")[:len(spec.params)]


def is_loss(spec: Any) -> bool:
    """Does the entry return one floating scalar, which `--grad` differentiates?"""
    result = spec.result
    return isinstance(result, TensorT) and not result.dims and result.dtype in FLOATS


def sizes_text(spec: Any, values: Mapping[str, Any]) -> str:
    text = spec.describe(values)
    return f" at {text}" if text else ""


def run_entry(path: Path, name: str, has_kernels: bool) -> Outcome:
    """The entry `name` of a module: its kernels against its op bodies, or (a file
    without kernels) its exports against PyTorch."""
    spec = target_spec(path, name)
    seed = seed_of(path.name, name)
    chooser = (lambda values: kernels_chosen(spec, values)) if has_kernels else None
    values = choose_values(spec, seed, kernels=chooser)
    inputs = own_inputs(spec, values, seed)
    label = name + sizes_text(spec, values)
    if has_kernels:
        return _kernels_against_bodies(path, spec, values, inputs, label)
    return _exports_against_torch(path, spec, values, inputs, label)


def _kernels_against_bodies(path: Path, spec: Any, values: dict, inputs: list,
                            label: str) -> Outcome:
    start = time.perf_counter()
    result = compare_kernel_and_body(path, spec, inputs, values=values)
    ms = (time.perf_counter() - start) * 1000
    if not result.kernel_chosen:
        return Outcome(label, f"no kernel's `where` holds at these sizes: the bodies ran "
                       f"({ms:.0f} ms)", result.ok)
    if not result.kernel_ran:
        return Outcome(label, f"DISAGREES: a kernel was chosen but not launched "
                       f"({result.runtime})", False)
    if not result.ok:
        return Outcome(label, "DISAGREES with the bodies: " + "; ".join(result.failures()),
                       False)
    worst = max((e.ratio for e in result.outputs + result.grads), default=0.0)
    body_grads = ops_without_grad(path, spec.name)
    agree = "forward agrees" if body_grads else "forward and gradient agree"
    line = (f"kernels on {result.runtime}: {agree} with the bodies (worst error {worst:.2g} "
            f"of the tolerance), {ms:.0f} ms")
    if body_grads:  # differentiated through the body in both runs: nothing to compare
        line += (f"; the gradient of {', '.join(body_grads)} is its body's in both runs "
                 "(no grad clause)")
    return Outcome(label, line, True)


def ops_without_grad(path: Path, entry: str) -> list[str]:
    """The ops with a kernel and no `grad` clause that the entry uses: their gradient is
    the body's with or without the kernel, so the demo does not claim to have compared it."""
    module = check_program(str(path)).program.root_module
    used = reachable(module, entry)
    return [i.name for i in module.items
            if isinstance(i, t.Op) and i.kernel and not i.grad and i.name in used]


def _exports_against_torch(path: Path, spec: Any, values: dict, inputs: list,
                           label: str) -> Outcome:
    """ONNX and StableHLO of the entry against its generated PyTorch; a loss under
    `--grad` too (ONNX's gradients against PyTorch's)."""
    options = spec.compile_options(values)
    text = path.read_text(encoding="utf-8")
    torch_main, _ = compiled(spec, values, "equivalent")
    arrays = [_array(x) for x in inputs]
    want = [_array(o) for o in _tuple(torch_main(*inputs))]
    verdicts = []
    for target in ("onnx", "stablehlo"):
        got = run_export(target, compile_source(text, path=str(path), target=target,
                                                **options).text, arrays)
        verdicts.append((_LABELS[target], close(got, want)))
    if is_loss(spec):
        grad_torch = import_generated(compile_source(text, path=str(path), grad=True,
                                                     **options).text, f"{spec.name}_grad")
        grads = [_array(o) for o in _tuple(grad_torch.main(*inputs))]
        onnx = run_export("onnx", compile_source(text, path=str(path), target="onnx",
                                                 grad=True, **options).text, arrays)
        verdicts.append((f"--grad ({count(len(grads) - 1, 'gradient')}, ONNX)",
                         close(onnx, grads)))
    return export_outcome(label, verdicts, "the generated PyTorch")


_LABELS = {"onnx": "ONNX", "stablehlo": "StableHLO"}


def export_outcome(label: str, verdicts: Sequence[tuple[str, bool]], against: str) -> Outcome:
    ok = all(agree for _, agree in verdicts)
    what = ", ".join(f"{name} {'agrees' if agree else 'DISAGREES'}" for name, agree in verdicts)
    return Outcome(label, f"no kernels; against {against}: {what}", ok)


def run_export(target: str, exported: Any, arrays: list) -> list:
    """Run an export: ONNX by onnxruntime, StableHLO by XLA."""
    if target == "onnx":
        return load_onnx(exported)(*arrays)  # checked, bf16 exchanged as f32
    return list(run_stablehlo(exported, *arrays))


def count(n: int, noun: str) -> str:
    """`1 gradient`, `6 gradients`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _array(x: Any) -> Any:
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float32) if isinstance(x, float) else np.asarray(x)


def _tuple(x: Any) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def close(got: Sequence[Any], want: Sequence[Any]) -> bool:
    """Every output within 1e-4 relative, 1e-5 absolute (f32 summed in another order)."""
    return len(got) == len(want) and all(
        np.shape(g) == np.shape(w) and np.allclose(np.asarray(g, dtype=np.float64),
                                                   np.asarray(w, dtype=np.float64),
                                                   rtol=1e-4, atol=1e-5)
        for g, w in zip(got, want))
