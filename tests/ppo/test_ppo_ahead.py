"""`CompileAhead`: a program per function, static arguments and argument shapes, compiled
on its threads and equal to the jitted function."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from modular_ppo.ppo.ahead import CompileAhead


@functools.partial(jax.jit, static_argnums=0)
def scaled(factor: int, tree: dict) -> dict:
    return {name: jnp.tanh(x) * factor for name, x in tree.items()}


def test_one_program_per_function_static_arguments_and_shapes():
    ahead = CompileAhead()
    tree = {"a": jnp.arange(3.0), "b": jnp.ones((2, 2))}
    first, shapes = ahead.submit(scaled, 2, tree, n_static=1)
    again, _ = ahead.submit(scaled, 2, jax.tree.map(jnp.zeros_like, tree), n_static=1)
    other_factor, _ = ahead.submit(scaled, 3, tree, n_static=1)
    other_shape, _ = ahead.submit(scaled, 2, {**tree, "a": jnp.arange(4.0)}, n_static=1)
    ahead.close()
    assert again is first
    assert len({id(first), id(other_factor), id(other_shape)}) == 3
    assert shapes == {"a": jax.ShapeDtypeStruct((3,), jnp.float32),
                      "b": jax.ShapeDtypeStruct((2, 2), jnp.float32)}
    compiled = first.result()(tree)  # the static argument is the program's own
    for name, value in scaled(2, tree).items():
        np.testing.assert_array_equal(compiled[name], value)
    np.testing.assert_array_equal(other_factor.result()(tree)["a"], scaled(3, tree)["a"])


def test_shapes_alone_are_enough_to_compile():
    ahead = CompileAhead()
    future, shapes = ahead.submit(scaled, 1, {"a": jax.ShapeDtypeStruct((5,), jnp.float32)},
                                  n_static=1)
    ahead.close()
    assert shapes["a"].shape == (5,)
    np.testing.assert_allclose(future.result()({"a": jnp.ones(5)})["a"], np.tanh(1.0) * np.ones(5),
                               rtol=1e-6)
