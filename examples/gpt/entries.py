"""The Linnet model of `gpt.linnet` as an object whose methods are its entries: each entry
compiled for the bound sizes, the weights passed after the entry's own inputs in manifest
order, and the states kept here between calls (zeros at first) and threaded through by hand.

This is how a block entry runs with the compiled entries alone; a loader that returns a
module with the entries as methods and the states inside does the same.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import torch

GPT = Path(__file__).resolve().parent / "gpt.linnet"
DTYPES = {"f32": torch.float32, "i64": torch.int64}
_LAUNCHER = re.compile(r"def (\w+_launch)\(.*\n    # launches \w+ \(kernel (\w+?)__")


class LinnetGpt:
    """prefill(tokens[B, T]), decode(token[B]), loss_and_grads(tokens, targets)."""

    def __init__(self, sizes: dict[str, int], weights: dict[str, torch.Tensor],
                 numerics: str = "equivalent", target: str = "torch", device: str = "cpu",
                 on_import: Callable[[Any, str], None] | None = None) -> None:
        self.sizes, self.numerics, self.target, self.device = dict(sizes), numerics, target, device
        self.weights = {path: w.to(device) for path, w in weights.items()}
        self.on_import = on_import  # sees each generated torch module and its source
        self.states: dict[str, torch.Tensor] = {}
        self.entries: dict[tuple, tuple] = {}

    def entry(self, name: str, bind: dict[str, int] | None = None, grad: bool = False):
        """The compiled entry's `main` and its manifest (compiled once per binding)."""
        from linnet.pipeline import compile_source
        bind = {**self.sizes, **(bind or {})}
        key = (name, tuple(sorted(bind.items())), grad)
        if key not in self.entries:
            compiled = compile_source(GPT.read_text(), path=str(GPT), entry=name,
                                      target=self.target, bind=bind, numerics=self.numerics,
                                      grad=grad)
            self.entries[key] = (self._load(compiled.text, name), compiled.parameters)
        return self.entries[key]

    def _load(self, text: Any, name: str) -> Callable:
        if self.target == "torch":
            from linnet.torch.runtime import import_generated
            module = import_generated(text, f"gpt_{name}", "torch")
            if self.on_import is not None:
                self.on_import(module, text)
            return module.main
        from linnet.testing.backends import loader
        return loader(self.target)(text, f"gpt_{name}")

    def run(self, name: str, inputs: tuple, bind: dict[str, int] | None = None,
            grad: bool = False) -> list:
        """The entry's results; the next states it returns are kept."""
        main, manifest = self.entry(name, bind, grad)
        extra = [self.state(p) if p.kind == "state" else self.weights[p.path]
                 for p in manifest.inputs]
        results = list(main(*inputs, *extra))
        for path in reversed(manifest.assigned):
            self.states[path] = results.pop()
        return results

    def state(self, p) -> torch.Tensor:
        if p.path not in self.states:
            self.states[p.path] = torch.zeros(p.shape, dtype=DTYPES[p.dtype], device=self.device)
        return self.states[p.path]

    def prefill(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.run("prefill", (tokens,), {"T": tokens.shape[1]})[0]

    def decode(self, token: torch.Tensor) -> torch.Tensor:
        return self.run("decode", (token,))[0]

    def loss_and_grads(self, tokens: torch.Tensor, targets: torch.Tensor
                       ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The loss and its gradient by param path (the `--grad` compile of `loss`)."""
        bind = {"T": tokens.shape[1]}
        _, manifest = self.entry("loss", bind, grad=True)
        loss, *grads = self.run("loss", (tokens, targets), bind, grad=True)
        trained = [p.path for p in manifest.inputs if p.kind == "param"]
        assert len(grads) == len(trained), (len(grads), trained)
        return loss, dict(zip(trained, grads))


def load(weights_path: str | Path, sizes: dict[str, int], **options: Any) -> LinnetGpt:
    """The model for the weights in a safetensors file (`LinnetGpt`'s keywords)."""
    from safetensors.torch import load_file
    return LinnetGpt(sizes, load_file(str(weights_path)), **options)


def launch_counter() -> tuple[Counter, Callable[[Any, str], None]]:
    """A Counter of kernel launches by kernel name, and the `on_import` hook that fills it:
    it wraps each kernel launcher of a generated module (once per module)."""
    launches: Counter = Counter()

    def hook(module: Any, source: str) -> None:
        if getattr(module, "_launches_counted", None) is launches:
            return
        for launcher, kernel in _LAUNCHER.findall(source):
            launch = getattr(module, launcher)
            if hasattr(launch, "__wrapped_launch__"):
                launch = launch.__wrapped_launch__

            def counted(*args, _launch=launch, _kernel=kernel):
                launches[_kernel] += 1
                return _launch(*args)
            counted.__wrapped_launch__ = launch
            setattr(module, launcher, counted)
        module._launches_counted = launches

    return launches, hook
