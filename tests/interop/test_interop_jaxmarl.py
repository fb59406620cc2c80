"""JaxMARL adapter: rollouts under jax.jit(jax.vmap(...)) match the ModularEnv step for step,
JaxMARL's own step auto-resets, and any body (bundled, generated, MJCF file) is served.

The rollouts are of a three-module tiny body whose base has no motor (as the hopper's
torso has none): agents are the actuated modules, the team reward sums every module's.
Without contacts it compiles for MJX in a fraction of the hopper's time (its rollout
under jit(vmap) was 28 of the file's 33 s)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.interop import JaxMARLEnv

N_ENVS, N_STEPS, EPISODE = 3, 9, 4
TAIL = ('<body name="tail" pos="0 0 0"><joint name="wag" type="hinge" axis="0 0 1"/>'
        '<geom name="tail_geom" type="capsule" fromto="0 0 0 -0.2 0 0" size="0.05" '
        'contype="0" conaffinity="0"/></body>')
UNPOWERED_BASE = tiny_xml(name="tiny-tail", base=TAIL, actuators=(
    '<motor name="bend" joint="elbow" ctrlrange="-1 1" gear="5"/>'
    '<motor name="swing" joint="wag" ctrlrange="-1 1" gear="5"/>'))
"""Modules base (no motor), tail and arm (a motor each)."""


def _random_actions(env, key):
    keys = jax.random.split(key, len(env.agents))
    return {a: jax.random.uniform(k, env.action_space(a).shape, minval=-1.0, maxval=1.0)
            for a, k in zip(env.agents, keys)}


def _rollout(env, plain):
    """The adapter (JaxMARL's step) and the auto-resetting ModularEnv from the same key and
    actions; also the observation a reset from the key JaxMARL's step resets with gives."""

    def rollout(key):
        obs, state = env.reset(key)
        plain_state = plain.reset(key)

        def step(carry, key):
            obs, state, plain_state = carry
            actions = _random_actions(env, jax.random.fold_in(key, 1))
            obs, state, rewards, dones, infos = env.step(key, state, actions)
            plain_state = plain.step(
                plain_state, {env.team.module_of[a]: x for a, x in actions.items()}
            )
            reset_obs, _ = env.reset(jax.random.split(key)[1])
            out = dict(obs=obs, rewards=rewards, dones=dones, infos=infos, reset_obs=reset_obs,
                       steps=state.info["steps"], plain_reward=plain_state.reward,
                       plain_done=plain_state.done, plain_obs=plain_state.obs)
            return (obs, state, plain_state), out

        first = dict(obs=obs, plain_obs=plain_state.obs)
        _, out = jax.lax.scan(step, (obs, state, plain_state), jax.random.split(key, N_STEPS))
        return first, out

    return jax.jit(jax.vmap(rollout))(jax.random.split(jax.random.PRNGKey(0), N_ENVS))


@pytest.fixture(scope="module")
def tiny(jaxmarl_env):
    env = JaxMARLEnv(BodyGraph.from_mjcf(UNPOWERED_BASE),
                     config=EnvConfig(episode_length=EPISODE))
    plain = make_env(env.body, EnvConfig(episode_length=EPISODE))
    return env, _rollout(env, plain)


@pytest.mark.parametrize(("name", "agents"), [("hopper-modular", ["thigh", "leg", "foot"]),
                                              ("tiny", ["tail", "arm"])])
def test_agents_are_the_actuated_modules_with_their_spaces(name, agents, jaxmarl_env, tiny):
    env = jaxmarl_env(name, EPISODE) if name == "hopper-modular" else tiny[0]
    assert env.agents == agents == list(env.env.action_sizes)
    assert env.num_agents == len(agents) < len(env.body.module_names)
    for agent in env.agents:
        assert env.observation_space(agent).shape == (env.env.obs_sizes[agent],)
        space = env.action_space(agent)
        assert space.shape == (1,) and (space.low, space.high) == (-1.0, 1.0)


def test_rollout_under_jit_vmap_has_per_agent_shapes_and_dones_with_all(tiny):
    env, (first, out) = tiny
    for agent in env.agents:
        size = env.observation_space(agent).shape[0]
        assert out["obs"][agent].shape == (N_ENVS, N_STEPS, size)
        assert out["obs"][agent].dtype == jnp.float32
        assert out["rewards"][agent].shape == (N_ENVS, N_STEPS)
    assert set(out["dones"]) == {*env.agents, "__all__"}
    for agent in env.agents:
        np.testing.assert_array_equal(out["dones"][agent], out["dones"]["__all__"])
    assert out["dones"]["__all__"].dtype == jnp.bool_
    assert set(out["rewards"]) == {*env.agents, "__all__"}


def test_first_episode_is_the_modular_env_step_for_step(tiny):
    """Until the first episode ends the adapter is the plain env: same observations, the
    agents' rewards sum to its team reward, the same done."""
    env, (first, out) = tiny
    done = np.asarray(out["dones"]["__all__"])
    first_end = done.argmax(axis=1)
    assert done.any(axis=1).all(), "every env ends an episode within the rollout"
    for agent in env.agents:
        np.testing.assert_array_equal(first["obs"][agent], first["plain_obs"][agent])
    team = sum(np.asarray(out["plain_reward"][m]) for m in env.body.module_names)
    agents_sum = sum(np.asarray(out["rewards"][a]) for a in env.agents)
    for e in range(N_ENVS):
        t = first_end[e] + 1
        np.testing.assert_allclose(agents_sum[e, :t], team[e, :t], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(out["rewards"]["__all__"][e, :t], team[e, :t], rtol=1e-5,
                                   atol=1e-5)
        np.testing.assert_array_equal(done[e, :t], np.asarray(out["plain_done"][e, :t]) > 0)
        for agent in env.agents:  # before the done step the observations are the same
            np.testing.assert_allclose(out["obs"][agent][e, : t - 1],
                                       out["plain_obs"][agent][e, : t - 1], rtol=1e-5, atol=1e-5)


def test_jaxmarl_step_auto_resets_from_its_own_key(tiny):
    """On a done step JaxMARL's step returns a fresh episode: the observation of a reset
    from its key (not the ModularEnv's own restart) and a step counter of zero."""
    env, (_, out) = tiny
    done = np.asarray(out["dones"]["__all__"])
    assert done.sum() >= N_ENVS
    steps = np.asarray(out["steps"])
    np.testing.assert_array_equal(steps[done], 0)
    np.testing.assert_array_equal(steps[~done] > 0, True)
    for agent in env.agents:
        obs, reset_obs = np.asarray(out["obs"][agent]), np.asarray(out["reset_obs"][agent])
        np.testing.assert_array_equal(obs[done], reset_obs[done])
        assert not np.allclose(obs[~done], reset_obs[~done])
    # Truncation at EPISODE steps: the tiny body has no termination.
    truncation = np.asarray(out["infos"]["truncation"])
    np.testing.assert_array_equal(truncation > 0, done)
    np.testing.assert_array_equal(done[:, EPISODE - 1 :: EPISODE], True)


def test_generated_body_and_mjcf_file_become_envs(tmp_path):
    centipede = JaxMARLEnv("centipede-4")
    assert centipede.agents == list(centipede.env.action_sizes)
    assert len(centipede.agents) == len(centipede.body.actuated_modules) >= 4
    path = tmp_path / "tiny.xml"
    path.write_text(tiny_xml())
    tiny = JaxMARLEnv(str(path))
    assert tiny.agents == ["base", "arm"]
    assert [tiny.action_space(a).shape for a in tiny.agents] == [(1,), (1,)]
