"""PPO learns the toy task, beyond what a random policy or a broken learner reaches; a
resumed run continues bit for bit; the host loop reports what the run layer needs."""

import dataclasses

import jax
import numpy as np
import orbax.checkpoint as ocp
import pytest
from flax import nnx

from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo import make_evaluator, new_training_state, train, train_from_scratch

class NegatedRewards:
    """The toy task with every reward sign-flipped: a learner that climbs it descends the
    real task, as a learner with sign-flipped advantages would."""

    def __init__(self, env):
        self.env = env
        self.body, self.episode_length = env.body, env.episode_length
        self.obs_sizes, self.action_sizes = env.obs_sizes, env.action_sizes

    def reset(self, key):
        return self.env.reset(key)

    def step(self, state, action):
        state = self.env.step(state, action)
        return state.replace(reward=jax.tree.map(lambda r: -r, state.reward))


@pytest.fixture(scope="module")
def env(learning_env):
    return learning_env


@pytest.fixture(scope="module")
def config(learning_config):
    return learning_config


@pytest.fixture(scope="module")
def evaluator(env, make_test_network, eval_config, config):
    (group,), _ = new_training_state([(env, make_test_network())], config, seed=0)
    return make_evaluator(env, group.graphdef, eval_config)


def team_return(evaluator, network_state):
    return float(evaluator(network_state, jax.random.key(123))["episode/team_return"])


@pytest.fixture(scope="module")
def trained(env, make_test_network, config):
    calls = []
    result = train_from_scratch(
        [(env, make_test_network())], config,
        on_iteration=lambda state, metrics: calls.append((state, metrics)) and False)
    return result, calls


@pytest.fixture(scope="module")
def baselines(env, make_test_network, evaluator, eval_config, config):
    """Team returns that a working learner must beat by far."""
    (group,), untrained = new_training_state([(env, make_test_network())], config, seed=0)
    random_policy = make_evaluator(
        env, group.graphdef, dataclasses.replace(eval_config, deterministic=False))
    flipped = train_from_scratch([(NegatedRewards(env), make_test_network())], config)
    return {
        "random policy": float(random_policy(untrained.network_state(),
                                             jax.random.key(123))["episode/team_return"]),
        "sign-flipped advantages": team_return(evaluator, flipped.state.network_state()),
    }


# Each module starts about 2/3 away from its target on average: about -13 per module over
# 20 steps when standing still; a module that goes to its target and stays gets about -3.
# Measured team returns (deterministic evaluation): random policy -40, sign-flipped
# advantages -66, trained -7.
THRESHOLD = -15.0


def test_ppo_beats_random_policy_and_broken_learner(evaluator, trained, baselines):
    trained_return = team_return(evaluator, trained[0].state.network_state())
    print({**baselines, "trained": trained_return})
    assert max(baselines.values()) < THRESHOLD - 10, baselines
    assert trained_return > THRESHOLD, (trained_return, baselines)


def test_ppo_trains_the_networks_stage_separate_mlps_on_team_advantages(env, config,
                                                                        baselines):
    network = make_network(
        env.body, env.obs_sizes,
        NetworkConfig(arch="separate", policy_hidden_sizes=(32, 32),
                      value_hidden_sizes=(32, 32), entropy_weight=0.0),
        rngs=nnx.Rngs(0),
    )
    result = train_from_scratch([(env, network)],
                                dataclasses.replace(config, combine_advantages=True))
    # The stochastic policy's return over the last 10 iterations, while still learning.
    final = result.metrics["episode/team_return"]
    print({**baselines, "separate MLPs, last iterations": final})
    assert final > THRESHOLD, (final, baselines)


def test_host_loop_reports_compile_time_throughput_and_per_module_metrics(env, config,
                                                                          trained):
    result, calls = trained
    assert len(calls) == config.total_steps // (config.iterations_per_call
                                                * config.steps_per_iteration)
    first, later = calls[0][1], calls[-1][1]
    assert first["time/compile_s"] > 0 and "time/compile_s" not in later
    assert later["throughput/env_steps_per_s"] > 0
    assert later["steps"] == config.total_steps == int(result.state.steps)
    assert later["iteration"] == config.total_steps // config.steps_per_iteration
    for module in env.body.module_names:
        for name in ("losses/actor", "losses/critic", "critic/explained_variance",
                     "losses/clipping_fraction", "advantages/mean", "advantages/std",
                     "episode/return", "nonfinite/critic"):
            assert f"{name}/{module}" in later, f"{name}/{module}"
    # 32 envs x 200 steps per call, episodes of 20 steps.
    assert later["episode/count"] == 32 * 10
    returns = sum(later[f"episode/return/{m}"] for m in env.body.module_names)
    np.testing.assert_allclose(later["episode/team_return"], returns, rtol=1e-5)
    assert later["episode/length"] == 20.0
    assert later["nonfinite/any"] is False
    assert later["critic/explained_variance/hub"] > 0.5
    # Normalizer statistics were updated from every rollout, once.
    normalizers = result.state.network_state()["normalizers"]
    assert int(normalizers["hub"]["count"][...]) == config.total_steps


def test_on_iteration_returning_true_stops_training(env, config, make_test_network):
    seen = []
    result = train_from_scratch(
        [(env, make_test_network())], config,
        on_iteration=lambda state, metrics: seen.append(metrics) or len(seen) == 2)
    assert len(seen) == 2 and int(result.state.iteration) == 2 * config.iterations_per_call


def test_resume_from_checkpoint_continues_bit_for_bit(env, config, trained, tmp_path):
    result, calls = trained
    halfway = calls[1][0]
    with ocp.StandardCheckpointer() as checkpointer:
        checkpointer.save(tmp_path / "state", halfway)
    with ocp.StandardCheckpointer() as checkpointer:
        restored = checkpointer.restore(
            tmp_path / "state", jax.tree.map(ocp.utils.to_shape_dtype_struct, halfway)
        )
    resumed = train(result.groups, restored, config)
    assert int(resumed.state.steps) == int(result.state.steps)
    same = jax.tree.map(
        lambda a, b: bool(np.array_equal(jax.random.key_data(a), jax.random.key_data(b)))
        if jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key) else bool(np.array_equal(a, b)),
        resumed.state, result.state,
    )
    assert all(jax.tree.leaves(same))
