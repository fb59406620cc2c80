"""Host calls (modular_ppo.env.host_call): a Python function run from jitted code through
one XLA FFI target. What they must do as `jax.pure_callback` did: hand the function the
whole batch under vmap, return its arrays, run inside scans and conds; and what
pure_callback could not: leave no Python object in the compiled program (so JAX's
persistent cache keeps it; the CLI test of the cache checks a CPU-backend run loads its
programs). A function that raises, or a key with nothing behind it, is an error JAX raises
with the message, and the process goes on."""

import ctypes
import gc

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from modular_ppo.env import host_call as host_call_module
from modular_ppo.env.host_call import TARGET, host_call, register


class Recorder:
    """Returns (2x + y, x > 0 as int32) and records the shapes it was called with."""

    def __init__(self):
        self.shapes = []

    def affine(self, x: np.ndarray, y: np.ndarray):
        self.shapes.append((x.shape, y.shape))
        return 2 * x + y, (x > 0).astype(np.int32)

    def fails(self, x: np.ndarray):
        raise ValueError(f"refused an array of shape {x.shape}")


def _affine(key: str, x, y):
    return host_call(key, (jax.ShapeDtypeStruct(x.shape, jnp.float32),
                           jax.ShapeDtypeStruct(x.shape, jnp.int32)), x, y)


def test_values_and_the_whole_batch_under_vmap_and_scan():
    recorder = Recorder()
    register("test/affine", recorder, "affine")
    x = jnp.arange(12.0).reshape(4, 3) - 5
    y = jnp.full(3, 0.5)

    @jax.jit
    def run(x):
        def step(x, _):
            out, positive = jax.vmap(lambda row: _affine("test/affine", row, y))(x)
            return out, positive

        return jax.lax.scan(step, x, None, length=3)

    final, positive = run(x)
    expected = np.asarray(x)
    for t in range(3):
        np.testing.assert_array_equal(positive[t], (expected > 0).astype(np.int32))
        expected = 2 * expected + 0.5
    np.testing.assert_allclose(final, expected)
    # One call per scan step, each with the whole batch, the unbatched input broadcast.
    assert recorder.shapes == [((4, 3), (4, 3))] * 3


def test_a_buffer_at_a_seen_address_is_read_with_its_own_shape_and_dtype():
    """The handler reuses the numpy view of a buffer seen before only where data, dtype and
    shape all match: XLA reuses addresses, and the same memory may next hold an array of
    another shape (the dims rewritten in place) or dtype."""
    memory = np.arange(12, dtype=np.float32)
    dims = np.array([3, 4], dtype=np.int64)
    head = bytearray(host_call_module._BUFFER_HEAD.pack(
        host_call_module._BUFFER_HEAD.size, 0, 11, memory.ctypes.data, 2, dims.ctypes.data))
    buffer = (ctypes.c_char * len(head)).from_buffer(head)

    def read():
        return host_call_module._array(ctypes.addressof(buffer))

    first = read()
    assert first.shape == (3, 4) and first.dtype == np.float32
    assert read() is first  # seen: the same view
    dims[:] = [4, 3]
    np.testing.assert_array_equal(read(), memory.reshape(4, 3))
    struct_size, extension, _, data, rank, dims_pointer = (
        host_call_module._BUFFER_HEAD.unpack(bytes(head)))
    head[:] = host_call_module._BUFFER_HEAD.pack(struct_size, extension, 4, data, rank,
                                                 dims_pointer)  # int32, same bytes
    as_int = read()
    assert as_int.dtype == np.int32 and as_int.shape == (4, 3)
    np.testing.assert_array_equal(as_int, memory.view(np.int32).reshape(4, 3))


def test_the_compiled_program_names_the_target_and_key_and_holds_no_callback():
    register("test/affine", recorder := Recorder(), "affine")
    lowered = jax.jit(lambda x: _affine("test/affine", x, x)).lower(jnp.ones(3))
    text = lowered.as_text()
    assert f"custom_call @{TARGET}(" in text and 'key = "test/affine"' in text
    assert lowered._lowering.compile_args["host_callbacks"] == []
    assert recorder is not None


def test_a_function_that_raises_is_an_error_with_its_message_and_the_next_call_works():
    recorder = Recorder()
    register("test/fails", recorder, "fails")
    register("test/affine", recorder, "affine")
    call = jax.jit(lambda x: host_call("test/fails", (jax.ShapeDtypeStruct(x.shape, x.dtype),),
                                       x))
    with pytest.raises(Exception, match=r"ValueError: refused an array of shape \(2, 5\)"):
        jax.block_until_ready(call(jnp.zeros((2, 5))))
    out, _ = jax.jit(lambda x: _affine("test/affine", x, x))(jnp.ones(2))
    np.testing.assert_array_equal(out, [3.0, 3.0])


def test_a_key_whose_object_is_gone_is_an_error_that_says_so():
    recorder = Recorder()
    register("test/gone", recorder, "affine")
    call = jax.jit(lambda x: _affine("test/gone", x, x))
    np.testing.assert_array_equal(call(jnp.ones(2))[0], [3.0, 3.0])
    del recorder
    gc.collect()
    with pytest.raises(Exception, match="nothing registered under 'test/gone'"):
        jax.block_until_ready(call(jnp.ones(2)))
    with pytest.raises(Exception, match="nothing registered under 'test/never'"):
        jax.block_until_ready(jax.jit(lambda x: _affine("test/never", x, x))(jnp.ones(2)))


def test_empty_boolean_and_integer_buffers_pass_through():
    """Bodies without actuator activations have an empty `act` in every state."""

    class Identity:
        def arrays(self, *arrays):
            return arrays

    identity = Identity()
    register("test/identity", identity, "arrays")
    inputs = (jnp.zeros((4, 0)), jnp.array([True, False]), jnp.arange(6, dtype=jnp.int32))
    outputs = jax.jit(lambda *xs: host_call(
        "test/identity", tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in xs), *xs))(*inputs)
    for given, returned in zip(inputs, outputs):
        assert returned.shape == given.shape and returned.dtype == given.dtype
        np.testing.assert_array_equal(returned, given)


def test_off_the_cpu_a_host_call_is_a_host_callback(monkeypatch):
    """On an accelerator the FFI handler could not read XLA's (device) buffers: there the
    call goes through jax.pure_callback, with the same values."""
    recorder = Recorder()
    register("test/affine", recorder, "affine")
    x = jnp.arange(6.0) - 2
    on_cpu = jax.jit(lambda x: _affine("test/affine", x, x))(x)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    function = jax.jit(lambda x: _affine("test/affine", x, x))
    assert function.lower(x)._lowering.compile_args["host_callbacks"]
    for expected, got in zip(on_cpu, function(x)):
        np.testing.assert_array_equal(got, expected)
