"""A `var` (or a block's state) assigned inside a `match` arm: each arm hands it back.

Spec program 171 against NumPy for every choice of its run-time flags, and the shape of
the translation: a known scrutinee is its arm in place, one chosen at run time an `If`
(a chain of them for an enum) whose arms return the value and then the vars.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.pipeline import compile_source
from linnet.fuzz.backends import as_numpy, compile_entry, loader

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "spec" / "valid" / "171_match_arm_vars.linnet"


def _step(x: np.ndarray, mode: str, c: bool) -> tuple[np.ndarray, int]:
    n, acc, y = 0, x, x
    if mode == "Double" and c:
        n, acc = 1, x * 2.0
        y = acc
    elif mode == "Shift":
        if c:
            n, y = 10, x * 0.5
        else:
            acc = x + 1.0
    return y + acc, n


def _with_bias(x: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    acc, seen = x, None
    if b is not None:
        if b[0] > 0.0:
            acc, seen, y = acc + b, b * 3.0, b
        else:
            y = b * 2.0
    else:
        if x[0] > 0.0:
            acc = acc * 3.0
        y = x
    return y + acc + (seen if seen is not None else x)


@pytest.mark.parametrize("target", ["interpreter", "torch"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_main_matches_numpy_for_every_flag(target: str, sign: float) -> None:
    compiled = compile_entry(PROGRAM.read_text(), str(PROGRAM), "main", {}, target)
    run = loader(target)(compiled, "main")
    x = np.array([sign * 0.5, -1.0, 2.0, 0.25], dtype=np.float32)
    for c, f in itertools.product([True, False], repeat=2):
        a, n = _step(x, "Double" if f else "Shift", c)
        k, m = _step(x, "Keep", c)
        want = _with_bias(x, x if c else None) + _with_bias(x, None) + _with_bias(x, x)
        got = run(torch.from_numpy(x), torch.tensor(c), torch.tensor(f))
        np.testing.assert_allclose(as_numpy(got[0]), a + k, rtol=1e-6)
        assert int(as_numpy(got[1])) == n + m
        np.testing.assert_allclose(as_numpy(got[2]), want, rtol=1e-6)


def test_a_state_assigned_in_an_arm_comes_back() -> None:
    compiled = compile_entry(PROGRAM.read_text(), str(PROGRAM), "run", {}, "torch")
    run = loader("torch")(compiled, "run")
    w = torch.tensor([1.0, 2.0, 3.0, 4.0])
    for x0, c, hits in [(1.0, True, 8), (-1.0, True, 7), (1.0, False, 7)]:
        x = torch.tensor([x0, 1.0, 1.0, 1.0])
        y = x * w if (c and x0 > 0) else x
        loss, after = run(x, torch.tensor(c), w, torch.tensor([7]))
        assert float(loss) == pytest.approx(float((y * w).sum()))
        assert as_numpy(after).tolist() == [hits]


def _elaborated(body: str) -> str:
    text = f"""module m
enum Mode {{ A, B, C }}
fn pick(x: Tensor[2; f32], mode: Mode, c: bool) -> Tensor[2; f32] {{
    var acc = x
    let y = match mode {{
        Mode.A => x
        Mode.B => if c {{
            acc = acc * 2.0
            acc
        }} else {{
            x
        }}
        Mode.C => if c {{
            acc = acc + 1.0
            x
        }} else {{
            x
        }}
    }}
    return y + acc
}}
entry main(x: Tensor[2; f32], c: bool) -> Tensor[2; f32] {{
{body}
}}
"""
    return compile_source(text, entry="main", target="torch").dump("elaborate")


def test_a_runtime_enum_is_a_chain_whose_arms_hand_back_the_vars() -> None:
    dump = _elaborated("    let m = if c { Mode.A } else { Mode.C }\n"
                       "    return pick(x, m, c)")
    pick = dump[dump.index("func pick"):]
    assert "is_A: bool[] = eq(mode, 0:i64)" in pick and "is_B: bool[] = eq(mode, 1:i64)" in pick
    assert "(f32[2], f32[2]) = if is_A" in pick
    assert "arm: (f32[2], f32[2]) = tuple(x, acc)" in pick


def test_a_known_variant_inlines_its_arm() -> None:
    dump = _elaborated("    var n: i64 = 0\n    let y = match Mode.B {\n"
                       "        Mode.A => x\n"
                       "        Mode.B => if c {\n            n = n + 1\n            x\n"
                       "        } else {\n            x\n        }\n"
                       "        Mode.C => x\n    }\n"
                       "    return y * cast<f32>(n)")
    main = dump[:dump.index("func pick")] if "func pick" in dump else dump
    assert "match" not in main and "eq(" not in main
    assert "n_1: i64[] = add(n, 1:i64)" in main


STATE_CALLS = ROOT / "tests" / "spec" / "valid" / "172_match_arm_state_calls.linnet"


def _state_calls_reference(x, c: bool, w: dict) -> tuple[float, list[int]]:
    """Spec program 172 in NumPy: the loss, then the next `leaf.uses`, `more.0.uses`,
    `more.1.uses` and `picks`."""
    uses, picks = {k: int(w[k + ".uses"][0]) for k in ("leaf", "more.0", "more.1")}, 0
    y = np.zeros(4)
    for counted in (c, True):
        if counted:
            y = y + x * w["leaf.w"] + x
            uses["leaf"] += 1
            picks += 1
        else:
            y = y + x
    for k in range(2):
        if c:
            y = (y + x) * w[f"more.{k}.w"]
            uses[f"more.{k}"] += 1
        else:
            y = y * 0.5
    return float((y * y).sum()), [*uses.values(), int(w["picks"][0]) + picks]


@pytest.mark.parametrize("target", ["interpreter", "torch", "jax", "onnx", "stablehlo"])
def test_a_call_with_states_in_an_arm_runs_only_when_taken(target: str) -> None:
    compiled = compile_entry(STATE_CALLS.read_text(), str(STATE_CALLS), "run", {}, target)
    assert "E2190" not in str(compiled)
    run = loader(target)(compiled, "run")
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, 4).astype(np.float32)
    w = {"leaf.w": rng.uniform(-1, 1, 4).astype(np.float32), "leaf.uses": np.array([3]),
         "more.0.w": rng.uniform(-1, 1, 4).astype(np.float32), "more.0.uses": np.array([5]),
         "more.1.w": rng.uniform(-1, 1, 4).astype(np.float32), "more.1.uses": np.array([0]),
         "picks": np.array([9])}
    for c in (True, False):
        got = run(torch.from_numpy(x), torch.tensor(c),
                  *(torch.from_numpy(np.asarray(v)) for v in w.values()))
        loss, states = _state_calls_reference(x.astype(np.float64), c, w)
        assert float(as_numpy(got[0])) == pytest.approx(loss, rel=1e-5)
        assert [int(as_numpy(s)[0]) for s in got[1:]] == states
