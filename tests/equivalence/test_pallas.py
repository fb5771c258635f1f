"""Every example kernel through Pallas (its interpreter here, `LINNET_PALLAS_INTERPRET=1`;
a GPU where there is one) against its op's body in generated JAX: forward and gradient, on
sizes drawn to satisfy both `where` clauses, ragged edges included, with random inputs.

The body runs with `numerics="exact"` (no kernel: its text holds no Pallas at all), the
kernel with `"equivalent"`; both through `linnet jax`. The gradient of a kernel comes from
the op's grad clause or the body's derivative (`jax.custom_vjp`), so it is compared too.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from linnet.pipeline import compile_source  # noqa: E402
from linnet.fuzz import target_spec  # noqa: E402
from linnet.testing.strategies import generic_values  # noqa: E402

from kernel_cases import example, examples  # noqa: E402

OPS = {"softmax": "softmax", "matmul": "matmul", "matmul_bf16": "matmul",
       "column_stats": "column_stats", "row_scan": "row_scan", "row_product": "row_product",
       "layer_norm": "layer_norm", "layer_norm_bf16": "layer_norm", "attention": "attention",
       "attention_causal": "attention", "attention_bf16": "attention",
       "attention_causal_bf16": "attention", "relu": "relu"}
HEADS = {"B": (1, 2), "H": (1, 3)}  # attention's batch entries and heads
NO_GRAD_CLAUSE = {"matmul_bf16"}  # a bf16 op whose gradient is the body's in both runs
TOLERANCE = {"f32": 2e-5, "bf16": 2e-2}
_MODULES: dict[tuple, object] = {}


@pytest.fixture(autouse=True)
def _interpret(monkeypatch):
    if jax.default_backend() != "gpu":
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")


def module(spec, values, numerics):
    """`main` of the generated JAX module for the op's entry, imported from a file."""
    key = (spec.name, tuple(sorted(values.items())), numerics,
           os.environ.get("LINNET_PALLAS_INTERPRET"))
    if key not in _MODULES:
        text = compile_source(spec.source, path=spec.path, entry=spec.entry, target="jax",
                              bind=values, numerics=numerics).text
        if numerics == "exact":
            assert "pallas" not in text
        else:
            assert "pl.pallas_call(" in text
        path = Path(tempfile.mkdtemp()) / f"pallas_{spec.name}_{len(_MODULES)}.py"
        path.write_text(text)
        loader = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(mod)
        _MODULES[key] = mod
    return _MODULES[key].main


def inputs(spec, values, seed):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in spec.shapes(values):
        if not shape:  # a scalar such as eps or a scale: positive, as the harness draws them
            x = rng.uniform(0.05, 1.0)
        elif spec.name == "row_product":
            x = rng.uniform(0.5, 1.5, shape)
        else:
            x = rng.standard_normal(shape)
        out.append(jnp.asarray(x, dtype=jnp.bfloat16 if dtype == "bf16" else jnp.float32))
    return out


def agree(op: str, values: dict, seed: int = 0) -> None:
    spec = target_spec(example(OPS[op]), op)
    kernel, body = module(spec, values, "equivalent"), module(spec, values, "exact")
    xs = inputs(spec, values, seed)
    tol = TOLERANCE["bf16" if op.endswith("bf16") else "f32"]
    for got, want in zip(kernel(*xs), body(*xs)):
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                                   rtol=tol, atol=tol)
    if op in NO_GRAD_CLAUSE:
        return

    for got, want in zip(gradient(kernel, xs), gradient(body, xs)):
        grad_tol = tol if op.endswith("bf16") else 1e-4
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                                   rtol=grad_tol, atol=grad_tol)


def gradient(main, xs) -> tuple:
    """The gradient of a weighted sum of `main`'s results (the k-th weighted k + 1) with
    respect to every input, under `jax.jit`: traced once and run as one XLA computation
    instead of op by op (half the time in Pallas's interpreter). The forward results are
    compared from eager calls, so both ways of running a module are exercised."""
    def loss(*xs):
        return sum(jnp.sum(y * (k + 1)) for k, y in enumerate(main(*xs)))
    return jax.jit(jax.grad(loss, tuple(range(len(xs)))))(*xs)


@pytest.mark.parametrize("op", sorted(OPS))
@settings(max_examples=examples(0.25), deadline=None)
@given(data=__import__("hypothesis").strategies.data())
def test_pallas_kernel_agrees_with_the_body(op, data):
    spec = target_spec(example(OPS[op]), op)
    ranges = HEADS if op.startswith("attention") else None
    values = data.draw(generic_values(spec, max_dim=70, ranges=ranges, max_elements=20_000),
                       label="sizes")
    agree(op, values)


@pytest.mark.parametrize("op, values", [
    ("softmax", {"R": 3, "C": 1024}), ("matmul", {"M": 129, "N": 17, "K": 33}),
    ("column_stats", {"R": 33, "C": 65}),
    ("attention", {"B": 2, "H": 1, "L": 65, "S": 70, "D": 64}),
    ("attention_causal", {"B": 1, "H": 2, "L": 97, "D": 32}),
    ("attention_causal_bf16", {"B": 1, "H": 1, "L": 130, "D": 128}),
    # layer norm: a single column; R not a multiple of the RB rows a program takes (RB = 32
    # at C = 100, 4 at C = 768 and 1000); rows padded to next_pow2(C) columns
    ("layer_norm", {"R": 5, "C": 1}), ("layer_norm", {"R": 33, "C": 100}),
    ("layer_norm", {"R": 7, "C": 1000}), ("layer_norm_bf16", {"R": 5, "C": 768}),
    ("layer_norm_bf16", {"R": 9, "C": 100})])
def test_pallas_ragged_and_full_tiles(op, values):
    agree(op, values)


EDGES = Path(__file__).with_name("pallas_edges.linnet")


@pytest.mark.parametrize("entry, values, n", [
    ("main", {"R": 2, "C": 0}, 0),   # an empty input and empty results on a grid of 2
    ("main", {"R": 1, "C": 0}, 3),   # the tiled loop's bound is past the (empty) columns
    ("main", {"R": 5, "C": 19}, 17),
    ("maxima", {"R": 2, "C": 1}, None),  # the while's step (32) passes its bound in a trip
    ("maxima", {"R": 3, "C": 33}, None)])
def test_pallas_edges_agree_with_the_bodies(entry, values, n):
    """Empty tensors reach a kernel as one element nobody reads (a ref of size 0 made
    Pallas's interpreter divide by zero, and a gather from it fail); a `while` that steps
    past its bound runs its trip (XLA had counted none). Also under `jax.jit`."""
    spec = target_spec(str(EDGES), entry)
    kernel, body = module(spec, values, "equivalent"), module(spec, values, "exact")
    x = np.random.default_rng(3).standard_normal((values["R"], values["C"]))
    xs = [jnp.asarray(x, dtype=jnp.float32)] + ([] if n is None else [np.int32(n)])
    want = body(*xs)
    for got in (kernel(*xs), jax.jit(kernel)(*xs)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)
