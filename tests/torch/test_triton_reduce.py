"""`linnet.torch.triton_reduce`: the interpreter's reductions with the generated kernels'
combines (`_lt_fmax`, `_lt_fmin`, `_lt_mul`) folded a slice at a time (the maxima and minima
in pairs) give the same bits as Triton's own element-by-element fold, NaN, signed zeros and
infinities included, on every axis and over the whole tile."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("the patch is for Triton's interpreter", allow_module_level=True)

from triton.runtime import interpreter  # noqa: E402

from linnet.emit.triton import JIT_HELPERS  # noqa: E402
from linnet.torch.runtime import import_generated  # noqa: E402
from linnet.torch.triton_reduce import element_wise_reduce, install  # noqa: E402

COMBINES = ("_lt_fmax", "_lt_fmin", "_lt_mul")
KERNEL = "\n".join(["import triton", "import triton.language as tl", ""]
                   + [JIT_HELPERS[name] for name in COMBINES] + ['''

@triton.jit
def fold(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr,
         OP: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    if OP == 0:
        y = tl.reduce(x, AXIS, _lt_fmax)
    elif OP == 1:
        y = tl.reduce(x, AXIS, _lt_fmin)
    else:
        y = tl.reduce(x, AXIS, _lt_mul)
    if AXIS == 0:
        tl.store(y_ptr + tl.arange(0, C), y)
    else:
        tl.store(y_ptr + tl.arange(0, R), y)


@triton.jit
def fold_all(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    tl.store(y_ptr, tl.reduce(x, None, _lt_fmax))
'''])

R, C = 8, 16


def _special(seed: int) -> torch.Tensor:
    """Values around 1 (products stay finite) with NaN, both zeros and infinities mixed in."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, (R, C)).astype(np.float32) * rng.choice([-1, 1], (R, C))
    special = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf], np.float32)
    where = rng.random((R, C)) < 0.15
    x[where] = rng.choice(special, where.sum())
    return torch.from_numpy(x)


def _bits(y: torch.Tensor) -> np.ndarray:
    return y.numpy().view(np.int32)


def _both(monkeypatch, run) -> tuple[np.ndarray, np.ndarray]:
    assert install()
    sliced = run()
    with monkeypatch.context() as m:
        m.setattr(interpreter.ReduceOps, "generic_reduce", element_wise_reduce())
        element_wise = run()
    return sliced, element_wise


@pytest.mark.parametrize("op", range(len(COMBINES)), ids=COMBINES)
@pytest.mark.parametrize("axis", [0, 1])
def test_the_sliced_fold_gives_the_element_wise_bits(monkeypatch, op, axis) -> None:
    module = import_generated(KERNEL, "reduce_fold")
    x = _special(10 * op + axis)

    def run() -> np.ndarray:
        y = torch.empty(C if axis == 0 else R)
        module.fold[(1,)](x, y, R, C, axis, op)
        return _bits(y)

    sliced, element_wise = _both(monkeypatch, run)
    assert np.array_equal(sliced, element_wise)
    assert np.isnan(sliced.view(np.float32)).any()  # NaN reached the results: it propagated


def test_a_fold_over_the_whole_tile_is_the_same_scalar(monkeypatch) -> None:
    module = import_generated(KERNEL, "reduce_fold")
    x = _special(3).abs().nan_to_num(nan=0.25)

    def run() -> np.ndarray:
        y = torch.empty(1)
        module.fold_all[(1,)](x, y, R, C)
        return _bits(y)

    sliced, element_wise = _both(monkeypatch, run)
    assert np.array_equal(sliced, element_wise) and sliced.view(np.float32)[0] == np.inf

