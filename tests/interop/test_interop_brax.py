"""Brax view (`BraxModularEnv`): one flat action reaches each agent's actuators; the reward is
the team reward; `done` is termination only; Brax's training wrappers truncate episodes and
restore the first state with its bookkeeping; Brax's own PPO trains a bundled body.

The bodies run on the CPU backend (MuJoCo's C simulator): Brax's PPO on it compiles in
about 15 s here, against over a minute on MJX."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from brax import envs
from brax.envs.wrappers.training import wrap

from modular_ppo.env import EnvConfig
from modular_ppo.interop.brax_env import BraxModularEnv, install_jax_compatibility
from modular_ppo.interop.errors import AgentActionError

EPISODE = 16
N_ENVS = 4


@functools.cache
def _view(name: str) -> BraxModularEnv:
    return BraxModularEnv(name, config=EnvConfig(episode_length=EPISODE), backend="cpu")


def test_each_agents_slice_of_the_action_reaches_its_actuators():
    env = _view("ant-modular")
    assert env.agents == ["front_left", "front_right", "back_left", "back_right"]
    assert (env.action_size, env.observation_size) == (8, sum(
        env.env.obs_sizes[m] for m in env.agents))
    state = jax.jit(env.reset)(jax.random.PRNGKey(0))
    action = jnp.asarray([0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8])
    state = jax.jit(env.step)(state, action)
    ctrl = np.asarray(state.pipeline_state.data.ctrl)
    model = env.body.model
    for agent, where in env.slices["action"].items():
        ids = list(env.body.modules[agent].actuator_ids)
        low, high = model.actuator_ctrlrange[ids].T
        expected = (low + high) / 2 + (high - low) / 2 * np.asarray(action[where])
        np.testing.assert_allclose(ctrl[ids], expected, rtol=1e-6, err_msg=agent)
    assert {model.actuator(i).name for i in env.body.modules["back_right"].actuator_ids} == {
        "hip_4", "ankle_4"}
    inner = state.pipeline_state
    assert float(state.reward) == pytest.approx(float(sum(inner.reward.values())), rel=1e-6)
    np.testing.assert_array_equal(state.obs, np.concatenate([inner.obs[a] for a in env.agents]))
    assert set(state.metrics) >= {"forward_velocity", "invalid_action"}


def test_an_action_of_the_wrong_shape_names_the_order():
    env = _view("ant-modular")
    state = env.reset(jax.random.PRNGKey(0))
    with pytest.raises(AgentActionError, match=r"give shape \(8,\).*front_left \(2\)"):
        env.step(state, jnp.zeros(7))


def test_done_is_termination_only():
    """On the tiny body (no healthy ranges) the body env ends its episode at its time
    limit, as truncation; the view's done stays 0 there, and on the hopper, which falls
    under random actions, done is the body env's termination."""
    from tiny_body import tiny_xml

    from modular_ppo.body import BodyGraph

    tiny = BraxModularEnv(BodyGraph.from_mjcf(tiny_xml()),
                          config=EnvConfig(episode_length=EPISODE), backend="cpu")
    step = jax.jit(tiny.step)
    state = tiny.reset(jax.random.PRNGKey(0))
    for _ in range(EPISODE):
        state = step(state, jnp.zeros(tiny.action_size))
    assert float(state.pipeline_state.info["truncation"]) == 1.0
    assert float(state.pipeline_state.done) == 1.0
    assert float(state.done) == 0.0

    hopper = _view("hopper-modular")
    step = jax.jit(jax.vmap(hopper.step))
    state = jax.vmap(hopper.reset)(jax.random.split(jax.random.PRNGKey(1), 8))
    terminated = np.zeros(8, bool)
    for t in range(EPISODE - 1):
        action = jax.random.uniform(jax.random.PRNGKey(t), (8, hopper.action_size), minval=-1)
        state = step(state, action)
        inner_done = np.asarray(state.pipeline_state.done)
        np.testing.assert_array_equal(np.asarray(state.done), inner_done)
        assert not np.asarray(state.pipeline_state.info["truncation"]).any()
        terminated |= inner_done > 0
    assert terminated.any()


def _assert_restored(state, where: np.ndarray) -> None:
    """Where `where`, the wrapped state holds the episode's first pipeline state (the body
    env's whole State: data, observations, episode bookkeeping) and first observation."""
    jax.tree.map(lambda now, first: np.testing.assert_array_equal(
        np.asarray(now)[where], np.asarray(first)[where]),
        state.pipeline_state, state.info["first_pipeline_state"])
    np.testing.assert_array_equal(np.asarray(state.obs)[where],
                                  np.asarray(state.info["first_obs"])[where])


def test_brax_wrappers_truncate_at_their_episode_length_and_restore_the_first_state():
    from tiny_body import tiny_xml

    from modular_ppo.body import BodyGraph

    # The body env's own limit is twice Brax's: Brax's EpisodeWrapper alone ends episodes.
    env = wrap(BraxModularEnv(BodyGraph.from_mjcf(tiny_xml()),
                              config=EnvConfig(episode_length=2 * EPISODE), backend="cpu"),
               episode_length=EPISODE)
    step = jax.jit(env.step)
    state = env.reset(jax.random.split(jax.random.PRNGKey(2), N_ENVS))
    action = 0.5 * jnp.ones((N_ENVS, env.action_size))
    for t in range(1, EPISODE + 2):
        state = step(state, action)
        ended = t == EPISODE
        assert np.asarray(state.done).tolist() == [float(ended)] * N_ENVS, t
        assert np.asarray(state.info["truncation"]).tolist() == [float(ended)] * N_ENVS, t
        inner_steps = np.asarray(state.pipeline_state.info["steps"])
        assert inner_steps.tolist() == [0 if ended else t % EPISODE] * N_ENVS, t
        _assert_restored(state, np.full(N_ENVS, ended))


def test_brax_wrappers_restore_the_first_state_after_a_termination():
    # Brax's training wrappers: VmapWrapper, EpisodeWrapper, AutoResetWrapper.
    env = wrap(_view("hopper-modular"), episode_length=EPISODE)
    step = jax.jit(env.step)
    state = env.reset(jax.random.split(jax.random.PRNGKey(2), N_ENVS))
    terminated = np.zeros(N_ENVS, bool)
    for t in range(EPISODE - 1):
        action = jax.random.uniform(jax.random.PRNGKey(t), (N_ENVS, env.action_size),
                                    minval=-1)
        state = step(state, action)
        done = np.asarray(state.done) > 0
        assert not np.asarray(state.info["truncation"]).any()
        _assert_restored(state, done)
        terminated |= done
    assert terminated.any()


def test_registered_with_brax_and_made_by_its_registry():
    envs.register_environment(
        "modular-hopper-test", functools.partial(BraxModularEnv, "hopper-modular",
                                                 config=EnvConfig(episode_length=EPISODE),
                                                 backend="cpu"))
    env = envs.create("modular-hopper-test", episode_length=EPISODE, batch_size=2)
    state = env.reset(jax.random.PRNGKey(0))
    assert state.obs.shape == (2, env.observation_size)
    state = env.step(state, jnp.zeros((2, env.action_size)))
    assert state.reward.shape == (2,) and np.isfinite(np.asarray(state.reward)).all()


def test_brax_ppo_trains_a_bundled_body():
    from brax.training.agents.ppo import train as ppo

    install_jax_compatibility()
    env = _view("hopper-modular")
    progress = []
    steps_per_iteration = 8 * 4 * 4  # batch_size x num_minibatches x unroll_length
    _, params, metrics = ppo.train(
        environment=env, num_timesteps=2 * steps_per_iteration, episode_length=EPISODE,
        num_envs=8, batch_size=8, num_minibatches=4, unroll_length=4, num_updates_per_batch=2,
        num_evals=2, run_evals=False, log_training_metrics=True, normalize_observations=True,
        seed=0, progress_fn=lambda step, m: progress.append((step, dict(m))),
    )
    episodes = [m for _, m in progress if "episode/sum_reward" in m]
    assert episodes, "Brax's PPO logged no finished episode"
    for m in episodes:
        assert 0 < m["episode/length"] <= EPISODE
        assert np.isfinite(m["episode/sum_reward"])
    assert progress[-1][0] >= 2 * steps_per_iteration
    losses = {k: float(v) for k, v in metrics.items() if k.startswith("training/")}
    assert {"training/policy_loss", "training/v_loss"} <= set(losses)
    assert all(np.isfinite(v) for v in losses.values())
    assert all(np.isfinite(np.asarray(leaf)).all() for leaf in jax.tree.leaves(params))
