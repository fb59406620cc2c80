"""`--backend cpu-pipelined` on the accelerator: with the host's C simulator and the chip
overlapped, the rollout and the training step compute what the jitted CPU backend computes
there (references and tolerances: tests/pipelined_reference.py), with the CLI's default
network. Matmuls at full float32 precision: the chip's default precision rounds their
inputs, and two programs fused otherwise could round otherwise."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from flax import nnx
from pipelined_reference import (
    assert_close,
    assert_seeds_match_alone,
    assert_training_matches,
    parts_rollout,
)

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo import PPOConfig, new_training_state
from modular_ppo.ppo.pipelined_rollout import collect_pipelined
from modular_ppo.ppo.pipelined_step import pipelined_train_step


@pytest.fixture(scope="module")
def env():
    """hopper-modular: a random policy falls within a few dozen steps, so episodes end by
    termination as well as by the (short) time limit."""
    return make_env(load_body("hopper-modular"), EnvConfig(episode_length=7), "cpu")


def network(env, seed=0):
    return make_network(env.body, env.obs_sizes, NetworkConfig(), rngs=nnx.Rngs(seed))


def test_the_pipelined_rollout_on_the_chip_is_the_cpu_backends(env):
    n_envs, length = 8, 12
    with jax.default_matmul_precision("float32"):
        graphdef, network_state = nnx.split(network(env))
        env_state = jax.vmap(env.reset)(jax.random.split(jax.random.key(3), n_envs))
        tilted = env_state.data.qpos.at[jnp.array([1, 6]), 2].set(0.6)  # terminate at once
        env_state = env_state.replace(data=env_state.data.replace(qpos=tilted))
        recurrent = nnx.merge(graphdef, network_state).initialize_state(n_envs)
        expected = parts_rollout(
            env, graphdef, network_state, env_state, recurrent, length)
        actual = collect_pipelined(env, graphdef, network_state, env_state, recurrent, length)
    assert_close(expected, actual)
    assert float(actual[3].done.sum()) > float(actual[3].truncated.sum()) > 0


@pytest.mark.parametrize("device_share", [0.0, 0.5], ids=["host", "device-share"])
def test_pipelined_training_on_the_chip_matches_the_jitted_backends(env, device_share):
    """With a device share, half the envs are MJX's on the chip (its device twin)."""
    config = PPOConfig(n_envs=8, rollout_length=5, n_epochs=2, n_minibatches=2,
                       iterations_per_call=2, total_steps=80)
    with jax.default_matmul_precision("float32"):
        groups, state = new_training_state([(env, network(env))], config, seed=0)
        step = pipelined_train_step(groups, config, state, device_share)
        assert_training_matches(groups, config, state, step, device_share=device_share)


def test_seeds_in_one_pipelined_program_on_the_chip_are_each_seed_alone(env):
    """`--seeds` on the pipelined backend, half the envs on MJX on the chip."""
    config = PPOConfig(n_envs=8, rollout_length=5, n_epochs=2, n_minibatches=2,
                       iterations_per_call=2, total_steps=80)
    with jax.default_matmul_precision("float32"):
        assert_seeds_match_alone(env, lambda seed: network(env, seed), config, 0.5)


def test_the_c_simulators_evaluation_runs_on_the_host_and_agrees_with_the_chips(env):
    """`make_evaluator` of the C simulator's env runs the episodes on the host's CPU
    (`evaluation_device`: no device round trip a step) with the metrics an evaluation on
    the chip gives (full-precision matmuls on both; episodes of 7 steps, hopper's early
    terminations included)."""
    from modular_ppo.ppo import EvalConfig, make_evaluator
    from modular_ppo.ppo.evaluate import Evaluator

    config, key = EvalConfig(n_envs=6), jax.random.key(2)
    graphdef, network_state = nnx.split(network(env, seed=1))
    with jax.default_matmul_precision("float32"):
        evaluator = make_evaluator(env, graphdef, config)
        on_host = evaluator(network_state, key)
        on_chip = Evaluator(env, graphdef, config)(network_state, key)
    if jax.default_backend() != "cpu":
        assert evaluator.device is not None and evaluator.device.platform == "cpu"
    assert {d.platform for d in on_host["episode/team_return"].devices()} == {"cpu"}
    for name, value in on_chip.items():
        assert float(on_host[name]) == pytest.approx(float(value), rel=1e-3, abs=1e-4), name
