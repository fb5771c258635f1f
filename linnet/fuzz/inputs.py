"""Random inputs for an op or entry: reproducible from a seed, in several styles.

Why a module of its own: `linnet verify`, the hypothesis strategies and the benchmarks all
draw inputs the same way (normal, uniform, large, unit and positive floats; integers in a
small range; fair coins), and those draws must not change when the harness around them does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..check.types import FLOAT

if TYPE_CHECKING:
    from .spec import TargetSpec

__all__ = ["INPUT_STYLES", "Override", "default_device", "make_inputs", "torch_dtype"]


def _normal(g, shape):
    import torch
    return torch.randn(shape, generator=g, dtype=torch.float64)


def _uniform(g, shape):
    import torch
    return torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1


def _large(g, shape):
    return _normal(g, shape) * 100


def _unit(g, shape):
    """Magnitudes in [0.5, 1.5], random signs: products of many stay in range."""
    import torch
    magnitude = torch.rand(shape, generator=g, dtype=torch.float64) + 0.5
    sign = torch.where(torch.rand(shape, generator=g) < 0.5, -1.0, 1.0).to(torch.float64)
    return magnitude * sign


def _positive(g, shape):
    import torch
    return torch.rand(shape, generator=g, dtype=torch.float64) + 0.5


INPUT_STYLES: dict[str, Callable] = {
    "normal": _normal,      # standard normal
    "uniform": _uniform,    # uniform in [-1, 1]
    "large": _large,        # normal times 100 (softmax must subtract its maximum)
    "unit": _unit,          # magnitudes in [0.5, 1.5], random signs
    "positive": _positive,  # uniform in [0.5, 1.5]
}

TORCH_DTYPE_NAMES = {"bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32",
                 "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
                 "u64": "uint64", "f16": "float16", "bf16": "bfloat16", "f32": "float32",
                 "f64": "float64"}


def torch_dtype(name: str):
    import torch
    return getattr(torch, TORCH_DTYPE_NAMES[name])


def dtype_name(x) -> str:
    """A tensor's dtype by its Linnet name (`f32` for torch.float32)."""
    name = str(x.dtype).replace("torch.", "")
    return {v: k for k, v in TORCH_DTYPE_NAMES.items()}.get(name, name)


def default_device() -> str:
    """`"cuda"` when a CUDA device is available, else `"cpu"`."""
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


Override = Any  # a value, or a callable (shape, dtype name, torch.Generator) -> value


def make_inputs(spec: TargetSpec, values: Mapping[str, Any], *, seed: int = 0,
                style: str = "normal", overrides: Mapping[str, Override] | None = None,
                device: str | None = None) -> list:
    """Random inputs for `spec` at `values`, reproducible from `seed`.

    Float tensors follow `style` (a key of `INPUT_STYLES`); float scalars (such as an
    `eps` or a `scale`) are Python floats uniform in [0.05, 1]; integers are uniform in
    [-50, 50] ([0, 100] unsigned); bools are fair coins. `overrides` maps a parameter name
    to a fixed value or to a callable `(shape, dtype, generator) -> value`.
    """
    import torch
    overrides = overrides or {}
    device = device or default_device()
    g = torch.Generator().manual_seed(seed)
    out = []
    for (name, _), (shape, dtype) in zip(spec.inputs(values), spec.shapes(values)):
        if name in overrides:
            v = overrides[name]
            v = v(shape, dtype, g) if callable(v) else v
        elif dtype in FLOAT and not shape:
            v = float(0.05 + 0.95 * torch.rand((), generator=g, dtype=torch.float64))
        elif dtype in FLOAT:
            v = INPUT_STYLES[style](g, shape)
        elif dtype == "bool":
            v = torch.rand(shape, generator=g) < 0.5
        else:
            lo, hi = (0, 101) if dtype.startswith("u") else (-50, 51)
            v = torch.randint(lo, hi, shape, generator=g, dtype=torch.int64)
        if isinstance(v, torch.Tensor):
            v = v.to(torch_dtype(dtype)).to(device)
        out.append(v)
    return out
