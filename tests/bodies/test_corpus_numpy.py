"""Every corpus entry's op bodies, run on PyTorch, against a hand-written NumPy reference.

For each entry of `examples/*.linnet` and `tests/spec/valid/*.linnet` (`references.py`
holds one reference per entry, with the strategy for its inputs), Hypothesis draws the
generic dims (inside the entry's `where` clause) and the inputs, and the test runs the entry
both compiled (`compile=True`, the generated PyTorch module) and interpreted
(`compile=False`). Each must give the declared dtypes and shapes and match the reference
(floats within a tolerance for the declared dtype, integers and bools exactly), and the two
must agree bit for bit.

Both run with `numerics="exact"`, which runs op bodies only: kernels are left to
`tests/equivalence` (under `TRITON_INTERPRET=1`, which `tests/conftest.py` sets on a machine
without CUDA, the default numerics would launch them in Triton's interpreter).

`test_entry_edge_case` runs fixed inputs at the integer limits (`references.EDGES`).
`LINNET_BODIES_EXAMPLES` sets the number of examples per entry (see `EXAMPLES`).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linnet.torch import load, load_function

from budget import size_variety

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("linnet_body_references",
                                               ROOT / "tests" / "helpers" / "references.py")
refs = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = refs
_spec.loader.exec_module(refs)

CORPUS = sorted((ROOT / "examples").glob("*.linnet")) + sorted(
    (ROOT / "tests" / "spec" / "valid").glob("*.linnet"))  # lib/ holds libraries, not roots
PATHS = {p.stem: p for p in CORPUS}

#: Entries deliberately not run, with the reason (a real limitation of the runtime).
SKIP: dict[tuple[str, str], str] = {}

#: Entries where the compiler is believed wrong: (key) -> the precise disagreement.
XFAIL: dict[tuple[str, str], str] = {}

TORCH = {"bool": torch.bool, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
         "i64": torch.int64, "u8": torch.uint8, "u16": torch.uint16, "u32": torch.uint32,
         "u64": torch.uint64, "f16": torch.float16, "bf16": torch.bfloat16,
         "f32": torch.float32, "f64": torch.float64}

#: (rtol, atol) per declared floating dtype: about the dtype's rounding of a few operations
#: on values of order 1 (a reference may override them for one result, see `references.gamma`).
TOLERANCE = {"f16": (1e-2, 1e-3), "bf16": (1e-2, 1e-3), "f32": (1e-5, 1e-6),
             "f64": (1e-12, 1e-12)}

NUMERICS = "exact"  # op bodies only, never kernels


def examples(env_var: str, ci: int, floor: int, share: int = 1) -> int:
    """Examples per entry: `ci` under the "ci" profile (generic dims from a fixed few, see
    `budget.generic_dims`); under a profile with more, its count divided by `share`, never
    fewer than `floor`; exactly `env_var` when that is set."""
    default = max(floor, settings.default.max_examples // share) if size_variety() else ci
    return int(os.environ.get(env_var, default))


# 8 examples per entry under "ci"; at least 20 under a profile that asks for more
# (HYPOTHESIS_PROFILE=thorough: 200), or exactly LINNET_BODIES_EXAMPLES.
EXAMPLES = examples("LINNET_BODIES_EXAMPLES", ci=8, floor=20)
BODIES = settings(max_examples=EXAMPLES, deadline=None, print_blob=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.filter_too_much])


def corpus_entries() -> set[tuple[str, str]]:
    """Every module-level (file stem, entry) of the corpus, as the front end sees the files.
    A root block's entries take its parameters too: they have references of their own
    (tests/equivalence/test_block_model.py and the oracle's corpus run)."""
    from linnet.torch.loader import LoadedModule
    return {(p.stem, name) for p in CORPUS
            for name in LoadedModule(str(p), compile=False, numerics="equivalent").entries}


_FUNCTIONS: dict[tuple[str, str, bool], object] = {}


def entry_function(key: tuple[str, str], compile: bool):
    fn = _FUNCTIONS.get((*key, compile))
    if fn is None:
        fn = _FUNCTIONS[(*key, compile)] = load_function(str(PATHS[key[0]]), key[1],
                                                         compile=compile, numerics=NUMERICS)
    return fn


def to_torch(x: refs.In) -> torch.Tensor:
    value = np.array(x.value, copy=True, order="C")  # (ascontiguousarray makes 0-d 1-d)
    if x.dtype in refs.FLOATS:
        t = torch.from_numpy(value).to(TORCH[x.dtype])
        back = t.to(torch.float64).numpy()
        assert np.array_equal(back, value), f"input not representable in {x.dtype}"
        return t
    t = torch.from_numpy(value)
    assert t.dtype == TORCH[x.dtype], (t.dtype, x.dtype)
    return t


def to_numpy(t: torch.Tensor) -> np.ndarray:
    if t.is_floating_point():
        return t.to(torch.float64).numpy()
    return t.numpy()


def _structure(result, n: int, what: str) -> tuple:
    if n == 1:
        assert isinstance(result, torch.Tensor), f"{what}: expected one tensor, got {result!r}"
        return (result,)
    assert isinstance(result, tuple) and len(result) == n, \
        f"{what}: expected a tuple of {n}, got {type(result).__name__}"
    return result


def check_against_reference(got: tuple, expected: tuple, out: tuple[str, ...],
                            tol: dict[int, tuple[float, float]], what: str) -> None:
    for k, (g, e, dtype) in enumerate(zip(got, expected, out)):
        label = f"{what} result {k} ({dtype})"
        assert g.dtype == TORCH[dtype], f"{label}: dtype {g.dtype}"
        gn = to_numpy(g)
        en = np.asarray(e)
        assert gn.shape == en.shape, f"{label}: shape {gn.shape}, reference {en.shape}"
        if dtype in refs.FLOATS:
            assert en.dtype == np.float64, f"{label}: the reference must be float64"
            rtol, atol = tol.get(k, TOLERANCE[dtype])
            close = np.isclose(gn, en, rtol=rtol, atol=atol, equal_nan=True)
            if not close.all():
                gl, el, cl = np.atleast_1d(gn), np.atleast_1d(en), np.atleast_1d(close)
                pairs = [(tuple(int(i) for i in b), float(gl[tuple(b)]), float(el[tuple(b)]))
                         for b in np.argwhere(~cl)[:5]]
                raise AssertionError(f"{label}: differs from the reference at "
                                     f"(index, got, expected) {pairs}")
        else:
            assert en.dtype == refs.NP_DTYPES[dtype], \
                f"{label}: the reference gave {en.dtype}"
            if not np.array_equal(gn, en):
                raise AssertionError(f"{label}: got {gn!r}, expected {en!r}")


def check_identical(a: tuple, b: tuple) -> None:
    for k, (x, y) in enumerate(zip(a, b)):
        assert x.dtype == y.dtype and x.shape == y.shape, f"result {k}: {x.dtype} vs {y.dtype}"
        torch.testing.assert_close(x, y, rtol=0, atol=0, equal_nan=True,
                                   msg=lambda m: f"result {k}: compiled vs interpreted: {m}")


def _param(key: tuple[str, str]):
    marks = []
    if key in XFAIL:
        marks.append(pytest.mark.xfail(strict=True, reason=XFAIL[key]))
    return pytest.param(key, id=f"{key[0]}::{key[1]}", marks=marks)


KEYS = sorted(refs.REFERENCES)


def run_and_compare(key: tuple[str, str], inputs: tuple) -> None:
    """Run the entry compiled and interpreted on `inputs`; compare both with the reference."""
    reference = refs.REFERENCES[key]
    out = reference.out_types(inputs)
    expected = reference.fn(*(np.array(x.value, copy=True) for x in inputs))
    expected = expected if len(out) > 1 else (expected,)
    assert len(expected) == len(out), "the reference returns the wrong number of results"
    results = {}
    for compile in (True, False):
        what = f"{key[0]}::{key[1]} ({'compiled' if compile else 'interpreted'})"
        got = entry_function(key, compile)(*(to_torch(x) for x in inputs))
        got = _structure(got, len(out), what)
        check_against_reference(got, expected, out, reference.tol, what)
        results[compile] = got
    check_identical(results[True], results[False])


@pytest.mark.parametrize("key", [_param(k) for k in KEYS])
@BODIES
@given(data=st.data())
def test_entry_matches_numpy(key: tuple[str, str], data) -> None:
    run_and_compare(key, data.draw(refs.REFERENCES[key].inputs, label="inputs"))


EDGE_CASES = [pytest.param(key, k, id=f"{key[0]}::{key[1]}#{k}",
                           marks=[pytest.mark.xfail(strict=True, reason=XFAIL[key])]
                           if key in XFAIL else [])
              for key in sorted(refs.EDGES)
              for k in range(len(refs.EDGES[key]))]


@pytest.mark.parametrize("key, k", EDGE_CASES)
def test_entry_edge_case(key: tuple[str, str], k: int) -> None:
    """Integer limits (wrap-around, MIN / -1, abs(MIN), sign-bit shifts, f16 overflow)."""
    run_and_compare(key, refs.EDGES[key][k])


def test_every_entry_has_a_reference() -> None:
    entries = corpus_entries()
    missing = sorted(entries - set(refs.REFERENCES) - set(SKIP))
    assert missing == [], f"corpus entries without a NumPy reference: {missing}"
    stale = sorted((set(refs.REFERENCES) | set(SKIP) | set(XFAIL) | set(refs.EDGES)) - entries)
    assert stale == [], f"references for entries that no longer exist: {stale}"
    assert not set(SKIP) & set(refs.REFERENCES), "an entry is both skipped and referenced"
