"""Structs, enums, optionals, defaults, named arguments and `...` on every target.

Each spec program 140-147 runs through the interpreter, PyTorch, JAX, ONNX and
StableHLO (with `--grad` on its `loss` entry) and every target must agree
(`linnet.fuzz.crosscheck`); its entries' values are then checked against the
same computation written directly in PyTorch, on the GPU where there is one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from linnet.fuzz import crosscheck as cc
from linnet.torch import load_function

pytest.importorskip("jax")
pytest.importorskip("onnxruntime")

VALID = Path(__file__).resolve().parents[1] / "spec" / "valid"
PROGRAMS = sorted(VALID.glob("14[0-7]_*.linnet"))
TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_every_target_agrees_and_differentiates(path: Path) -> None:
    report = cc.crosscheck(path.read_text(), path.name)
    assert report.checked and report.findings == []
    for target in TARGETS:
        assert f"run {target} loss" in report.ran
    for target in ("torch", "jax", "onnx", "stablehlo"):
        assert f"run {target} --grad loss" in report.ran


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # on a GPU machine, the GPU


def entry(stem: str, name: str):
    """The entry, called with its inputs on DEVICE; its results come back to the CPU."""
    return on_device(load_function(str(next(VALID.glob(f"{stem}*.linnet"))), name))


def on_device(f):
    def call(*inputs):
        out = f(*(x.to(DEVICE) for x in inputs))
        return tuple(y.cpu() for y in out) if isinstance(out, tuple) else out.cpu()
    return call


def close(got, want) -> None:
    assert got.shape == want.shape and torch.allclose(got, want, rtol=1e-5, atol=1e-5)


def test_consts_and_aliases() -> None:
    g = torch.randn(3, 4)
    close(entry("140", "rows")(g), g + (g[0] * (1.0 + 1e-5)).expand(3, 4))


def test_a_struct_crosses_as_its_fields() -> None:
    k, v = torch.randn(2, 3), torch.randn(2, 3)
    out_k, out_v = entry("141", "kv_entry")(k, v, torch.tensor(3.0))
    close(out_k, v * 3.0)
    close(out_v, k + v.sum())


def test_enums_choose_their_arms() -> None:
    x = torch.randn(4, 8)
    first, top, mean = x[0], x.max(dim=0).values, x.sum(dim=0) / 4.0
    close(entry("142", "pooled")(x), first + top + mean)


@pytest.mark.parametrize("flip", [True, False])
def test_optionals_known_now_and_at_run_time(flip: bool) -> None:
    x, w, b = torch.randn(2, 4), torch.randn(3, 4), torch.randn(3)
    y = x @ w.T
    want = y + (y + 2 * b) + (y + b if flip else y)
    close(entry("143", "optional_entry")(x, w, b, torch.tensor(flip)), want)


def test_defaults_and_named_arguments() -> None:
    x = torch.randn(4)

    def norm(eps=1e-5, scale=1.0):
        return x * torch.rsqrt((x * x).sum() / 4.0 + eps) * scale

    want = norm() + norm(1e-6) + norm(scale=2.0) + norm(eps=1e-3, scale=0.5)
    close(entry("144", "normed")(x), want)


def test_ellipsis_stands_for_the_axes_not_written() -> None:
    x = torch.randn(2, 3, 4)
    want = x[..., 0] + x[..., 3] + x[1, :, 0:1][..., 0] - x[..., 1, 1:3][0, 0]
    close(entry("145", "last_axis")(x), want)


@pytest.mark.parametrize("c", [True, False])
def test_optional_vars_carried_by_a_loop_and_an_if(c: bool) -> None:
    a = torch.randn(3)
    o, total = None, a
    for _ in range(3):
        total = total + (o if o is not None else a * 10.0)
        o = total
    p = None if c else a
    want = total + (p * (1.0 if c else 2.0) if p is not None else a * 100.0)
    close(entry("146", "main")(a, torch.tensor(c)), want)


@pytest.mark.parametrize("flip", [True, False])
def test_struct_and_tuple_vars_carried_by_a_loop(flip: bool) -> None:
    x = torch.randn(3)
    h, c, a, b = x, x * 2.0, x, x * 3.0
    for _ in range(3):
        h, c = torch.tanh(c + x), c * 0.5 + h
        a, b = b, a + h
    if flip:
        h, c = c, h
    close(entry("147", "main")(x, torch.tensor(flip)), h * 2.0 + c + a * b)


def test_a_struct_enum_and_optional_from_a_used_module(tmp_path: Path) -> None:
    """The struct's fields are read with the names of the module declaring it (`Width`
    is private to `lib`)."""
    (tmp_path / "lib.linnet").write_text("""module lib

type Width = Tensor[4; f32]
pub struct Pair { a: Width  b: Width }
pub enum Mode { Keep, Double }

pub fn apply(p: Pair, m: Mode, bias: Width? = none) -> Width {
    let base = match m { Mode.Keep => p.a  Mode.Double => p.a * 2.0 }
    return match bias { some(v) => base + v + p.b  none => base + p.b }
}
""")
    (tmp_path / "root.linnet").write_text("""module root
use lib

entry main(x: Tensor[4; f32], y: Tensor[4; f32]) -> Tensor[4; f32] {
    let p = Pair(a = x, b = y)
    return apply(p, Mode.Double) + apply(p, Mode.Keep, bias = some(x))
}
""")
    x, y = torch.randn(4), torch.randn(4)
    main = on_device(load_function(str(tmp_path / "root.linnet"), "main"))
    close(main(x, y), (2 * x + y) + (2 * x + y))
