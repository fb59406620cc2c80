"""`mabrax_env` is MABrax to the letter on MJX: for each of MABrax's five tasks, the agents,
observation and action spaces of JaxMARL's MABrax env (constructed, not stepped: it needs
Brax, `[bench]`; without Brax the shapes its mappings.py implies); in rollouts of three of
them (`ROLLED_OUT`, one on MJX), every agent rewarded with the team reward, dones for
every agent at the episode's end; and JaxMARL-style IPPO and MAPPO (benchmarks/ippo.py)
update on it unchanged with finite losses."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from modular_ppo.interop import InteropError, MABRAX_TASKS, mabrax_env
from modular_ppo.interop.mabrax import index_maps

N_ENVS, N_STEPS, EPISODE = 2, 4, 2
IPPO_FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "ippo.py"


def _mabrax_spaces(task: str) -> dict[str, tuple]:
    """Agent -> (obs shape, obs dtype, action shape, action dtype, low, high) of MABrax."""
    if importlib.util.find_spec("brax") is not None:
        import jaxmarl

        with pytest.warns(DeprecationWarning, match="MABrax is deprecated"):
            env = jaxmarl.make(task)
        return {a: (env.observation_space(a).shape, env.observation_space(a).dtype,
                    env.action_space(a).shape, env.action_space(a).dtype,
                    env.action_space(a).low, env.action_space(a).high) for a in env.agents}
    actions, observations = index_maps(task)
    return {a: ((observations[a].size,), jnp.float32, (actions[a].size,), jnp.float32,
                -1.0, 1.0) for a in observations}


def _spaces(env) -> dict[str, tuple]:
    return {a: (env.observation_space(a).shape, env.observation_space(a).dtype,
                env.action_space(a).shape, env.action_space(a).dtype,
                env.action_space(a).low, env.action_space(a).high) for a in env.agents}


@pytest.mark.parametrize("task", list(MABRAX_TASKS))
def test_agents_and_spaces_are_mabrax(task):
    env = mabrax_env(task)
    expected = _mabrax_spaces(task)
    assert env.agents == list(expected)
    assert env.num_agents == len(expected)
    assert _spaces(env) == expected


def test_unknown_task_names_the_five():
    with pytest.raises(InteropError, match="no MABrax task 'ant_2x4'.*hopper_3x1"):
        mabrax_env("ant_2x4")


ROLLED_OUT = [("halfcheetah_6x1", "cpu"), ("hopper_3x1", "cpu"), ("humanoid_9|8", "cpu")]
"""One task per form of Brax's observation (`brax_observation`): qpos[1:] and qvel; the
torso's height and clipped qvel (walker2d's too); qpos[2:], qvel and the inertial blocks
(the ant's without them), whose frames the C simulator's states give through their body
frames. The rewards and dones are the same code for every task and either simulator
(MJX's rollout: test_interop_mabrax.py, which checks each task's observation map on
MJX's data, the humanoid's on the C simulator's state too)."""


@pytest.mark.parametrize(("task", "backend"), ROLLED_OUT)
def test_every_agent_gets_the_team_reward_and_the_same_done(task, backend):
    env = mabrax_env(task, episode_length=EPISODE, backend=backend)

    def rollout(key):
        obs, state = env.reset(key)

        def step(state, key):
            actions = {a: jax.random.uniform(jax.random.fold_in(key, i),
                                             env.action_space(a).shape, minval=-1, maxval=1)
                       for i, a in enumerate(env.agents)}
            # JaxMARL's auto-reset: one step_env, whose rewards, dones and infos these are
            obs, state, rewards, dones, infos = env.step(key, state, actions)
            return state, dict(obs=obs, rewards=rewards, dones=dones,
                               truncation=infos["truncation"])

        return jax.lax.scan(step, state, jax.random.split(key, N_STEPS))[1]

    out = jax.jit(jax.vmap(rollout))(jax.random.split(jax.random.PRNGKey(0), N_ENVS))
    assert all(np.isfinite(out["obs"][a]).all() for a in env.agents)
    assert np.isfinite(out["rewards"]["__all__"]).all()
    for agent in [*env.agents, "__all__"]:
        np.testing.assert_array_equal(out["rewards"][agent], out["rewards"]["__all__"])
        assert out["dones"][agent].dtype == jnp.bool_
        np.testing.assert_array_equal(out["dones"][agent], out["dones"]["__all__"])
    ended = np.asarray(out["dones"]["__all__"])
    # each episode ends by step EPISODE: at its time limit (truncation) or earlier
    assert ended[:, EPISODE - 1].all()
    np.testing.assert_array_equal(out["truncation"] > 0, ended & (out["truncation"] > 0))


@pytest.mark.parametrize("centralized_critic", [False, True], ids=["ippo", "mappo"])
def test_jaxmarl_style_ippo_and_mappo_update_on_mabrax_env(centralized_critic):
    spec = importlib.util.spec_from_file_location("ippo", IPPO_FILE)
    ippo = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = ippo  # as an import registers it
    spec.loader.exec_module(ippo)
    env = mabrax_env("hopper_3x1", episode_length=EPISODE, backend="cpu")  # MJX: the rollouts
    config = ippo.ippo_config(TOTAL_TIMESTEPS=2 * 4 * 4, NUM_ENVS=4, NUM_STEPS=4,
                              NUM_MINIBATCHES=2, UPDATE_EPOCHS=1,
                              CENTRALIZED_CRITIC=centralized_critic)
    params, curve = ippo.train_ippo(env, config, jax.random.PRNGKey(0))
    assert [row["steps"] for row in curve] == [16, 32]
    assert all(np.isfinite(row["loss"]) and np.isfinite(row["team_return"]) for row in curve)
    assert all(np.isfinite(x).all() for x in jax.tree.leaves(params))
