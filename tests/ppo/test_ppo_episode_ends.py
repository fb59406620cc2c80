"""How episodes end (`ppo.episode_ends`): the same episodes as the evaluation's, each
counted once, by the time limit or by termination, and every termination by a cause."""

import jax
import numpy as np
import pytest
from flax import nnx
from ppo_test_network import PerModuleMLP

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.env.errors import EnvError
from modular_ppo.ppo import EvalConfig
from modular_ppo.ppo.episode_ends import episode_ends

N = 24


@pytest.fixture(scope="module")
def hopper_and_network():
    env = make_env(load_body("hopper-modular"), EnvConfig(episode_length=40), "cpu", nthread=1)
    network = PerModuleMLP(env.obs_sizes, env.action_sizes, rngs=nnx.Rngs(4))
    network.log_stds = nnx.Dict({m: nnx.Param(np.full(n, 0.5, np.float32))
                                 for m, n in env.action_sizes.items()})
    return env, *nnx.split(network)


def first_ends(env, graphdef, network_state, key, steps, deterministic):
    """Step by hand with the env's own step (auto-reset on): for each environment, whether
    its first episode was truncated (1), terminated (0) or still running (nan)."""
    @jax.jit
    def act_and_step(network_state, env_state):
        network = nnx.merge(graphdef, network_state)
        out = network((), env_state.obs, deterministic=deterministic)
        return nnx.state(network), jax.vmap(env.step)(env_state, out.output.actions)

    env_state = jax.vmap(env.reset)(jax.random.split(key, N))
    ended = np.full(N, np.nan)
    for _ in range(steps):
        network_state, env_state = act_and_step(network_state, env_state)
        done = np.asarray(env_state.done) > 0
        new = done & np.isnan(ended)
        ended[new] = np.asarray(env_state.info["truncation"])[new]
    return ended


@pytest.mark.parametrize("steps, deterministic", [(40, False), (12, False), (40, True)])
def test_each_episode_ends_once_as_the_envs_own_step_says(hopper_and_network, steps,
                                                         deterministic):
    env, graphdef, network_state = hopper_and_network
    key = jax.random.key(7)
    config = EvalConfig(n_envs=N, episode_length=steps, deterministic=deterministic)
    ends = episode_ends(env, graphdef, network_state, config, key)
    by_hand = first_ends(env, graphdef, network_state, key, steps, deterministic)
    assert ends["ended/time_limit"] == pytest.approx(np.mean(by_hand == 1))
    assert ends["ended/terminated"] == pytest.approx(np.mean(by_hand == 0))
    assert ends["ended/still_running"] == pytest.approx(np.mean(np.isnan(by_hand)))
    causes = {k: v for k, v in ends.items() if k.startswith("ended/healthy_")}
    assert set(causes) == {"ended/healthy_z below", "ended/healthy_z above",
                           "ended/healthy_angle below", "ended/healthy_angle above",
                           "ended/healthy_state"}
    assert all(v <= ends["ended/terminated"] + 1e-6 for v in causes.values())
    assert sum(causes.values()) >= ends["ended/terminated"] - 1e-6  # each has a cause
    assert ends["ended/healthy_z above"] == 0.0  # the hopper's height has no upper bound


def test_the_runs_cover_every_way_to_end(hopper_and_network):
    """The cases above are not vacuous: the hopper's stochastic policy both falls and
    reaches the time limit within 40 steps, and is still running after 12."""
    env, graphdef, network_state = hopper_and_network
    ends = episode_ends(env, graphdef, network_state,
                        EvalConfig(n_envs=N, episode_length=40, deterministic=False),
                        jax.random.key(7))
    assert 0 < ends["ended/terminated"] < 1 and 0 < ends["ended/time_limit"] < 1


def test_an_env_without_a_readable_end_is_refused(toy_env, make_test_network):
    graphdef, network_state = nnx.split(make_test_network())
    with pytest.raises(EnvError, match="TargetReachingEnv.*make_env"):
        episode_ends(toy_env, graphdef, network_state, EvalConfig(n_envs=4),
                     jax.random.key(0))
