"""`linnet.torch.load` of a program with a root block: an `nn.Module` whose parameters come
from a checkpoint (examples/block_model.linnet, random weights in a temporary
.safetensors), against a float64 torch reference written here; every way a checkpoint
can fail to fit; states kept, detached and reset; training through autograd.

The device is CUDA where there is one (`default_device()`), else the CPU.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

from torch import nn  # noqa: E402

from linnet.errors import LinnetError  # noqa: E402
from linnet.checkpoint import CheckpointError  # noqa: E402
from linnet.fuzz import default_device  # noqa: E402
from linnet.torch import LoadedModule, load  # noqa: E402

from block_model_case import H, PROGRAM, V, weights  # noqa: E402

DEVICE = default_device()
L, B = 3, 2

SMALL = """module small

block Acc<N: Dim, T: Float = f32> {
    param w: Tensor[N; T]
    param picks: Tensor[2; i64]
    state total: Tensor[N; T]

    pub entry forward(x: Tensor[N; T]) -> Tensor[N; T] {
        total = total + x * w
        return total
    }
}
"""


def _weights() -> dict[str, torch.Tensor]:
    """Every param and buffer of block_model by path (L=3), on the CPU."""
    return {path: torch.from_numpy(w) for path, w in weights(L).items()}


def _reference(x: torch.Tensor, w: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """block_model in float64 torch (differentiable through `w`): (logits, loss)."""
    y = x.double()
    for k in range(L):
        h = torch.tanh(y @ w[f"layers.{k}.up"].double().T)
        y = y + (h @ w[f"layers.{k}.down"].double().T) * w[f"layers.{k}.scale"].double()
    return y @ w["embed"].double().T, (y * y).sum()


@pytest.fixture()
def checkpoint(tmp_path: Path) -> Path:
    path = tmp_path / "model.safetensors"
    safetensors_torch.save_file(_weights(), str(path))
    return path


def _model(checkpoint: Path, **options):
    return load(PROGRAM, generics={"L": L}, weights=checkpoint, device=DEVICE, **options)


def _x(seed: int = 1) -> torch.Tensor:
    return torch.randn(B, H, generator=torch.Generator().manual_seed(seed)).to(DEVICE)


def test_the_module_tree_mirrors_the_instance_tree(checkpoint: Path) -> None:
    model = _model(checkpoint)
    assert isinstance(model, nn.Module) and isinstance(model.layers, nn.ModuleList)
    assert len(model.layers) == L
    assert list(model.state_dict()) == list(_weights())  # states are not persistent
    buffers = dict(model.named_buffers())
    assert set(buffers) == {f"layers.{k}.{n}" for k in range(L) for n in ("scale", "calls")} \
        | {"steps"}
    params = dict(model.named_parameters())
    assert set(params) == {"embed"} | {f"layers.{k}.{n}" for k in range(L)
                                       for n in ("up", "down")}
    assert all(p.requires_grad and p.device.type == DEVICE for p in params.values())
    assert model.entries == ["main", "loss"]
    torch.testing.assert_close(model.layers[1].up.cpu(), _weights()["layers.1.up"])
    assert model.steps.dtype == torch.int64 and not model.steps.any()


def test_logits_and_next_states_match_the_reference(checkpoint: Path) -> None:
    model = _model(checkpoint)
    x = _x()
    for call in (1, 2):
        logits = model.main(x)
        assert logits.shape == (B, V) and logits.dtype == torch.float32
        torch.testing.assert_close(logits.double().cpu(), _reference(x.cpu(), _weights())[0],
                                   rtol=1e-4, atol=1e-4)
        assert model.steps.tolist() == [call]
        assert [model.layers[k].calls.item() for k in range(L)] == [call] * L
    assert len(model.main.function.cache) == 1  # one binding, compiled once
    model.loss(x)  # `loss` counts the layers' calls, not the steps
    assert model.steps.item() == 2 and model.layers[0].calls.item() == 3


def test_reset_state_zeros_every_state(checkpoint: Path) -> None:
    model = _model(checkpoint)
    model.main(_x())
    model.reset_state()
    states = [model.steps] + [model.layers[k].calls for k in range(L)]
    assert all(s.tolist() == [0] and s.device.type == DEVICE for s in states)
    model.main(_x())
    assert model.steps.item() == 1


def test_a_mapping_and_the_state_dict_round_trip(checkpoint: Path) -> None:
    model = _model(checkpoint)
    again = load(PROGRAM, generics={"L": L}, weights=model.state_dict(), device=DEVICE)
    blank = load(PROGRAM, generics={"L": L}, device=DEVICE)
    assert not blank.embed.any()  # no weights: zeros until loaded
    blank.load_state_dict(model.state_dict())
    x = _x()
    want = model.main(x)
    torch.testing.assert_close(again.main(x), want)
    torch.testing.assert_close(blank.main(x), want)


def test_every_problem_of_a_checkpoint_is_reported_at_once(tmp_path: Path) -> None:
    w = _weights()
    del w["layers.2.down"]                       # missing param
    del w["layers.0.scale"]                      # missing buffer
    w["layers.1.up"] = torch.zeros(H, H)         # wrong shape
    w["embed"] = w["embed"].double()             # wrong dtype
    w["layers.3.up"] = torch.zeros(2 * H, H)     # no such layer
    w["steps"] = torch.zeros(2, dtype=torch.int64)  # a state of the wrong shape
    path = tmp_path / "bad.safetensors"
    safetensors_torch.save_file(w, str(path))
    for weights in (path, w):
        with pytest.raises(CheckpointError) as err:
            load(PROGRAM, generics={"L": L}, weights=weights)
        problems = err.value.problems
        assert len(problems) == 6, problems
        text = str(err.value)
        assert "layers.2.down: missing (param Tensor[4, 8; f32])" in text
        assert "layers.0.scale: missing (buffer" in text
        assert "layers.1.up: shape [4, 4], expected [8, 4]" in text
        assert "embed: dtype f64, expected f32" in text
        assert "layers.3.up: unexpected" in text
        assert "steps: shape [2], expected [1]" in text


def test_a_checkpoint_may_hold_states_which_start_at_zeros(tmp_path: Path) -> None:
    w = _weights()
    w["steps"] = torch.tensor([41])
    model = load(PROGRAM, generics={"L": L}, weights=w)
    assert model.steps.tolist() == [0]
    model.main(_x().cpu())
    assert model.steps.tolist() == [1]


def test_an_unreadable_checkpoint_is_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(LinnetError, match="cannot read the checkpoint"):
        load(PROGRAM, weights=bad)
    with pytest.raises(LinnetError, match="a .safetensors path or a mapping"):
        load(PROGRAM, weights=[1, 2])


def test_backward_reaches_every_param(checkpoint: Path) -> None:
    model = _model(checkpoint)
    x = _x()
    model.main(x).square().sum().backward()
    leaves = {n: t.clone().requires_grad_() for n, t in _weights().items()}
    _reference(x.cpu(), leaves)[0].square().sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name
        torch.testing.assert_close(p.grad.double().cpu(), leaves[name].grad.double(),
                                   rtol=1e-3, atol=1e-4)
    assert all(not b.requires_grad and b.grad_fn is None for b in model.buffers())


def test_the_loss_entry_trains(checkpoint: Path) -> None:
    """A few steps of SGD on `loss` lower it; the states never hold a graph."""
    model = _model(checkpoint)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = _x()
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = model.loss(x)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[2] < losses[0]
    torch.testing.assert_close(torch.tensor(losses[0], dtype=torch.float64),
                               _reference(x.cpu(), _weights())[1], rtol=1e-4, atol=1e-4)


def test_compile_false_runs_the_interpreter(checkpoint: Path) -> None:
    compiled, interpreted = _model(checkpoint), _model(checkpoint, compile=False)
    x = _x()
    torch.testing.assert_close(interpreted.main(x), compiled.main(x), rtol=1e-5, atol=1e-5)
    assert interpreted.steps.item() == 1
    interpreted.loss(x).backward()
    assert interpreted.layers[0].up.grad is not None
    assert "interpreted" in repr(interpreted.main.function)


def test_the_module_moves_with_to(checkpoint: Path) -> None:
    model = load(PROGRAM, generics={"L": L}, weights=checkpoint, device="cpu")
    assert model.embed.device.type == "cpu"
    model.to(DEVICE)
    logits = model.main(_x())
    assert logits.device.type == DEVICE and model.steps.device.type == DEVICE


def test_generics_entries_and_integer_params(tmp_path: Path) -> None:
    path = tmp_path / "small.linnet"
    path.write_text(SMALL)
    model = load(path, generics={"N": 3, "T": "f64"})
    assert model.w.dtype == torch.float64 and model.w.requires_grad
    assert isinstance(model.picks, nn.Parameter) and not model.picks.requires_grad
    with torch.no_grad():
        model.w.fill_(2.0)
    x = torch.ones(3, dtype=torch.float64)
    first = model(x)  # `forward`
    second = model(x)
    assert first.tolist() == [2.0] * 3 and second.tolist() == [4.0] * 3
    assert model.total.tolist() == [4.0] * 3 and model.total.grad_fn is None
    second.sum().backward()  # the first call's graph is not needed
    assert model.w.grad.tolist() == [1.0] * 3
    with pytest.raises(LinnetError, match="input 0 has dtype f32, expected f64"):
        model(torch.ones(3))


def test_generic_errors_name_the_generic(tmp_path: Path) -> None:
    path = tmp_path / "small.linnet"
    path.write_text(SMALL)
    with pytest.raises(LinnetError, match=r"generic `N: Dim` of the root block `Acc`"):
        load(path)
    with pytest.raises(LinnetError, match="`Acc` has no generic named `M`"):
        load(path, generics={"N": 3, "M": 2})


def test_model_call_needs_forward_or_one_entry(checkpoint: Path) -> None:
    model = _model(checkpoint)
    with pytest.raises(LinnetError, match="has 2 entries, none named forward"):
        model(_x())
    with pytest.raises(LinnetError, match="no entry named 'nope'"):
        model.entry("nope")
    assert model.entry("main")(_x()).shape == (B, V)


def test_a_program_without_a_root_block_loads_its_entries(tmp_path: Path) -> None:
    path = tmp_path / "plain.linnet"
    path.write_text("module plain\nentry twice(x: Tensor[2; f32]) -> Tensor[2; f32] {\n"
                    "    return x + x\n}\n")
    m = load(path)
    assert isinstance(m, LoadedModule)
    assert m.twice(torch.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(LinnetError, match="weights= is for a program with a root block"):
        load(path, weights={})


def _kernel_program(tmp_path: Path) -> Path:
    """A block whose entry calls `softmax` of examples/softmax.linnet (an op with a kernel),
    the kernel and the op copied in."""
    text = (PROGRAM.parent / "softmax.linnet").read_text()
    start, end = text.index("pub kernel row_softmax"), text.index("// A fixed-size entry")
    path = tmp_path / "kblock.linnet"
    path.write_text("module kblock\n\n" + text[start:end] + """
block Mix<C: Dim> {
    param w: Tensor[C, C; f32]

    pub entry forward<R: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] {
        let h[r, j] = sum[k] x[r, k] * w[j, k]
        return softmax(h)
    }
}
""")
    return path


def test_an_op_with_a_kernel_launches_it_and_trains(tmp_path: Path) -> None:
    w = torch.randn(6, 6, generator=torch.Generator().manual_seed(2))
    model = load(_kernel_program(tmp_path), generics={"C": 6}, weights={"w": w},
                 device=DEVICE)
    x = _x().repeat(1, 2)[:, :6].contiguous()
    y = model(x)
    leaf = w.double().requires_grad_()
    want = torch.softmax(x.cpu().double() @ leaf.T, dim=1)
    torch.testing.assert_close(y.double().cpu(), want.detach(), rtol=1e-5, atol=1e-6)
    assert model.entry("forward").ran() == {"softmax__R2_C6": {"kernel": 1, "body": 0}}
    weights = torch.arange(6.0)
    (y * weights.to(DEVICE)).sum().backward()
    (want * weights.double()).sum().backward()
    torch.testing.assert_close(model.w.grad.double().cpu(), leaf.grad, rtol=1e-4, atol=1e-5)


def test_an_absent_optional_param_has_no_tensor(tmp_path: Path) -> None:
    """`bias` is optional and the checkpoint lacks it: the model has no such member, and
    the checkpoint loads without it."""
    path = tmp_path / "opt.linnet"
    path.write_text("""module opt

block Scale {
    param w: Tensor[3; f32]
    param bias: Tensor[3; f32]? = none

    pub entry forward(x: Tensor[3; f32]) -> Tensor[3; f32] {
        return x * w
    }
}
""")
    model = load(path, weights={"w": torch.full((3,), 2.0)})
    assert list(model.state_dict()) == ["w"] and not hasattr(model, "bias")
    assert model.manifest.by_path()["bias"].input is None
    assert model(torch.ones(3)).tolist() == [2.0, 2.0, 2.0]


# ------------------------------------------------- optional members: the checkpoint decides

def _optional_model(tmp_path: Path, name: str):
    from optional_model_case import PROGRAM as OPTIONAL, checkpoint
    w = checkpoint(name)
    path = tmp_path / f"{name}.safetensors"
    safetensors_torch.save_file({k: torch.from_numpy(v) for k, v in w.items()}, str(path))
    return load(OPTIONAL, weights=path, device=DEVICE), w


@pytest.mark.parametrize("name", ["bare", "mixed", "everything"])
def test_optional_members_are_there_as_the_checkpoint_holds_them(tmp_path: Path,
                                                                 name: str) -> None:
    """Each optional param the checkpoint holds is an `nn.Parameter` loaded from it, the
    head a child module when the checkpoint holds its required params; the logits and the
    head's count follow."""
    from optional_model_case import main
    model, w = _optional_model(tmp_path, name)
    assert list(model.state_dict()) == list(w)
    for path, value in w.items():
        torch.testing.assert_close(model.state_dict()[path].cpu(), torch.from_numpy(value))
    assert hasattr(model, "out_bias") == ("out_bias" in w)
    assert hasattr(model, "head") == ("head.up" in w)
    assert hasattr(model.layers[0], "up_bias") == ("layers.0.up_bias" in w)
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    got = model.main(x.to(DEVICE))
    np.testing.assert_allclose(got.detach().cpu().double().numpy(), main(x.numpy(), w),
                               rtol=1e-4, atol=1e-4)
    assert model.layers[1].calls.item() == 1
    if "head.up" in w:
        assert model.head.calls.item() == 1


def test_a_present_optional_param_trains(tmp_path: Path) -> None:
    """`out_bias` (optional, present) gets its gradient through the loss entry, and an
    optimizer step moves it."""
    from optional_model_case import loss
    model, w = _optional_model(tmp_path, "everything")
    assert isinstance(model.out_bias, nn.Parameter) and model.out_bias.requires_grad
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(3))
    value = model.loss(x.to(DEVICE))
    want, d_embed, d_out = loss(x.numpy(), w)
    assert value.item() == pytest.approx(want, rel=1e-4)
    value.backward()
    np.testing.assert_allclose(model.out_bias.grad.cpu().double().numpy(), d_out, rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(model.embed.grad.cpu().double().numpy(), d_embed, rtol=1e-4,
                               atol=1e-4)
    assert model.head.up_bias.grad is not None and model.head.up_bias.grad.abs().sum() > 0
    before = model.out_bias.detach().clone()
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    torch.testing.assert_close(model.out_bias.detach(), before - 0.1 * model.out_bias.grad)


def test_a_checkpoint_with_half_a_head_names_what_is_absent(tmp_path: Path) -> None:
    """The head needs `head.down` too: without it the head is absent, and its other
    tensors in the checkpoint are reported, with why."""
    from optional_model_case import PROGRAM as OPTIONAL, checkpoint
    w = {**checkpoint("bare"), **{k: v for k, v in checkpoint("everything").items()
                                  if k in ("head.up", "head.up_bias")}}
    with pytest.raises(CheckpointError) as err:
        load(OPTIONAL, weights={k: torch.from_numpy(v) for k, v in w.items()})
    assert len(err.value.problems) == 2
    assert all("under an optional sub" in p for p in err.value.problems)
    assert err.value.problems[0].startswith("head.up:")


def test_the_repr_lists_each_member_with_its_kind_and_type() -> None:
    model = load(PROGRAM, generics={"L": 2})
    assert repr(model) == """BlockModel(
  Model, entries: main, loss
  embed: param Tensor[5, 4; f32]
  steps: state Tensor[1; i64]
  (layers): ModuleList(
    (0-1): 2 x BlockPart(
      up: param Tensor[8, 4; f32]
      down: param Tensor[4, 8; f32]
      scale: buffer Tensor[4; f32]
      calls: state Tensor[1; i64]
    )
  )
)"""


def test_the_root_manifest_says_every_entry_takes_it() -> None:
    text = str(load(PROGRAM, generics={"L": 1}).manifest).splitlines()
    assert text[0] == "the root block Model: after its own inputs, each entry takes"
    assert text[1:3] == ["  embed: param Tensor[5, 4; f32]",
                         "  layers.0.up: param Tensor[8, 4; f32]"]
