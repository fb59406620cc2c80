"""Several seeds in one program (`modular_ppo.ppo.seeds`): each seed's parameters, optimizer
state, env states and metrics after a few iterations equal that seed trained alone by
`train`; seeds that differ give different trainings; mismatched seeds are refused.

Tolerance: on CPU the vmapped program batches the seeds' matrix products, which may sum in
another order than one seed's, so values are compared to rtol 1e-4 / atol 1e-5 (float32);
integer leaves (step counters, iterations, keys) must be equal."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest
from flax import nnx
from ppo_test_network import PerModuleMLP

from modular_ppo.ppo import BodyGroupError, PPOConfigError, train, train_from_scratch
from modular_ppo.ppo.seeds import new_seed_states, one_seed, train_seeds

SEEDS = (3, 0, 7)
RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(scope="module")
def config(learning_config):
    """Three calls of two iterations each."""
    return dataclasses.replace(learning_config, iterations_per_call=2,
                               total_steps=3 * 2 * learning_config.steps_per_iteration)


def _bodies(env):
    return lambda seed: [(env, PerModuleMLP(env.obs_sizes, env.action_sizes,
                                            rngs=nnx.Rngs(seed)))]


@pytest.fixture(scope="module")
def together(learning_env, config):
    groups, states = new_seed_states(_bodies(learning_env), config, SEEDS)
    return train_seeds(groups, states, config)


def _assert_close(ours, alone, what):
    for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(ours), jax.tree.leaves(alone)):
        if jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key):
            a, b = jax.random.key_data(a), jax.random.key_data(b)
        a, b = np.asarray(a), np.asarray(b)
        where = f"{what}{jax.tree_util.keystr(path)}"
        if np.issubdtype(a.dtype, np.inexact):
            np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=where)
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)


@pytest.mark.parametrize("index", range(len(SEEDS)))
def test_each_seed_equals_that_seed_trained_alone(learning_env, config, together, index):
    seed = SEEDS[index]
    alone = train_from_scratch(_bodies(learning_env)(seed), config, seed=seed)
    ours = one_seed(together.states, index)
    assert jax.tree.structure(ours) == jax.tree.structure(alone.state)
    _assert_close(ours, alone.state, f"seed {seed} state")
    assert int(ours.steps) == int(alone.state.steps) == config.total_steps
    metrics = together.metrics[index]
    timing = ("time/", "throughput/", "steps")
    assert {k for k in metrics if not k.startswith(timing)} == {
        k for k in alone.metrics if not k.startswith(timing)}
    for key, value in alone.metrics.items():
        if not key.startswith(timing):
            np.testing.assert_allclose(metrics[key], value, rtol=RTOL, atol=ATOL, err_msg=key)


def test_seeds_train_apart_and_report_the_program_once(together, config):
    first, second = (one_seed(together.states, i).params for i in (0, 1))
    differences = [float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                   for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(second))]
    assert max(differences) > 1e-2
    returns = [m["episode/team_return"] for m in together.metrics]
    assert len(set(returns)) == len(SEEDS)
    for metrics in together.metrics:
        assert metrics["steps"] == config.total_steps
        assert metrics["throughput/env_steps_per_s"] > 0


def test_seeds_must_build_the_same_program(learning_env, toy_env, config):
    envs = {0: learning_env, 1: toy_env}
    with pytest.raises(BodyGroupError, match="seed 1 builds other groups than seed 0"):
        new_seed_states(lambda seed: _bodies(envs[seed])(seed), config, [0, 1])
    with pytest.raises(PPOConfigError, match="distinct seeds"):
        new_seed_states(_bodies(learning_env), config, [2, 2])
    groups, states = new_seed_states(_bodies(learning_env), config, [0])
    with pytest.raises(PPOConfigError, match="use train"):
        train_seeds(groups, one_seed(states, 0), config)


def test_one_seed_in_one_program_is_train(learning_env, config, together):
    """The seed axis of length one changes nothing either: seed 3 alone, vmapped, ends where
    `train` ends from the same state."""
    groups, states = new_seed_states(_bodies(learning_env), config, [SEEDS[0]])
    vmapped = train_seeds(groups, states, config)
    plain = train(groups, one_seed(states, 0), config)
    _assert_close(one_seed(vmapped.states, 0), plain.state, "one seed")
