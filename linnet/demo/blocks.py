"""`make demo`, root blocks: a model loaded with random weights, its entries called as
methods, as docs/models.md shows a user doing.

The model is `linnet.torch.load(path, generics=..., weights=...)`, the weights random
tensors of the manifest's shapes (`model.manifest`). The root's generics take their
defaults, else small sizes (`entries.choose_values`); so do the entries' own. A root
with optional members runs twice: with a checkpoint that holds none of them (absent) and
with one that holds them all (present). Entries run in declaration order on one model, so
each sees the states the previous ones left (a `decode` after a `prefill`).

With kernels, the model is loaded twice, `numerics="exact"` (op bodies only) and
`"equivalent"` (kernels where their `where` holds), and every result, next state and, for
a loss, every parameter's gradient is compared within the harness's tolerances. Without
kernels, each entry is exported to ONNX and StableHLO and run on the model's own tensors
(after the entry's own inputs, in manifest order), compared with the model's results and
next states; a loss also under `--grad`, against `loss.backward()`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..fuzz.harness import compare_outputs, entries, target_spec, tolerance_for
from ..pipeline import compile_source
from ..torch import load
from .entries import (Outcome, choose_values, close, count, export_outcome, failure,
                      is_loss, kernels_chosen, own_inputs, run_export, seed_of, sizes_text)

__all__ = ["block_entry_names", "checkpoints", "run_model"]

WEIGHT_SCALE = 0.3  # random weights this small keep tanh and softmax away from saturation


def block_entry_names(path: Path) -> list[str]:
    """The root block's entries ([] when the file has no root block)."""
    return [n for n in entries(path) if target_spec(path, n).block is not None]


def run_model(path: Path, names: list[str], has_kernels: bool) -> list[Outcome]:
    """Every entry of the root block, for each presence of its optional members."""
    specs = [target_spec(path, n) for n in names]
    first = specs[0]
    chooser = (lambda values: kernels_chosen(first, values)) if has_kernels else None
    drawn = choose_values(first, seed_of(path.name), kernels=chooser)
    root_values = {g: drawn[g] for g in first.block.generics}
    outcomes = []
    for present, weights in checkpoints(path, root_values):
        run = _KernelRun(path, root_values, weights) if has_kernels \
            else _ExportRun(path, root_values, weights)
        for spec in specs:
            seed = seed_of(path.name, spec.name)
            values = choose_values(spec, seed, fixed=root_values)
            label = f"{first.block.root}.{spec.name}{sizes_text(spec, values)}{present}"
            try:
                outcomes.append(run.entry(spec, values, own_inputs(spec, values, seed), label))
            except Exception as err:  # noqa: BLE001 - one entry's failure, reported as such
                outcomes.append(failure(label, err))
    return outcomes


def checkpoints(path: Path, root_values: dict) -> list[tuple[str, dict]]:
    """("", weights) for a root without optional members; else a checkpoint without
    them and one with them all."""
    import torch
    manifest = load(str(path), generics=root_values).manifest
    torch.manual_seed(seed_of(path.name, "weights"))
    weights = {p.path: _random(p) for p in manifest.parameters if p.kind != "state"}
    if not any(p.optional for p in manifest.parameters):
        return [("", weights)]
    required = {k: v for k, v in weights.items() if not manifest.by_path()[k].optional}
    optional = sorted(k for k in weights if k not in required)
    return [(" (optional members absent)", required),
            (f" (optional members present: {', '.join(optional)})", weights)]


def _random(p: Any) -> Any:
    import torch
    from ..torch.block_module import TORCH_DTYPES
    dtype = TORCH_DTYPES[p.dtype]
    if dtype.is_floating_point:
        return (torch.randn(p.shape) * WEIGHT_SCALE).to(dtype)
    return torch.randint(0, 4, p.shape).to(dtype)


class _KernelRun:
    """The model with kernels and with op bodies only, called alike."""

    def __init__(self, path: Path, root_values: dict, weights: dict) -> None:
        self.kernels = load(str(path), generics=root_values, weights=weights)
        self.bodies = load(str(path), generics=root_values, weights=weights, numerics="exact")

    def entry(self, spec: Any, values: dict, inputs: list, label: str) -> Outcome:
        body = self._call(self.bodies, spec, inputs)
        before = _launches(self.kernels, spec.name)
        kernel = self._call(self.kernels, spec, inputs)
        launched = _launches(self.kernels, spec.name) - before
        n = max([x.numel() for x in inputs if hasattr(x, "numel")] + [1])
        errors = [compare_outputs(name, b, k, tolerance_for(_dtype(b), "equivalent", n))
                  for (name, b), (_, k) in zip(body, kernel)]
        bad = [str(e) for e in errors if not e.ok]
        if bad:
            return Outcome(label, "DISAGREES with the bodies: " + "; ".join(bad), False)
        worst = max((e.ratio for e in errors), default=0.0)
        what = ("results, next states and gradients" if is_loss(spec)
                else "results and next states")
        if not launched:
            return Outcome(label, f"no kernel launched (the bodies ran): {what} agree", True)
        return Outcome(label, f"{launched} kernel launches: {what} agree with "
                       f"the bodies (worst error {worst:.2g} of the tolerance)", True)

    def _call(self, model: Any, spec: Any, inputs: list) -> list[tuple[str, Any]]:
        """(name, tensor) of each result, each state the entry assigns and, for a loss,
        each parameter's gradient."""
        model.zero_grad(set_to_none=True)
        result = model.entry(spec.name)(*inputs)
        results = list(result) if isinstance(result, tuple) else [result]
        out = [(f"result {k}", r.detach()) for k, r in enumerate(results)]
        if is_loss(spec):
            result.backward()
            out += [(f"d {name}", p.grad) for name, p in model.named_parameters()
                    if p.grad is not None]
        out += [(name, b) for name, b in model.named_buffers()
                if name not in model.state_dict()]  # the states: non-persistent buffers
        return out


class _ExportRun:
    """The model, and each entry exported to ONNX and StableHLO run on its tensors."""

    def __init__(self, path: Path, root_values: dict, weights: dict) -> None:
        self.path, self.root_values, self.weights = path, root_values, weights
        self.model = load(str(path), generics=root_values, weights=weights)

    def _compile(self, spec: Any, values: dict, target: str, grad: bool = False) -> Any:
        return compile_source(path=str(self.path), target=target, entry=spec.name,
                              root=spec.block.root, bind={**self.root_values, **values},
                              present=self.weights.keys(), grad=grad)

    def _tensors(self, manifest: Any) -> list:
        return [self.model.tensor(p).detach().numpy() for p in manifest.inputs]

    def entry(self, spec: Any, values: dict, inputs: list, label: str) -> Outcome:
        verdicts = []
        for target in ("onnx", "stablehlo"):
            exported = self._compile(spec, values, target)
            verdicts.append((_TARGETS[target], self._forward(spec, exported, target, inputs)))
        if is_loss(spec):
            exported = self._compile(spec, values, "onnx", grad=True)
            got, want = self._gradients(spec, exported, inputs)
            verdicts.append((f"--grad ({count(len(want) - 1, 'gradient')}, ONNX)",
                             close(got, want)))
        self.model.reset_state()
        return export_outcome(label, verdicts, "linnet.torch.load's model")

    def _forward(self, spec: Any, exported: Any, target: str, inputs: list) -> bool:
        """The export on the model's tensors as they are, against one call of the model:
        its results, then the next value of each state the entry assigns."""
        manifest = exported.parameters
        arrays = [_array(x) for x in inputs] + self._tensors(manifest)
        got = run_export(target, exported.text, arrays)
        result = self.model.entry(spec.name)(*inputs)
        results = list(result) if isinstance(result, tuple) else [result]
        by_path = manifest.by_path()
        want = [_array(r) for r in results] + [
            self.model.tensor(by_path[path]).numpy() for path in manifest.assigned]
        return close(got, want)

    def _gradients(self, spec: Any, exported: Any, inputs: list) -> tuple[list, list]:
        """`--grad`'s (loss, d inputs..., d params..., next states...) from ONNX, and the
        same from one call of the model and `loss.backward()`."""
        import torch
        manifest = exported.parameters
        arrays = [_array(x) for x in inputs] + self._tensors(manifest)
        got = run_export("onnx", exported.text, arrays)
        own = [x.clone().requires_grad_(True) if isinstance(x, torch.Tensor)
               and x.dtype.is_floating_point else x for x in inputs]
        self.model.zero_grad(set_to_none=True)
        loss = self.model.entry(spec.name)(*own)
        loss.backward()
        params = [self.model.tensor(p) for p in manifest.inputs
                  if p.kind == "param" and self.model.tensor(p).requires_grad]
        by_path = manifest.by_path()
        want = [_array(loss)] + [_grad(x) for x in own
                                 if isinstance(x, torch.Tensor) and x.requires_grad] \
            + [_grad(p) for p in params] \
            + [self.model.tensor(by_path[path]).numpy() for path in manifest.assigned]
        return got, want


_TARGETS = {"onnx": "ONNX", "stablehlo": "StableHLO"}


def _launches(model: Any, entry: str) -> int:
    """How many times the entry's calls so far launched a kernel."""
    return sum(c["kernel"] for c in model.entry(entry).ran().values())


def _grad(x: Any) -> Any:
    """x's gradient; zeros for one the loss does not read (autograd leaves it None)."""
    return np.zeros(tuple(x.shape), np.float32) if x.grad is None else _array(x.grad)


def _array(x: Any) -> Any:
    return x.detach().cpu().numpy()


def _dtype(x: Any) -> str:
    """The Linnet name of a tensor's dtype (`f32`), which picks its tolerance."""
    from ..torch.block_module import TORCH_DTYPES
    return next(name for name, dtype in TORCH_DTYPES.items() if dtype == x.dtype)
