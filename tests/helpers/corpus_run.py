"""Run one entry of a corpus program through the oracle and through the PyTorch interpreter
(op bodies, `--numerics exact`), on the sizes and inputs the project's harness draws."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from linnet.fuzz import harness
from linnet.fuzz.case import Case
from linnet.fuzz.oracle import OracleUndefined, compare, evaluate_source, gradient_fd
from linnet.fuzz.oracle.dtypes import dtype_name

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "tests" / "spec" / "valid").glob("*.linnet")) + sorted(
    (ROOT / "examples").glob("*.linnet")) + sorted(
    p for p in (ROOT / "tests" / "grad").glob("*.linnet") if not p.name.startswith("bad_"))


def corpus_entries() -> list[tuple[Path, str]]:
    found = []
    for path in FILES:
        for name in harness.entries(str(path)):
            found.append((path, name))
    return found


@dataclass
class Outcome:
    values: dict
    problems: list[str]
    undefined: str | None = None


def _to_numpy(x):
    import torch
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        if x.dtype == torch.bfloat16:
            import ml_dtypes
            return x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        if x.dtype == torch.uint64:
            return x.view(torch.int64).numpy().view(np.uint64)
        return x.numpy()
    return np.asarray(x)


def interpreter(path: Path, name: str, values: dict, inputs: list, text: str) -> list:
    from linnet.pipeline import compile_source, passes_for
    from linnet.torch.interpreter import run
    passes = [p for p in passes_for("torch") if p.name != "emit-torch"]
    program = compile_source(text, path=str(path), entry=name, bind=dict(values),
                             target="torch", numerics="exact", passes=passes).text
    return [_to_numpy(x) for x in run(program, *inputs)]


def extreme_integers(spec, values: dict) -> dict:
    """Overrides drawing every integer input from its dtype's whole range, the ends and
    their neighbours often (where wrapping, division and casts differ)."""
    import torch
    from linnet.fuzz.oracle.dtypes import int_range
    out = {}

    def draw(shape, dtype, g):
        lo, hi = int_range(dtype)
        picks = [p for p in (lo, lo + 1, -1, 0, 1, 2, hi - 1, hi, -7, 7) if lo <= p <= hi]
        rng = random.Random(int(torch.randint(0, 1 << 30, (), generator=g)))
        n = int(np.prod(shape)) if shape else 1
        vals = [rng.choice(picks) if rng.random() < 0.5 else rng.randint(lo, hi)
                for _ in range(n)]
        if dtype == "u64":
            arr = np.array(vals, dtype=np.uint64).reshape(shape)
            return torch.from_numpy(arr.view(np.int64)).view(torch.uint64)
        return torch.from_numpy(np.array(vals, dtype=np.int64).reshape(shape))

    for (name, _), (_, dtype) in zip(spec.inputs(values), spec.shapes(values)):
        if dtype.startswith(("i", "u")):
            out[name] = draw
    return out


def counts(spec, values: dict) -> dict:
    """Overrides drawing every integer input from 0..40: shift counts below, at and past the
    widths of i32 and u16 (a negative count is undefined)."""
    import torch

    def draw(shape, _dtype, g):
        return torch.randint(0, 41, shape, generator=g, dtype=torch.int64)

    return {name: draw for (name, _), (_, dtype) in zip(spec.inputs(values), spec.shapes(values))
            if dtype.startswith(("i", "u"))}


def run_entry(path: Path, name: str, seed: int = 0, text: str | None = None,
              extremes: bool = False, draw=None) -> Outcome:
    """The oracle against the interpreter for one entry: the problems found (empty when they
    agree), or why the case has no defined answer. `text` replaces the file's own;
    `extremes` draws integer inputs from their whole range; `draw(spec, values)` gives
    other overrides."""
    text = path.read_text() if text is None else text
    spec = harness.target_spec(str(path), name, text)
    rng = random.Random(seed)
    values = harness.draw_values(spec, rng, max_dim=6, kernel=False)
    if values is None:
        return Outcome({}, ["no sizes satisfy the where clauses"])
    overrides = extreme_integers(spec, values) if extremes else None
    overrides = draw(spec, values) if draw is not None else overrides
    inputs = harness.make_inputs(spec, values, seed=rng.randrange(1 << 30), device="cpu",
                                 overrides=overrides)
    arrays = [_to_numpy(x) for x in inputs]
    try:
        expected = evaluate_source(text, name, values, arrays, path=str(path))
    except OracleUndefined as err:
        return Outcome(values, [], str(err))
    try:
        actual = interpreter(path, name, values, inputs, text)
    except Exception as err:  # noqa: BLE001 - reported as a problem of the backend
        return Outcome(values, [f"the interpreter raised {type(err).__name__}: {err}"])
    n = max([d for shape, _ in spec.shapes(values) for d in shape] or [1])
    problems = []
    if len(actual) != len(expected):
        problems.append(f"{len(actual)} results, the oracle {len(expected)}")
    for k, (e, a) in enumerate(zip(expected, actual)):
        dtype = dtype_name(e)
        problem = compare(e, a, dtype, reduction_length=n)
        if problem:
            problems.append(f"result {k} ({dtype}): {problem}")
    return Outcome(values, problems)


def integer_inputs(path: Path, name: str) -> bool:
    spec = harness.target_spec(str(path), name, path.read_text())
    return any(str(getattr(ty, "dtype", "")).startswith(("i", "u")) for _, ty in spec.params)


def floating_scalar_result(path: Path, name: str) -> bool:
    spec = harness.target_spec(str(path), name, path.read_text())
    ty = spec.result
    return getattr(ty, "dims", None) == () and str(getattr(ty, "dtype", "")) in (
        "f16", "bf16", "f32", "f64")


def grad_entry(path: Path, name: str, seed: int = 0) -> Outcome:
    """`gradient_fd` against the `--grad` export of generated PyTorch (op bodies), for an
    entry returning one floating scalar, on f32 or f64 inputs."""
    from linnet.pipeline import compile_source
    from linnet.torch.runtime import import_generated
    text = path.read_text()
    spec = harness.target_spec(str(path), name, text)
    rng = random.Random(seed)
    values = harness.draw_values(spec, rng, max_dim=4, kernel=False,
                                 dtypes={g.name: ("f32",) for g in spec.dtype_generics})
    if values is None:
        return Outcome({}, ["no sizes satisfy the where clauses"])
    inputs = harness.make_inputs(spec, values, seed=rng.randrange(1 << 30), device="cpu")
    arrays = [_to_numpy(x) for x in inputs]
    case = Case(text, name, values, tuple(arrays))
    try:
        fd = gradient_fd(case, path=str(path))
    except OracleUndefined as err:
        return Outcome(values, [], str(err))
    compiled = compile_source(text, path=str(path), entry=name, bind=dict(values),
                              target="torch", numerics="exact", grad=True).text
    main = import_generated(compiled, f"oracle_grad_{name}", "torch").main
    got = [_to_numpy(g) for g in main(*inputs)[1:]][:len(fd)]  # then a block's next states
    problems = []
    if len(got) != len(fd):
        return Outcome(values, [f"{len(got)} gradients, the oracle {len(fd)}"])
    for k, (e, a) in enumerate(zip(fd, got)):
        problem = compare(e, a.astype(np.float64), "bf16")  # f32 autograd vs f64 differences
        if problem:
            problems.append(f"gradient {k}: {problem}")
    return Outcome(values, problems)


__all__ = ["corpus_entries", "run_entry", "grad_entry", "floating_scalar_result",
           "integer_inputs"]
