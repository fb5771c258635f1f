"""`examples/layer_norm.linnet` as a user runs it: `layer_norm_any` and `layer_norm_bf16_any`
through `linnet.torch.load_function`, forward and `y.backward(dy)`, against PyTorch's own
`F.layer_norm` and its autograd.

Kernels run (Triton's interpreter on the CPU, `tests/conftest.py`; CUDA on a GPU), and the
test checks that the backward pass launches the grad clause's kernel
(`layer_norm_backward_rows`) rather than running an op body. Shapes are ragged against the
tiles: a single column, R not a multiple of the RB rows a program takes, and one shape where
the backward programs take two tiles of rows each (STEPS = 2), the last one half outside.
"""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from linnet.torch import load_function

from kernel_cases import DEVICE, example

EPS = 1e-5
# (R, C): RB = max(1, 4096 / next_pow2(C)) rows a program, STEPS = max(1, R / (256 * RB))
SHAPES = [(5, 1), (33, 100), (7, 768), (5, 1000), (2100, 1000)]
KERNELS = ("layer_norm_rows", "layer_norm_backward_rows")
_LAUNCHER = re.compile(r"def (\w+_launch)\(.*\n    # launches \w+ \(kernel (\w+?)__")


def _launch_counts(entry, values: dict[str, int], run) -> dict[str, int]:
    """Wrap each kernel launcher of the module behind `run`; count launches per kernel."""
    kernel_of = dict(_LAUNCHER.findall(entry.source(**values)))
    counts = dict.fromkeys(kernel_of.values(), 0)
    namespace = run.__globals__
    for launcher, kernel in kernel_of.items():
        def counted(*args, _launch=namespace[launcher], _kernel=kernel):
            counts[_kernel] += 1
            return _launch(*args)
        namespace[launcher] = counted
    return counts


def _inputs(r: int, c: int, dtype: torch.dtype, seed: int):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(r, c, generator=g) * 2 + 0.5
    w = torch.randn(c, generator=g)
    b = torch.randn(c, generator=g)
    dy = torch.randn(r, c, generator=g)
    return [t.to(dtype).to(DEVICE) for t in (x, w, b, dy)]


def _torch_reference(x, w, b, dy):
    """F.layer_norm and its autograd in float64, from the same (rounded) inputs."""
    leaves = [t.detach().double().requires_grad_() for t in (x, w, b)]
    y = F.layer_norm(leaves[0], (x.shape[1],), leaves[1], leaves[2], EPS)
    y.backward(dy.double())
    return [y.detach()] + [t.grad for t in leaves]


def _run(entry_name: str, x, w, b, dy):
    entry = load_function(example("layer_norm"), entry_name)
    leaves = [t.detach().clone().requires_grad_() for t in (x, w, b)]
    entry(*leaves)  # compiled and cached for these shapes
    run = next(iter(entry.by_inputs.values()))
    counts = _launch_counts(entry, {"R": x.shape[0], "C": x.shape[1]}, run)
    y = entry(*leaves)
    y.backward(dy)
    return [y.detach()] + [t.grad for t in leaves], counts


def _dx_scale(x, w, dy) -> float:
    """The size of dx's terms, max of rstd * |dy * w| over the rows: dx = rstd * (g - mean(g)
    - xhat * mean(g * xhat)) with g = dy * w cancels (to exactly 0 for a single column, where
    rstd = 1 / sqrt(eps) is about 316), so its rounding error is relative to this, not to dx.
    """
    xd = x.double().cpu()
    rstd = torch.rsqrt(xd.var(dim=1, unbiased=False) + EPS)
    g = dy.double().cpu() * w.double().cpu()
    return (rstd[:, None] * g.abs()).max().item()


def _assert_close(got: torch.Tensor, want: torch.Tensor, rtol: float, what: str,
                  scale: float = 1.0) -> None:
    """|got - want| <= rtol * (|want| + max |want| + scale): relative, with an absolute floor
    at the output's scale (a column sum can cancel to near zero) and at the size of the
    terms that make it (`scale`: of order 1 for the inputs, `_dx_scale` for dx)."""
    got, want = got.double().cpu(), want.cpu()
    bound = rtol * (want.abs() + want.abs().max() + scale)
    worst = ((got - want).abs() / bound).max().item()
    assert worst <= 1.0, f"{what}: {worst:.3g} of the tolerance"


@pytest.mark.parametrize(("r", "c"), SHAPES, ids=[f"R{r}_C{c}" for r, c in SHAPES])
def test_f32_forward_and_gradients_match_torch(r: int, c: int) -> None:
    x, w, b, dy = _inputs(r, c, torch.float32, seed=r + c)
    got, counts = _run("layer_norm_any", x, w, b, dy)
    scales = {"dx": _dx_scale(x, w, dy)}
    for what, g, want in zip(("y", "dx", "dw", "db"), got, _torch_reference(x, w, b, dy)):
        assert g.dtype == torch.float32, what
        _assert_close(g, want, 1e-6, what, scales.get(what, 1.0))
    assert counts == {k: 1 for k in KERNELS}, counts


@pytest.mark.parametrize(("r", "c"), SHAPES[:4], ids=[f"R{r}_C{c}" for r, c in SHAPES[:4]])
def test_bf16_forward_and_gradients_match_torch(r: int, c: int) -> None:
    """bf16 in and out, f32 inside: within a few bf16 roundings of the exact answer."""
    x, w, b, dy = _inputs(r, c, torch.bfloat16, seed=r * c)
    got, counts = _run("layer_norm_bf16_any", x, w, b, dy)
    scales = {"dx": _dx_scale(x, w, dy)}
    for what, g, want in zip(("y", "dx", "dw", "db"), got, _torch_reference(x, w, b, dy)):
        assert g.dtype == torch.bfloat16, what
        _assert_close(g, want, 1e-2, what, scales.get(what, 1.0))
    assert counts == {k: 1 for k in KERNELS}, counts


def test_the_tiles_follow_the_row_width() -> None:
    """RB rows of next_pow2(C) columns a program, and about 256 backward programs."""
    text = load_function(example("layer_norm"), "layer_norm_any").source(R=8192, C=768)
    assert "kernel layer_norm_rows<R=8192, C=768, T=f32, RB=4, BC=1024>" in text
    assert ("kernel layer_norm_backward_rows<R=8192, C=768, T=f32, RB=4, BC=1024, STEPS=8>"
            in text)
    assert "grid (2048,)" in text and "grid (256,)" in text
    wide = load_function(example("layer_norm"), "layer_norm_any").source(R=64, C=8192)
    assert "kernel layer_norm_rows<R=64, C=8192, T=f32, RB=1, BC=8192>" in wide
