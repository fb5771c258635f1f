"""`linnet.jax.load_source` of a program with a root block: entries as pure functions
`f(params, state, *inputs) -> (result, next_state)` of examples/block_model.linnet, with
weights from a temporary .safetensors, against a NumPy reference; under `jax.jit` and
`jax.grad`; the module-level form (`load_source(text, name)`) unchanged beside it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

import jax.numpy as jnp  # noqa: E402

from linnet.checkpoint import CheckpointError  # noqa: E402
from linnet.errors import LinnetError  # noqa: E402
from linnet.jax import JaxEntryFunction, load_source  # noqa: E402

from block_model_case import H, PROGRAM, V, mixed, weights  # noqa: E402

L, B = 2, 2


def _weights() -> dict[str, np.ndarray]:
    return weights(L)


def _mixed(x: np.ndarray, w: dict[str, np.ndarray]) -> np.ndarray:
    return mixed(x, w, L)


@pytest.fixture()
def model(tmp_path: Path):
    path = tmp_path / "model.safetensors"
    safetensors_numpy.save_file(_weights(), str(path))
    return load_source(PROGRAM, generics={"L": L}, weights=path)


def _x() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((B, H)).astype(np.float32)


def test_parameters_and_initial_state(model) -> None:
    assert list(model.parameters) == list(_weights())
    assert all(isinstance(v, jax.Array) for v in model.parameters.values())
    np.testing.assert_array_equal(np.asarray(model.parameters["layers.1.up"]),
                                  _weights()["layers.1.up"])
    assert model.main.parameters is model.parameters
    state = model.initial_state()
    assert list(state) == ["layers.0.calls", "layers.1.calls", "steps"]
    assert all(np.asarray(s).dtype == np.int64 and not np.asarray(s).any()
               for s in state.values())
    assert model.entries == ["main", "loss"]


def test_the_repr_lists_the_parameters_and_states(model) -> None:
    assert repr(model) == """<linnet.jax model Model: entries main, loss
  embed: param Tensor[5, 4; f32]
  layers.0.up: param Tensor[8, 4; f32]
  layers.0.down: param Tensor[4, 8; f32]
  layers.0.scale: buffer Tensor[4; f32]
  layers.0.calls: state Tensor[1; i64]
  layers.1.up: param Tensor[8, 4; f32]
  layers.1.down: param Tensor[4, 8; f32]
  layers.1.scale: buffer Tensor[4; f32]
  layers.1.calls: state Tensor[1; i64]
  steps: state Tensor[1; i64]>"""


def test_an_entry_threads_the_state(model) -> None:
    x = _x()
    state = model.initial_state()
    for call in (1, 2):
        logits, state = model.main(model.parameters, state, x)
        np.testing.assert_allclose(np.asarray(logits, np.float64),
                                   _mixed(x, _weights()) @ _weights()["embed"].T,
                                   rtol=1e-4, atol=1e-4)
        assert {k: np.asarray(v).tolist() for k, v in state.items()} == {
            "layers.0.calls": [call], "layers.1.calls": [call], "steps": [call]}
    loss, after = model.loss(model.parameters, state, x)  # `loss` leaves `steps` as it was
    assert np.asarray(after["steps"]).tolist() == [2]
    assert np.asarray(after["layers.0.calls"]).tolist() == [3]


def test_under_jit_and_grad(model) -> None:
    x = _x()
    state = model.initial_state()
    logits, next_state = jax.jit(model.main)(model.parameters, state, x)
    want, _ = model.main(model.parameters, state, x)
    np.testing.assert_allclose(np.asarray(logits), np.asarray(want), rtol=1e-5, atol=1e-5)
    assert np.asarray(next_state["steps"]).tolist() == [1]

    def loss(params):
        value, _ = model.loss(params, state, x)
        return value
    grads = jax.jit(jax.grad(loss))(model.parameters)
    assert set(grads) == set(model.parameters)
    w = _weights()
    eps = 1e-3  # central differences in float64 of the NumPy reference
    for path in ("layers.0.up", "layers.1.down", "embed"):
        numeric = np.zeros_like(w[path], dtype=np.float64)
        for i in np.ndindex(w[path].shape):
            plus, minus = dict(w), dict(w)
            plus[path] = w[path].astype(np.float64).copy()
            minus[path] = w[path].astype(np.float64).copy()
            plus[path][i] += eps
            minus[path][i] -= eps
            numeric[i] = ((_mixed(x, plus) ** 2).sum() - (_mixed(x, minus) ** 2).sum()) / (2 * eps)
        np.testing.assert_allclose(np.asarray(grads[path], np.float64), numeric,
                                   rtol=1e-2, atol=1e-3)
    assert not np.asarray(grads["embed"]).any()  # `loss` does not read `embed`


def test_a_checkpoint_that_does_not_fit(tmp_path: Path) -> None:
    w = _weights()
    del w["layers.1.scale"]
    w["embed"] = w["embed"].astype(np.float16)
    w["extra"] = np.zeros(3, np.float32)
    with pytest.raises(CheckpointError) as err:
        load_source(PROGRAM, generics={"L": L}, weights=w)
    assert len(err.value.problems) == 3
    assert "layers.1.scale: missing" in str(err.value)
    assert "embed: dtype f16, expected f32" in str(err.value)
    assert "extra: unexpected" in str(err.value)


def test_a_missing_state_or_param_names_it(model) -> None:
    params = dict(model.parameters)
    del params["layers.0.up"]
    with pytest.raises(LinnetError, match="the params dict has no 'layers.0.up'"):
        model.main(params, model.initial_state(), _x())
    with pytest.raises(LinnetError, match="the state dict has no 'layers.0.calls'"):
        model.main(model.parameters, {}, _x())


def test_program_text_without_weights_is_zeros() -> None:
    text = PROGRAM.read_text()
    model = load_source(text, path="block_model.linnet", generics={"L": 1, "V": 3})
    assert model.parameters["embed"].shape == (3, H) and not model.parameters["embed"].any()
    logits, _ = model.main(model.parameters, model.initial_state(), _x())
    assert logits.shape == (B, 3) and not np.asarray(logits).any()


def test_the_module_level_form_is_unchanged() -> None:
    text = "module m\nentry twice(x: Tensor[2; f32]) -> Tensor[2; f32] {\n    return x + x\n}\n"
    fn = load_source(text, "twice")
    assert isinstance(fn, JaxEntryFunction)
    assert np.asarray(fn(jnp.ones(2, jnp.float32))).tolist() == [2.0, 2.0]
    with pytest.raises(LinnetError, match="weights= is for a root block's model"):
        load_source(text, "twice", weights={})


# ------------------------------------------------- optional members: the checkpoint decides

def _optional_model(tmp_path: Path, name: str):
    from optional_model_case import PROGRAM as OPTIONAL, checkpoint
    w = checkpoint(name)
    path = tmp_path / f"{name}.safetensors"
    safetensors_numpy.save_file(w, str(path))
    return load_source(OPTIONAL, weights=path), w


@pytest.mark.parametrize("name", ["bare", "mixed", "everything"])
def test_optional_members_are_there_as_the_checkpoint_holds_them(tmp_path: Path,
                                                                 name: str) -> None:
    from optional_model_case import main
    model, w = _optional_model(tmp_path, name)
    assert list(model.parameters) == list(w)
    head = ["head.calls"] if "head.up" in w else []
    assert list(model.initial_state()) == ["layers.0.calls", "layers.1.calls", *head]
    x = _x()
    logits, state = jax.jit(model.main)(model.parameters, model.initial_state(), x)
    np.testing.assert_allclose(np.asarray(logits, np.float64), main(x, w), rtol=1e-4,
                               atol=1e-4)
    assert all(np.asarray(v).tolist() == [1] for v in state.values())


def test_a_present_optional_param_has_a_gradient(tmp_path: Path) -> None:
    from optional_model_case import loss
    model, w = _optional_model(tmp_path, "everything")
    x = _x()
    state = model.initial_state()
    grads = jax.grad(lambda p: model.loss(p, state, x)[0])(model.parameters)
    assert set(grads) == set(w)
    _, d_embed, d_out = loss(x, w)
    np.testing.assert_allclose(np.asarray(grads["out_bias"], np.float64), d_out, rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(np.asarray(grads["embed"], np.float64), d_embed, rtol=1e-4,
                               atol=1e-4)
    assert np.asarray(grads["head.up_bias"]).any()
