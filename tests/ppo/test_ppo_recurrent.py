"""A recurrent network's log-likelihoods, recomputed in the loss, equal the rollout's."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from modular_ppo.ppo import (
    PPOConfig,
    collect_rollout,
    make_batch,
    new_training_state,
    ppo_loss,
    replay,
    split_environments,
)

# Rollouts of 16 steps, episodes of 10: episodes end mid-rollout. A clip range of 1e-3
# makes any likelihood ratio away from 1 show as clipping.
CONFIG = PPOConfig(n_envs=4, rollout_length=16, n_epochs=1, n_minibatches=2, clip_range=1e-3)


@pytest.fixture(scope="module")
def second_rollout(toy_env, make_test_network):
    """A rollout that starts from the non-zero recurrent state left by a first one."""
    groups, state = new_training_state([(toy_env, make_test_network(recurrent=True))], CONFIG, 0)
    (graphdef,), (own,) = [g.graphdef for g in groups], state.groups.values()
    roll = jax.jit(
        functools.partial(collect_rollout, toy_env, graphdef, length=CONFIG.rollout_length)
    )
    network, env_state, recurrent, _ = roll(state.network_state(), own.env_state,
                                            own.recurrent)
    _, _, end_recurrent, rollout = roll(network, env_state, recurrent)
    return graphdef, network, recurrent, rollout, end_recurrent


@pytest.fixture(scope="module")
def replay_jit(second_rollout):
    return jax.jit(functools.partial(replay, second_rollout[0]))


def test_replay_reproduces_rollout_loglikelihoods_and_values(second_rollout, replay_jit):
    _, network, recurrent, rollout, _ = second_rollout
    assert 0 < float(rollout.done.sum()) < rollout.done.size
    replayed = replay_jit(network, recurrent, rollout.obs, rollout.extras, rollout.done)
    for key in rollout.loglikelihoods:
        np.testing.assert_allclose(replayed.loglikelihoods[key], rollout.loglikelihoods[key],
                                   rtol=1e-5, atol=1e-5, err_msg=key)
    for key in rollout.values:
        np.testing.assert_allclose(replayed.values[key], rollout.values[key],
                                   rtol=1e-5, atol=1e-5, err_msg=key)


def test_replay_depends_on_initial_state_and_resets(second_rollout, replay_jit):
    """Controls: the test above would fail if either were mishandled."""
    _, network, recurrent, rollout, _ = second_rollout
    zero_start = replay_jit(network, jax.tree.map(jnp.zeros_like, recurrent), rollout.obs,
                            rollout.extras, rollout.done)
    no_resets = replay_jit(network, recurrent, rollout.obs, rollout.extras,
                           jnp.zeros_like(rollout.done))
    for wrong in (zero_start, no_resets):
        gap = max(float(jnp.max(jnp.abs(wrong.loglikelihoods[k] - rollout.loglikelihoods[k])))
                  for k in rollout.loglikelihoods)
        assert gap > 1e-3


def clipping_per_minibatch(second_rollout, recurrent):
    """The loss's clipping fractions on each shuffled minibatch, before any update."""
    graphdef, network, _, rollout, _ = second_rollout
    batch, _ = make_batch(recurrent, rollout, CONFIG)
    minibatches = split_environments(batch, jnp.array([2, 0, 3, 1]), CONFIG.n_minibatches)
    params, rest = nnx.split_state(network, nnx.Param, ...)
    loss = jax.jit(functools.partial(ppo_loss, config=CONFIG), static_argnums=2)
    return [
        loss(params, rest, graphdef, jax.tree.map(lambda x, i=i: x[i], minibatches))[1]
        .clipping_fraction
        for i in range(CONFIG.n_minibatches)
    ]


def test_loss_sees_ratio_one_on_shuffled_minibatches_before_updating(second_rollout):
    _, _, recurrent, _, end_recurrent = second_rollout
    for fractions in clipping_per_minibatch(second_rollout, recurrent):
        for key, fraction in fractions.items():
            assert float(fraction) == 0.0, key
    # Control: starting the loss from the wrong recurrent state (the rollout's last one)
    # moves the ratios off 1.
    wrong = clipping_per_minibatch(second_rollout, end_recurrent)
    assert max(float(f) for fractions in wrong for f in fractions.values()) > 0.1
