"""Old module names that still import, for one release, with a DeprecationWarning.

The modules moved into packages that show the architecture (docs/architecture.md):
`linnet.cli_compile` is `linnet.cli.compile`, `linnet.testing.fuzz` is `linnet.fuzz`, the
passes sit in `linnet.passes.front|middle|egraph|adjoint|kernels`. Code that imports an old
name gets the module under its new name (the same module object, so state is shared) and a
DeprecationWarning naming the new one. `linnet/__init__.py` installs the finder.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
import warnings
from importlib.machinery import ModuleSpec
from types import ModuleType

MOVED: dict[str, str] = {
    "linnet.tune.records": "linnet.tuning.records",
    "linnet.tune.candidates": "linnet.tuning.candidates",
    "linnet.cli_compile": "linnet.cli.compile",
    "linnet.cli_fuzz": "linnet.cli.fuzz",
    "linnet.cli_inspect": "linnet.cli.inspect",
    "linnet.cli_io": "linnet.cli.io",
    "linnet.cli_presence": "linnet.cli.presence",
    "linnet.cli_report": "linnet.cli.report",
    "linnet.cli_tune": "linnet.cli.tune",
    "linnet.cli_verify": "linnet.cli.verify",
    "linnet.declarations": "linnet.cli.declarations",
    "linnet.onnx_symbolic": "linnet.cli.onnx_symbolic",
    "linnet.program": "linnet.syntax.program",
    "linnet.frontend": "linnet.check.frontend",
    "linnet.jax.batch_rule": "linnet.check.batch_rule",
    "linnet.passes.adjoint_checks": "linnet.passes.front.grad_checks",
    "linnet.passes.block_entry": "linnet.passes.front.block_entry",
    "linnet.passes.block_instances": "linnet.passes.front.block_instances",
    "linnet.passes.block_sharing": "linnet.passes.front.block_sharing",
    "linnet.passes.entry_interface": "linnet.passes.front.entry_interface",
    "linnet.passes.elaborate": "linnet.passes.front.elaborate",
    "linnet.passes.elaborate_blocks": "linnet.passes.front.flatten_blocks",
    "linnet.passes.elaborate_builder": "linnet.passes.front.builder",
    "linnet.passes.elaborate_exprs": "linnet.passes.front.expressions",
    "linnet.passes.elaborate_fold": "linnet.passes.front.folding",
    "linnet.passes.elaborate_instances": "linnet.passes.front.instances",
    "linnet.passes.elaborate_kernel": "linnet.passes.front.elaborate_kernel",
    "linnet.passes.elaborate_notation": "linnet.passes.front.index_notation",
    "linnet.passes.elaborate_stmts": "linnet.passes.front.statements",
    "linnet.passes.elaborate_structs": "linnet.passes.front.structs",
    "linnet.passes.elaborate_values": "linnet.passes.front.vocabulary",
    "linnet.passes.elaborate_walks": "linnet.passes.front.surface_walks",
    "linnet.passes.inline_fns": "linnet.passes.middle.inline_fns",
    "linnet.passes.merge_reductions": "linnet.passes.middle.merge_reductions",
    "linnet.passes.index_notation": "linnet.passes.middle.lower_index_notation",
    "linnet.passes.fold_constants": "linnet.passes.middle.fold_constants",
    "linnet.passes.hoist_invariants": "linnet.passes.middle.hoist_loop_invariants",
    "linnet.passes.cse": "linnet.passes.middle.cse",
    "linnet.passes.dce": "linnet.passes.middle.dce",
    "linnet.passes.drop_dead_carries": "linnet.passes.middle.drop_dead_carries",
    "linnet.passes.outline_deep": "linnet.passes.middle.outline_deep_blocks",
    "linnet.passes.differentiate": "linnet.passes.adjoint.differentiate",
    "linnet.passes.adjoints": "linnet.passes.adjoint.rules",
    "linnet.passes.adjoint_emit": "linnet.passes.adjoint.emit",
    "linnet.passes.adjoint_loops": "linnet.passes.adjoint.loops",
    "linnet.passes.adjoint_reverse": "linnet.passes.adjoint.reverse",
    "linnet.passes.adjoint_values": "linnet.passes.adjoint.values",
    "linnet.passes.egraph_products": "linnet.passes.egraph.egraph_products",
    "linnet.passes.egraph_run": "linnet.passes.egraph.run",
    "linnet.passes.egraph_translate": "linnet.passes.egraph.translate",
    "linnet.passes.egraph_cache": "linnet.passes.egraph.cache",
    "linnet.passes.choose_kernels": "linnet.passes.kernels.choose_kernels",
    "linnet.passes.kernel_tuning": "linnet.passes.kernels.kernel_tuning",
    "linnet.passes.instantiate_kernels": "linnet.passes.kernels.instantiate_kernels",
    "linnet.passes.fold_masks": "linnet.passes.kernels.fold_proved_masks",
    "linnet.passes.exact_division": "linnet.passes.kernels.exact_division",
    "linnet.passes.fast_math": "linnet.passes.kernels.fast_math",
    "linnet.passes.lower_kernel_scans": "linnet.passes.kernels.lower_kernel_scans",
    "linnet.passes.lower_kernel_einsums": "linnet.passes.kernels.lower_kernel_einsums",
    "linnet.emit.kernel_numerics": "linnet.ir.kernel_numerics",
    "linnet.testing.fuzz": "linnet.fuzz",
    "linnet.testing.programs": "linnet.fuzz.programs",
    "linnet.testing.oracle": "linnet.fuzz.oracle",
    "linnet.testing.reduce": "linnet.fuzz.reduce",
    "linnet.testing.harness": "linnet.fuzz.harness",
    "linnet.testing.backends": "linnet.fuzz.backends",
    "linnet.testing.block_specs": "linnet.fuzz.block_specs",
    "linnet.testing.case": "linnet.fuzz.case",
    "linnet.testing.child_process": "linnet.fuzz.child_process",
    "linnet.testing.comparison": "linnet.fuzz.comparison",
    "linnet.testing.crosscheck": "linnet.fuzz.crosscheck",
    "linnet.testing.inputs": "linnet.fuzz.inputs",
    "linnet.testing.jax_compare": "linnet.fuzz.jax_compare",
    "linnet.testing.onnx_run": "linnet.fuzz.onnx_run",
    "linnet.testing.precision": "linnet.fuzz.precision",
    "linnet.testing.sizes": "linnet.fuzz.sizes",
    "linnet.testing.spec_refs": "linnet.fuzz.spec_refs",
    "linnet.testing.stablehlo_run": "linnet.fuzz.stablehlo_run",
    "linnet.verify": "linnet.fuzz.verify",
    "linnet.verify_trials": "linnet.fuzz.verify_trials",
    "linnet.demo_blocks": "linnet.demo.blocks",
    "linnet.demo_entries": "linnet.demo.entries",
}


def new_name(old: str) -> str | None:
    """The module's new name, when old (or the package it is in) moved; else None."""
    for prefix in sorted(MOVED, key=len, reverse=True):
        if old == prefix or old.startswith(prefix + "."):
            return MOVED[prefix] + old[len(prefix):]
    return None


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old name as its new module, with a DeprecationWarning."""

    def find_spec(self, fullname: str, path=None, target=None) -> ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        return ModuleSpec(fullname, self, is_package=False)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        new = new_name(spec.name)
        warnings.warn(f"{spec.name} moved to {new}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module ran under its new name already."""


def install() -> None:
    """Put the finder first on `sys.meta_path` (once)."""
    if not any(isinstance(f, MovedModules) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModules())
