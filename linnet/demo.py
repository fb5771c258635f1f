"""`make demo`: check every example, compile its `main`, run its kernels against its bodies.

For each program in examples/ the demo prints what it declares, compiles its
`main` entry to a PyTorch module twice (with kernels, and with op bodies only),
runs both on the same random inputs (kernels on the GPU when there is one, else
in Triton's interpreter on the CPU), forward and gradient, and says what ran
and whether the kernels agreed with the bodies. An example without kernels is
exported instead (ONNX, StableHLO, and its `--grad` reverse mode), and each export
is compared with generated PyTorch.
"""

from __future__ import annotations

import atexit
import os
import shutil
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
    """Run the example's `main` with its kernels and with its op bodies; compare them."""
    import torch
    from .testing.harness import compare_kernel_and_body
    from .torch import load_function
    torch.manual_seed(0)
    inputs = random_inputs(load_function(str(path), "main"))
    start = time.perf_counter()
    result = compare_kernel_and_body(path, "main", inputs)
    ms = (time.perf_counter() - start) * 1000
    kernels = ", ".join(_kernel_names(path)) or "none"
    where = result.runtime if result.kernel_ran else "not launched (the body ran)"
    worst = max((e.ratio for e in result.outputs + result.grads), default=0.0)
    body_grads = _ops_without_grad(path)
    agree = "forward agrees" if body_grads else "forward and gradient agree"
    verdict = (f"{agree} with the body (worst error {worst:.2g} of the tolerance)"
               if result.ok else "DISAGREES: " + "; ".join(result.failures()))
    if body_grads:  # differentiated through its body in both runs: nothing to compare
        verdict += (f"; the gradient of {', '.join(body_grads)} is its body's in both runs "
                    "(no grad clause)")
    return f"main: kernel {kernels} on {where}, {ms:.0f} ms; {verdict}"


def _ops_without_grad(path: Path) -> list[str]:
    """The ops with a kernel and no `grad` clause: their gradient is the body's with or
    without the kernel."""
    module = check_program(str(path)).program.root_module
    return [i.name for i in module.items if isinstance(i, t.Op) and i.kernel and not i.grad]


def run_exports(path: Path) -> str:
    """An example without kernels: its `main` from generated PyTorch (op bodies), exported
    to ONNX (run by onnxruntime) and StableHLO (run by XLA), and differentiated (`--grad`,
    from generated PyTorch and from ONNX); every export compared with PyTorch."""
    import numpy as np
    import torch
    from .pipeline import compile_source
    from .torch import load_function
    from .torch.runtime import import_generated
    torch.manual_seed(0)
    fn = load_function(str(path), "main")
    inputs = random_inputs(fn)
    arrays = [x.numpy() for x in inputs]
    want = [o.numpy() for o in _tuple(fn(*inputs))]
    text, agree = path.read_text(), []
    for target, label in (("onnx", "ONNX"), ("stablehlo", "StableHLO")):
        got = _run_export(target, compile_source(text, path=str(path), entry="main",
                                                 target=target).text, arrays)
        agree.append(f"{label} {'agrees' if _close(got, want) else 'DISAGREES'}")
    grad_torch = import_generated(compile_source(text, path=str(path), entry="main",
                                                 grad=True).text, "main_grad")
    grads = [o.numpy() for o in _tuple(grad_torch.main(*inputs))]
    onnx_grads = _run_export("onnx", compile_source(text, path=str(path), entry="main",
                                                    target="onnx", grad=True).text, arrays)
    verdict = "agree" if _close(onnx_grads, grads) else "DISAGREE"
    return (f"main: no kernels; exports: {', '.join(agree)} with PyTorch; --grad: the loss "
            f"and {len(grads) - 1} gradients from ONNX and PyTorch {verdict}")


def _run_export(target: str, exported, arrays: list) -> list:
    if target == "onnx":
        import onnxruntime as ort
        session = ort.InferenceSession(exported.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        return session.run(None, dict(zip(names, arrays)))
    from .testing.stablehlo_run import run_stablehlo
    return list(run_stablehlo(exported, *arrays))


def _tuple(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def _close(got: list, want: list) -> bool:
    import numpy as np
    return len(got) == len(want) and all(
        np.allclose(np.asarray(g, dtype=np.float64), np.asarray(w, dtype=np.float64),
                    rtol=1e-4, atol=1e-5) for g, w in zip(got, want))


def _kernel_names(path: Path) -> list[str]:
    module = check_program(str(path)).program.root_module
    names = [i.kernel.name for i in module.items if isinstance(i, t.Op) and i.kernel]
    return list(dict.fromkeys(names))  # a kernel that several ops bind, once


def main(folder: Path = EXAMPLES) -> int:
    files = sorted(folder.glob("*.linnet"))
    if not files:  # an installed wheel ships the compiler, not the repository's examples
        print(f"linnet.demo: no example programs in {folder}: the demo runs the `examples/` "
              "folder of a source checkout (clone the repository and run `make demo`)",
              file=sys.stderr)
        return 2
    if "LINNET_CACHE" not in os.environ:  # a fresh private folder, not a shared fixed name
        os.environ["LINNET_CACHE"] = tempfile.mkdtemp(prefix="linnet-demo-")
        atexit.register(shutil.rmtree, os.environ["LINNET_CACHE"], True)
    import torch  # importing torch does not import triton: the interpreter can still be chosen
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    failed = 0
    print(f"Checking {len(files)} example programs in {folder.name}/, compiling each `main` "
          "to PyTorch, and running it on random inputs twice: with its kernels (Triton) and "
          "with its op bodies\n")
    for path in files:
        result = check_program(str(path))
        module = result.program.root_module
        summary = describe(module) if module is not None else "did not parse"
        print(f"  {path.name:<20} {'ok' if result.ok else 'ERRORS':<7} {summary}")
        for d in result.diagnostics:
            print("\n" + render(d, result.sources) + "\n")
        if result.ok and not _kernel_names(path):
            line = run_exports(path)
            failed += "DISAGREE" in line
            print(f"  {'':<20} {line}")
        elif result.ok:
            line = run_main(path)
            failed += "DISAGREE" in line or "not launched" in line
            print(f"  {'':<20} {line}")
        failed += not result.ok
    print(f"\n{len(files) - failed} of {len(files)} examples checked, compiled and ran; "
          "every kernel agreed with its body and every export with PyTorch.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
