"""JaxMARL-style IPPO and MAPPO (benchmarks/ippo.py, also behind benchmarks/mabrax.py)
learn through the JaxMARL adapter: on the tiny body the deterministic return ends far above
the untrained policy's (slow: `pytest -m benchmark`). MAPPO's critic reads every agent's
observation and the agent's index (CI)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph
from modular_ppo.env import EnvConfig
from modular_ppo.interop import JaxMARLEnv

MARGIN = 100.0
"""Team return the trained policy must gain over the untrained one (seed 0, IPPO: -2.6
untrained, 483.6 after 160k steps); a policy that has not learned to push stays near 0."""
IPPO_FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "ippo.py"


def _ippo():
    spec = importlib.util.spec_from_file_location("ippo", IPPO_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import registers it
    spec.loader.exec_module(module)
    return module


def test_mappo_critic_reads_every_agents_observation_and_its_own_index():
    ippo = _ippo()
    env = JaxMARLEnv(BodyGraph.from_mjcf(tiny_xml()), config=EnvConfig(episode_length=100))
    shape = ippo.Homogenizer(env)
    n_agents = len(shape.agents)
    obs = jnp.arange(3 * n_agents * shape.obs_size, dtype=jnp.float32).reshape(
        3, n_agents, shape.obs_size)
    assert shape.critic_obs(obs, centralized=False) is obs
    world = np.asarray(shape.critic_obs(obs, centralized=True))
    assert world.shape == (3, n_agents, n_agents * shape.obs_size + n_agents)
    assert shape.critic_size(centralized=True) == world.shape[-1]
    assert shape.critic_size(centralized=False) == shape.obs_size
    for i in range(n_agents):
        np.testing.assert_array_equal(world[:, i, :-n_agents], np.asarray(obs).reshape(3, -1))
        np.testing.assert_array_equal(world[:, i, -n_agents:], np.eye(n_agents)[[i] * 3])


@pytest.mark.benchmark
@pytest.mark.parametrize("centralized_critic", [False, True], ids=["ippo", "mappo"])
def test_ippo_and_mappo_through_the_adapter_learn_on_the_tiny_body(centralized_critic):
    ippo = _ippo()
    env = JaxMARLEnv(BodyGraph.from_mjcf(tiny_xml()), config=EnvConfig(episode_length=100))
    config = ippo.ippo_config(TOTAL_TIMESTEPS=160_000, NUM_ENVS=32, NUM_STEPS=100,
                              CENTRALIZED_CRITIC=centralized_critic)
    key, init_key, eval_key = jax.random.split(jax.random.PRNGKey(0), 3)
    shape = ippo.Homogenizer(env)
    untrained = ippo.init_params(init_key, shape.obs_size,
                                 shape.critic_size(centralized_critic), shape.action_size,
                                 config["HIDDEN"])
    before = ippo.evaluate(env, untrained, eval_key, n_envs=16, n_steps=100)
    params, curve = ippo.train_ippo(env, config, key)
    after = ippo.evaluate(env, params, eval_key, n_envs=16, n_steps=100)
    print(f"{'MAPPO' if centralized_critic else 'IPPO'} on tiny: untrained {before:.1f}, "
          f"trained {after:.1f}, last training returns "
          f"{[round(r['team_return'], 1) for r in curve[-3:]]}")
    assert after > before + MARGIN
