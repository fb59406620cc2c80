"""`CompileAhead`: a program per function, static arguments and argument shapes, compiled
on its threads and equal to the jitted function; with an exported store, read back by a
later compile without tracing, per label and shapes, and rewritten when unreadable."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from modular_ppo.ppo import ahead as ahead_module
from modular_ppo.ppo.ahead import CompileAhead
from modular_ppo.ppo.exported_step import ExportedSteps


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


TRACED = []


@functools.partial(jax.jit, static_argnums=0)
def counted(factor: int, tree: dict) -> tuple[dict, jax.Array]:
    TRACED.append(factor)  # runs only when the function is traced
    return {name: x * factor for name, x in tree.items()}, jnp.sum(tree["a"])


def _store_compile(folder, label="body", factor=2, tree=None):
    ahead = CompileAhead(ExportedSteps(folder, "key"))
    future, shapes = ahead.submit(counted, factor, tree or {"a": jnp.arange(3.0)},
                                  n_static=1, label=label)
    ahead.close()
    return future.result(), shapes


def test_a_stored_program_is_read_back_without_tracing(tmp_path):
    tree = {"a": jnp.arange(3.0)}
    TRACED.clear()
    counted.clear_cache()
    first, shapes = _store_compile(tmp_path)
    [written] = tmp_path.glob(f"*{ahead_module.SUFFIX}")
    again, shapes_again = _store_compile(tmp_path)
    assert TRACED == [2]  # the second compile read the file
    assert shapes == shapes_again == ({"a": jax.ShapeDtypeStruct((3,), jnp.float32)},
                                      jax.ShapeDtypeStruct((), jnp.float32))
    for program in (first, again):
        result, total = program(tree)
        np.testing.assert_array_equal(result["a"], [0.0, 2.0, 4.0])
        assert float(total) == 3.0
    _store_compile(tmp_path, label="another body")
    _store_compile(tmp_path, tree={"a": jnp.arange(4.0)})
    assert len(list(tmp_path.glob("*.program"))) == 3
    written.write_bytes(b"cut short")
    result, _ = _store_compile(tmp_path)[0](tree)  # unreadable: exported and written again
    assert len(written.read_bytes()) > 100
    np.testing.assert_array_equal(result["a"], [0.0, 2.0, 4.0])


@jax.jit
def calls_back(x: jax.Array) -> jax.Array:
    return jax.pure_callback(np.negative, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


def test_a_program_that_calls_back_into_python_is_compiled_without_the_store(tmp_path):
    ahead = CompileAhead(ExportedSteps(tmp_path, "key"))
    future, _ = ahead.submit(calls_back, jnp.arange(3.0), label="callback")
    ahead.close()
    np.testing.assert_array_equal(future.result()(jnp.arange(3.0)), -np.arange(3.0))
    assert not list(tmp_path.iterdir())
