"""The training step on the accelerator: the state lives on the device across calls with no
transfer between host and device, and a run restored from a checkpoint continues bit for bit
there. The tiny body (two modules, no contacts) on the MJX backend keeps the compile short."""

from __future__ import annotations

import os

import jax
import numpy as np
import pytest
from flax import nnx
from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo import PPOConfig, new_training_state, train_step
from modular_ppo.runs.checkpoint import Checkpointer

CONFIG = PPOConfig(n_envs=32, rollout_length=8, n_minibatches=2, n_epochs=2,
                   iterations_per_call=2)


@pytest.fixture(scope="module")
def training():
    """The groups and the state after one (compiling) call of the training step."""
    env = make_env(BodyGraph.from_mjcf(tiny_xml()), EnvConfig(episode_length=16), "mjx")
    network = make_network(env.body, env.obs_sizes, NetworkConfig(arch="separate"),
                           rngs=nnx.Rngs(0))
    groups, state = new_training_state([(env, network)], CONFIG, seed=0)
    state, _ = train_step(groups, CONFIG, state)
    return groups, jax.block_until_ready(state)


def _leaves(tree) -> list[jax.Array]:
    return [jax.random.key_data(x) if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else x
            for x in jax.tree.leaves(tree)]


def _bits(tree) -> list[tuple[str, tuple, bytes]]:
    return [(str(x.dtype), x.shape, np.asarray(x).tobytes()) for x in _leaves(tree)]


def test_xla_optimizes_as_in_users_programs(request):
    if request.config.option.markexpr != "accelerator":
        pytest.skip("XLA's flags are the user's in a run of -m accelerator (tests/conftest.py)")
    assert "--xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", "")


def test_the_state_stays_on_the_device_across_calls(training):
    groups, state = training
    device = jax.devices()[0]
    before = _bits(state.params)
    with jax.transfer_guard("disallow"):  # any implicit host <-> device copy raises
        for _ in range(3):
            state, metrics = train_step(groups, CONFIG, state)
        state = jax.block_until_ready(state)
    for leaf in _leaves((state, metrics)):
        assert isinstance(leaf, jax.Array) and leaf.devices() == {device}, leaf
    assert int(state.iteration) == 4 * CONFIG.iterations_per_call
    assert _bits(state.params) != before, "three calls should have changed the parameters"
    assert np.isfinite(float(metrics["losses/total"]))


def test_a_restored_run_continues_bit_for_bit_on_the_device(training, tmp_path):
    groups, state = training
    checkpoints = Checkpointer(tmp_path / "checkpoints", {"body": "tiny", "arch": "separate"})
    checkpoints.save(int(state.iteration), state)
    zeros = jax.tree.map(lambda x: x if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)
                         else jax.numpy.zeros_like(x), state)
    _, restored = checkpoints.restore_latest(zeros)
    assert _bits(restored) == _bits(state)
    for _ in range(2):
        state, _ = train_step(groups, CONFIG, state)
        restored, _ = train_step(groups, CONFIG, restored)
    assert {d for leaf in _leaves(restored) for d in leaf.devices()} == {jax.devices()[0]}
    assert _bits(restored) == _bits(state)
