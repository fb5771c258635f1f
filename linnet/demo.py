"""`make demo`: check every example, compile each one's `main` to PyTorch, and run it.

For each program in examples/ the demo prints what it declares, generates the
PyTorch module for its `main` entry, runs it on random inputs, runs the
PyTorch interpreter on the same inputs, and says whether the two agreed.
Kernels do not run yet: every op runs its body.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from .diagnostics import render
from .frontend import check_program
from .syntax import tree as t

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def describe(module: t.Module) -> str:
    counts = {"op": 0, "kernel": 0, "entry": 0, "fn": 0, "grad": 0}
    for item in module.items:
        if isinstance(item, t.Op):
            counts["op"] += 1
            counts["grad"] += item.grad is not None
        elif isinstance(item, t.Kernel):
            counts["kernel"] += 1
        elif isinstance(item, t.Function):
            counts[item.kind] += 1
    plural = {"entry": "entries"}
    return ", ".join(f"{n} {k if n == 1 else plural.get(k, k + 's')}"
                     for k, n in counts.items() if n)


def random_inputs(fn) -> list:
    """Random tensors for an entry with concrete parameter types."""
    import torch
    from .check.types import TensorT
    from .torch.loader import TORCH_DTYPES
    by_name = {v: getattr(torch, k) for k, v in TORCH_DTYPES.items()}
    inputs = []
    for ty in fn._signature().params:
        shape = tuple(d.as_int() for d in ty.dims) if isinstance(ty, TensorT) else ()
        dtype = by_name[ty.dtype] if isinstance(ty, TensorT) else torch.float32
        inputs.append(torch.randn(shape).to(dtype) if dtype.is_floating_point
                      else torch.randint(-5, 5, shape).to(dtype))
    return inputs


def run_main(path: Path) -> str:
    """Compile and run the example's `main`; report what ran and whether it agreed."""
    import torch
    from .torch import load_function
    torch.manual_seed(0)
    compiled = load_function(str(path), "main")
    interpreted = load_function(str(path), "main", compile=False)
    inputs = random_inputs(compiled)
    start = time.perf_counter()
    compiled(*inputs)
    first = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    ours = compiled(*inputs)
    ms = (time.perf_counter() - start) * 1000
    ref = interpreted(*inputs)
    ours, ref = (ours if isinstance(ours, tuple) else (ours,)), (
        ref if isinstance(ref, tuple) else (ref,))
    same = all(torch.equal(a, b) for a, b in zip(ours, ref))
    shapes = ", ".join("x".join(map(str, o.shape)) or "scalar" for o in ours)
    verdict = "agrees with the interpreter" if same else "DISAGREES with the interpreter"
    return (f"main -> {shapes}: compiled and run in {first:.0f} ms, then runs in {ms:.1f} ms; "
            f"{verdict}")


def main(folder: Path = EXAMPLES) -> int:
    os.environ.setdefault("LINNET_CACHE", os.path.join(tempfile.gettempdir(), "linnet-demo"))
    files = sorted(folder.glob("*.linnet"))
    failed = 0
    print(f"Checking {len(files)} example programs in {folder.name}/, compiling each `main` "
          "to PyTorch and running it on random inputs (op bodies; kernels come later)\n")
    for path in files:
        result = check_program(str(path))
        module = result.program.root_module
        summary = describe(module) if module is not None else "did not parse"
        print(f"  {path.name:<20} {'ok' if result.ok else 'ERRORS':<7} {summary}")
        for d in result.diagnostics:
            print("\n" + render(d, result.sources) + "\n")
        if result.ok:
            line = run_main(path)
            failed += "DISAGREES" in line
            print(f"  {'':<20} {line}")
        failed += not result.ok
    print(f"\n{len(files) - failed} of {len(files)} examples checked, compiled and agreed.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
