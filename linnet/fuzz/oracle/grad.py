"""Central finite differences of an entry's gradient, in f64: the reference the fuzzer holds
`--grad` exports to (docs/language.md, "Gradients": the gradient of the loss with respect to every
floating input, scalars included, in parameter order)."""

from __future__ import annotations

from typing import Collection

import numpy as np

from ..case import Case
from .dtypes import dtype_name
from .evaluate import DEFAULT_PATH, evaluate, floating_inputs, returned_states
from .errors import OracleError


def gradient_fd(case: Case, eps: float = 1e-6, path: str = DEFAULT_PATH,
                dtypes: Collection[str] | None = None, *, tanh_skew: float = 0.0
                ) -> tuple[np.ndarray, ...]:
    """`d loss / d x` for each floating input x, by `(f(x + h) - f(x - h)) / 2h` with
    `h = eps * max(1, |x|)` per element, every float computed in f64 (0 where both sides are
    equal, infinities included). The entry must return one floating scalar. With `dtypes`
    ("f32", "f64"), an input of another dtype gets NaN, not computed: each element costs two
    evaluations of the program, and the fuzzer compares no half-precision gradient.
    A block entry's next states, returned after its loss, are not differentiated; its
    floating params are, after its own inputs (buffers and states are not). `tanh_skew`:
    of the function whose `tanh` is skewed so (`Precision`, `gradient_slack`)."""
    base = evaluate(case, precision="f64", path=path, tanh_skew=tanh_skew)
    if len(base) != 1 + returned_states(case, path) or base[0].ndim != 0 \
            or base[0].dtype != np.float64:
        raise OracleError("gradient_fd needs an entry that returns one floating scalar")
    inputs = [np.asarray(x) for x in case.inputs]
    grads = []
    for k in floating_inputs(case, path):
        x = inputs[k].astype(np.float64)
        if dtypes is not None and dtype_name(inputs[k]) not in dtypes:
            grads.append(np.full(x.shape, np.nan))
            continue
        g = np.zeros(x.shape, dtype=np.float64)
        for pos in np.ndindex(*x.shape):
            h = eps * max(1.0, abs(float(x[pos])))
            up, down = x.copy(), x.copy()
            up[pos] += h
            down[pos] -= h
            f_up = _loss(case, inputs, k, up, path, tanh_skew)
            f_down = _loss(case, inputs, k, down, path, tanh_skew)
            # equal values (infinities too: a loss of -inf that x does not change) are flat
            g[pos] = 0.0 if f_up == f_down else (f_up - f_down) / (2 * h)
        grads.append(g)
    return tuple(grads)


TANH_ULPS = 5.0
"""How many ulps a backend's `tanh` may be off: XLA's f32 `tanh` on the CPU is off by up to
4.6 (PyTorch's by half of one)."""


def gradient_slack(case: Case, eps: float = 1e-6, path: str = DEFAULT_PATH,
                   dtypes: Collection[str] | None = None, ulps: float = TANH_ULPS,
                   base: tuple[np.ndarray, ...] | None = None
                   ) -> tuple[np.ndarray, ...] | None:
    """How far from `gradient_fd` an honest backend's gradients may land because its
    `tanh` is `ulps` ulps off (None for a program without `tanh`): reverse mode reads the
    slope of `tanh` off its output, `1 - t*t`, which near saturation turns an error of
    `ulps` in t into a relative error of `2 * ulps * u * t*t / (1 - t*t)` in the slope (13%
    at `tanh(6.9)` in f32), and a gradient through several saturated layers carries it.
    Each element's largest change when every `tanh`'s slope is skewed so, either way
    (`base`: `gradient_fd`'s gradients, when they are at hand)."""
    if "tanh" not in case.text:
        return None
    base = base if base is not None else gradient_fd(case, eps, path, dtypes)
    skewed = [gradient_fd(case, eps, path, dtypes, tanh_skew=s * ulps) for s in (1, -1)]
    return tuple(np.nan_to_num(np.maximum(np.abs(up - g), np.abs(down - g)))
                 for g, up, down in zip(base, *skewed))


def _loss(case: Case, inputs: list, k: int, x: np.ndarray, path: str,
          tanh_skew: float = 0.0) -> float:
    shifted = list(inputs)
    shifted[k] = x
    return float(evaluate(case.with_inputs(tuple(shifted)), precision="f64", path=path,
                          tanh_skew=tanh_skew)[0])
