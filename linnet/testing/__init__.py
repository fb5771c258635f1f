"""Testing Linnet kernels against their op bodies (public API).

- `compare_kernel_and_body(path, op_or_entry, inputs, numerics=..., device=...)`: run the same
  entry with `numerics="exact"` (the body) and with `numerics` (the kernel), and compare every
  output and every floating input's gradient against per-dtype tolerances.
- `target_spec(path, name)`: an op's (or entry's) parameters and the `where` clauses of the op
  and of its kernel, to draw sizes where the kernel applies; `make_inputs` draws inputs.
- `linnet.testing.strategies`: hypothesis strategies over those sizes and inputs (imported on
  first use, so the rest of this package does not need hypothesis).
"""

from __future__ import annotations

from ..fuzz.harness import (INPUT_STYLES, Comparison, LinnetError, OutputError, ProgramError,
                            TargetSpec, Tolerance, compare_kernel_and_body, compare_outputs,
                            compiled, default_device, draw_values, kernel_ops, kernel_runtime,
                            make_inputs, shrink, target_spec, tolerance_for)

__all__ = ["compare_kernel_and_body", "compare_outputs", "Comparison", "OutputError",
           "Tolerance", "tolerance_for", "TargetSpec", "target_spec", "kernel_ops",
           "make_inputs", "INPUT_STYLES", "default_device", "kernel_runtime", "compiled",
           "draw_values", "shrink", "LinnetError", "ProgramError"]


def __getattr__(name: str):
    if name == "strategies":  # lazily: only the strategies need hypothesis
        import importlib
        return importlib.import_module(f"{__name__}.strategies")
    raise AttributeError(f"module 'linnet.testing' has no attribute {name!r}")
