"""A call that carries states inside a `match` arm, flattened: the arm holds the hoisted
call as statements (a `Block` value), never a branch with a constant condition.

An arm chosen at compile time (an optional param's presence, a constant variant) is then
straight-line code in the elaborated IR, with no `If` at all; an arm chosen at run time
is a branch of the one `If` its `match` becomes. And an `if` whose condition is known at
compile time keeps the known presence of the optionals its branch assigns, so a later
`match` on them is chosen at compile time too, not made an `If` on a constant flag.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.ir import tensor as ir
from linnet.ir.walk import all_binds
from linnet.pipeline import compile_source
from linnet.syntax import tree as t
from linnet.fuzz.backends import as_numpy, loader

ROOT = Path(__file__).resolve().parents[2]
STATE_CALLS = ROOT / "tests" / "spec" / "valid" / "172_match_arm_state_calls.linnet"

KNOWN_ARMS = """module m

enum Act { Plain, Counted }

block Leaf {
    param w: Tensor[4; f32]
    state uses: Tensor[1; i64]

    pub fn forward(x: Tensor[4; f32]) -> Tensor[4; f32] {
        uses = uses + 1
        return x * w
    }
}

block Root {
    param gain: Tensor[4; f32]? = none
    sub leaf: Leaf

    pub entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
        let y = match gain {
            some(g) => leaf.forward(x) * g
            none => x
        }
        let z = match Act.Counted {
            Act.Plain => y
            Act.Counted => leaf.forward(y) + 1.0
        }
        return z
    }
}
"""


def _surface_nodes(node):
    """Every surface-tree node under node (tuples flattened)."""
    if isinstance(node, tuple):
        for x in node:
            yield from _surface_nodes(x)
        return
    if not dataclasses.is_dataclass(node) or type(node).__module__ != t.__name__:
        return
    yield node
    for f in dataclasses.fields(node):
        yield from _surface_nodes(getattr(node, f.name))


def _flattened(compiled) -> list:
    """The nodes of the flattened root module (the `bind-generics` stage's)."""
    bound = compiled.stage("bind-generics")
    return list(_surface_nodes(bound.analysis.program.root_module.items))


def _ifs(compiled, stage: str = "elaborate") -> list[ir.If]:
    program = compiled.stage(stage)
    return [b.expr for f in program.funcs for b in all_binds(f.body)
            if isinstance(b.expr, ir.If)]


def _compile(text: str, present=None):
    return compile_source(text, path="m.linnet", entry="main", target="torch",
                          present=present)


@pytest.mark.parametrize("present", [None, ["gain"]], ids=["absent", "present"])
def test_an_arm_chosen_at_compile_time_is_straight_line(present) -> None:
    compiled = _compile(KNOWN_ARMS, present)
    nodes = _flattened(compiled)
    assert not any(isinstance(n, (t.If, t.BoolLit)) for n in nodes)
    arms = [n.value for n in nodes if isinstance(n, t.Arm) and isinstance(n.value, t.Block)]
    assert len(arms) == 2  # `some(g)` and `Act.Counted` hold their hoisted calls
    assert all(isinstance(a.stmts[0], t.LetTuple) for a in arms)
    assert _ifs(compiled) == []
    text = compiled.dump("elaborate")
    assert "if " not in text and "True:bool" not in text and "False:bool" not in text

    run = loader("torch")(compiled.text, "main")
    x, w = torch.tensor([1.0, -2.0, 3.0, 0.5]), torch.tensor([2.0, 0.5, -1.0, 4.0])
    gain = torch.tensor([3.0, 3.0, -1.0, 0.5])
    args = (x, gain, w, torch.tensor([7])) if present else (x, w, torch.tensor([7]))
    z, uses = run(*args)
    y = x * w * gain if present else x
    np.testing.assert_allclose(as_numpy(z), as_numpy(y * w + 1.0), rtol=1e-6)
    assert as_numpy(uses).tolist() == [9 if present else 8]


def test_an_arm_chosen_at_run_time_is_a_branch_of_its_match_alone() -> None:
    """Spec program 172: three `match`es chosen at run time, so three `If`s, each on a
    run-time value; the flattened arms hold their calls, with no `if` around them."""
    compiled = compile_source(STATE_CALLS.read_text(), path=str(STATE_CALLS), entry="run",
                              target="torch")
    nodes = _flattened(compiled)
    assert not any(isinstance(n, t.BoolLit) for n in nodes)
    blocks = [n.value for n in nodes if isinstance(n, t.Arm) and isinstance(n.value, t.Block)]
    assert len(blocks) == 3
    assert not any(isinstance(n, t.If) for b in blocks for n in _surface_nodes(b))
    bound = compiled.dump("bind-generics")
    assert "if true" not in bound and "some(b) => {\n" in bound
    program = compiled.stage("elaborate")
    ifs = {f.name: [b.expr for b in all_binds(f.body) if isinstance(b.expr, ir.If)]
           for f in program.funcs}
    # `let a = if c ...`, `let bias = if c ...`, then `match bias` twice; `match a` once
    assert (len(ifs["run"]), len(ifs["Root__pick"])) == (4, 1)
    assert not any(isinstance(e.cond, ir.Lit) for e in _ifs(compiled) + _ifs(compiled, "dce"))


KNOWN_IF = """module m
const ON = true
entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    var seen: Tensor[4; f32]? = none
    let y = if ON {
        seen = some(x * 2.0)
        x
    } else {
        x
    }
    return y + match seen { some(q) => q  none => x }
}
"""


def test_an_if_known_at_compile_time_keeps_the_presence_its_branch_gives() -> None:
    """The branch taken assigns `seen = some(...)` in place: no hand-back as
    `(flag, value)` for a branch that does not exist, so `match seen` is chosen now."""
    compiled = _compile(KNOWN_IF)
    assert _ifs(compiled) == [] and _ifs(compiled, "dce") == []
    assert "True:bool" not in compiled.dump("elaborate")
    x = torch.tensor([1.0, -2.0, 3.0, 0.5])
    (got,) = loader("torch")(compiled.text, "main")(x)
    np.testing.assert_allclose(as_numpy(got), as_numpy(3.0 * x))
    off = _compile(KNOWN_IF.replace("const ON = true", "const ON = false"))
    assert _ifs(off) == []
    (got,) = loader("torch")(off.text, "main")(x)
    np.testing.assert_allclose(as_numpy(got), as_numpy(2.0 * x))
