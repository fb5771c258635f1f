"""Calling a loaded entry: inputs that do not fit name the binding they contradict, and
inputs may be given by parameter name, in the PyTorch and the JAX runtime alike."""

from __future__ import annotations

import pytest

from linnet.errors import InputError, InputShapeError

PROGRAM = """module bind

entry run<R: Dim, C: Dim>(x: Tensor[R, C; f32], b: Tensor[C; f32]) -> Tensor[R, C; f32] {
    let y[r, c] = x[r, c] + b[c]
    return y
}
"""

CONFLICT = ("run(): C = 100 from `x` (input 0), but `b` (input 1) has 99 (axis 0 of "
            "Tensor[C; f32])")


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("inputs") / "bind.linnet"
    path.write_text(PROGRAM)
    return str(path)


@pytest.fixture(scope="module")
def torch_run(program):
    import linnet.torch
    return linnet.torch.load_function(program, "run", compile=False)


@pytest.fixture(scope="module")
def jax_run(program):
    pytest.importorskip("jax")
    import linnet.jax
    return linnet.jax.load_function(program, "run")


def test_torch_an_input_that_contradicts_a_binding_names_it(torch_run) -> None:
    import torch
    with pytest.raises(InputShapeError) as err:
        torch_run(torch.ones(4, 100), torch.ones(99))
    assert str(err.value) == CONFLICT


def test_jax_an_input_that_contradicts_a_binding_names_it(jax_run) -> None:
    import numpy as np
    with pytest.raises(InputShapeError) as err:
        jax_run(np.ones((4, 100), np.float32), np.ones(99, np.float32))
    assert str(err.value) == CONFLICT


def test_torch_inputs_by_parameter_name(torch_run) -> None:
    import torch
    x, b = torch.arange(6.0).reshape(2, 3), torch.tensor([10.0, 20.0, 30.0])
    assert torch.equal(torch_run(b=b, x=x), x + b)
    assert torch.equal(torch_run(x, b=b), x + b)


def test_jax_inputs_by_parameter_name(jax_run) -> None:
    import numpy as np
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = np.array([10.0, 20.0, 30.0], np.float32)
    assert np.array_equal(np.asarray(jax_run(b=b, x=x)), x + b)


@pytest.mark.parametrize("args, named, message", [
    ((), {"x": 1.0, "bb": 1.0}, "run() has no parameter named `bb`; its parameters: x, b "
                                "(did you mean `b`?)"),
    ((1.0,), {"x": 1.0}, "run(): `x` (input 0) is given twice, by position and by name"),
    ((), {"b": 1.0}, "run(): no value for `x`"),
])
def test_a_wrong_keyword_call_is_an_input_error(torch_run, args, named, message) -> None:
    with pytest.raises(InputError) as err:
        torch_run(*args, **named)
    assert str(err.value) == message


F64 = """module wide

entry twice<N: Dim>(x: Tensor[N; f64]) -> Tensor[N; f64] {
    return x * 2.0
}
"""


def test_jax_an_f64_input_made_f32_by_jax_says_how_to_enable_64_bits(tmp_path) -> None:
    """With x64 off, `jnp.asarray` of a float64 array is float32: the message says JAX did
    that, not only "cast it"."""
    jax = pytest.importorskip("jax")
    import numpy as np
    import linnet.jax
    path = tmp_path / "wide.linnet"
    path.write_text(F64)
    twice = linnet.jax.load_function(str(path), "twice")
    assert not jax.config.jax_enable_x64
    with pytest.raises(InputError) as err:
        twice(jax.numpy.asarray(np.ones(3)))
    message = str(err.value)
    assert message.startswith("twice(): input 0 has dtype f32, expected f64 (Tensor[N; f64]); "
                              "with `jax_enable_x64` off, JAX turns f64 arrays into f32")
    assert "`with jax.enable_x64(True):`" in message and "jax_enable_x64\", True)" in message
    with jax.enable_x64(True), pytest.raises(InputError) as err:  # a real f32 input
        twice(jax.numpy.ones(3, jax.numpy.float32))
    assert str(err.value).endswith("the language converts no dtype implicitly: cast it first")
