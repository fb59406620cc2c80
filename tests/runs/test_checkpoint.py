"""Checkpoints: exact round trip, fallback past a damaged checkpoint, refusal of a foreign one."""

import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from modular_ppo.runs.checkpoint import Checkpointer
from modular_ppo.runs.errors import CheckpointError


def _state(scale: float):
    return {
        "params": {"w": jnp.arange(6.0).reshape(2, 3) * scale, "b": jnp.ones(3) * scale},
        "key": jax.random.key(7),
        "steps": jnp.array(int(scale * 100)),
        "act": jnp.zeros((4, 0)),
    }


def _assert_equal(a, b):
    for x, y in zip(jax.tree.leaves(jax.tree.map(_raw, a)), jax.tree.leaves(jax.tree.map(_raw, b))):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _raw(x):
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return jax.random.key_data(x)
    return x


def test_round_trip_keeps_every_leaf_and_prng_keys(tmp_path):
    ckpt = Checkpointer(tmp_path / "ck", {"body": "ant-modular", "arch": "separate"})
    ckpt.save(10, _state(1.0))
    ckpt.save(20, _state(2.0))
    step, restored = ckpt.restore_latest(_state(0.0))
    assert step == 20
    _assert_equal(restored, _state(2.0))
    assert jax.dtypes.issubdtype(restored["key"].dtype, jax.dtypes.prng_key)
    np.testing.assert_array_equal(
        jax.random.uniform(restored["key"], (3,)), jax.random.uniform(jax.random.key(7), (3,))
    )


def test_damaged_latest_falls_back_to_previous_with_warning(tmp_path):
    ckpt = Checkpointer(tmp_path / "ck", {"body": "b", "arch": "a"})
    ckpt.save(10, _state(1.0))
    ckpt.save(20, _state(2.0))
    ckpt.close()
    for item in (tmp_path / "ck" / "20" / "state").rglob("*"):
        if item.is_file():
            item.write_bytes(b"garbage")
    shutil.rmtree(tmp_path / "ck" / "20" / "identity", ignore_errors=True)
    ckpt = Checkpointer(tmp_path / "ck", {"body": "b", "arch": "a"})
    with pytest.warns(UserWarning, match="falling back"):
        step, restored = ckpt.restore_latest(_state(0.0))
    assert step == 10
    _assert_equal(restored, _state(1.0))


def test_checkpoint_of_another_architecture_is_refused(tmp_path):
    Checkpointer(tmp_path / "ck", {"body": "b", "arch": "separate"}).save(5, _state(1.0))
    with pytest.raises(CheckpointError, match="arch 'separate'.*built with 'shared'"):
        Checkpointer(tmp_path / "ck", {"body": "b", "arch": "shared"}).restore_latest(_state(0.0))


def test_checkpoint_of_another_shape_is_refused(tmp_path):
    Checkpointer(tmp_path / "ck", {"body": "b"}).save(5, _state(1.0))
    other = {**_state(1.0), "params": {"w": jnp.zeros((4, 3)), "b": jnp.ones(3)}}
    with pytest.raises(CheckpointError, match="another shape"):
        Checkpointer(tmp_path / "ck", {"body": "b"}).restore_latest(other)


def test_empty_checkpoint_dir_says_so(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint to resume from"):
        Checkpointer(tmp_path / "ck", {}).restore_latest(_state(0.0))
