"""Helpers for the project's own tests (the fuzz corpus, mutations, rule soundness, child
environments), and the hypothesis strategies over a kernel's sizes and inputs.

Comparing kernels with their op bodies is `linnet.fuzz` now; its names still import from
here, with a DeprecationWarning, for one release:

- `compare_kernel_and_body(path, op_or_entry, inputs, numerics=..., device=...)`: run the same
  entry with `numerics="exact"` (the body) and with `numerics` (the kernel), and compare every
  output and every floating input's gradient against per-dtype tolerances.
- `target_spec(path, name)`: an op's (or entry's) parameters and the `where` clauses of the op
  and of its kernel, to draw sizes where the kernel applies; `make_inputs` draws inputs.
- `linnet.testing.strategies`: hypothesis strategies over those sizes and inputs (imported on
  first use, so the rest of this package does not need hypothesis).

The moved names import `linnet.fuzz` on first use too: a process that imports a helper of
this package (the fork server, `child_env`) loads nothing else of the compiler.
"""

from __future__ import annotations

import importlib
import warnings

# Were imported from here; now `linnet.fuzz` (the differential harness users run) has them.
MOVED_TO_FUZZ = ("compare_kernel_and_body", "compare_outputs", "Comparison", "OutputError",
                 "Tolerance", "tolerance_for", "TargetSpec", "target_spec", "kernel_ops",
                 "make_inputs", "INPUT_STYLES", "default_device", "kernel_runtime", "compiled",
                 "draw_values", "shrink", "LinnetError", "ProgramError")


def __getattr__(name: str):
    if name == "strategies":  # lazily: only the strategies need hypothesis
        return importlib.import_module(f"{__name__}.strategies")
    if name in MOVED_TO_FUZZ:
        warnings.warn(f"linnet.testing.{name} moved to linnet.fuzz.{name}; the old name goes "
                      "in the next release", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("linnet.fuzz.harness"), name)
    raise AttributeError(f"module 'linnet.testing' has no attribute {name!r}")
