"""The CPU backend (MuJoCo's C simulator behind the env contract) against two references:
the MJX env (observations, rewards, termination, truncation, auto-reset, episode metrics)
and a plain MuJoCo loop (the physics itself, bit for bit).

MJX and MuJoCo's C solver agree through contacts only when the solver converges: with the
ant's 1 Newton iteration each stops at a different approximate solution once the feet
touch the floor. So the MJX comparison runs the ant with a converged solver, and the
stock ant is checked against MuJoCo's own mj_step.
"""

import os

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.env import EnvConfig, EnvError, default_backend, make_env

N_ENVS = 2
N_STEPS = 8
CONFIG = EnvConfig(episode_length=5)
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}
LIFTED = 1
"""This env starts with the torso 0.6 m higher, above the healthy range: it terminates at
once."""
START_HEIGHT = np.array([0.0, 0.6], np.float32)
"""Added to each env's torso height after reset: env 0 starts at the rest pose (its feet
reach the floor within the first steps; pushed into the floor it would bounce out of the
healthy range), env LIFTED terminates at once."""


def _converged_ant() -> BodyGraph:
    xml = load_body("ant-modular").xml.replace(
        'iterations="1" ls_iterations="4"', 'iterations="30" ls_iterations="30"'
    )
    assert 'iterations="30"' in xml
    return BodyGraph.from_mjcf(xml)


def _actions(env, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {m: rng.uniform(-1, 1, (N_STEPS, N_ENVS, k)).astype(np.float32)
            for m, k in env.action_sizes.items()}


def _rollout(env, actions, compiler_options=None):
    """Reset N_ENVS envs, move them by START_HEIGHT, then N_STEPS steps: host states."""

    def run(keys, actions):
        first = jax.vmap(env.reset)(keys)
        qpos = first.data.qpos.at[:, 2].add(START_HEIGHT)
        start = first.replace(data=first.data.replace(qpos=qpos))

        def step(state, action):
            state = jax.vmap(env.step)(state, action)
            return state, state

        return first, jax.lax.scan(step, start, actions)[1]

    keys = jax.random.split(jax.random.key(0), N_ENVS)
    compiled = jax.jit(run).lower(keys, actions).compile(compiler_options=compiler_options)
    return jax.device_get(compiled(keys, actions))


@pytest.fixture(scope="module")
def against_mjx():
    body = _converged_ant()
    mjx_env = make_env(body, CONFIG)
    cpu_env = make_env(body, CONFIG, "cpu")
    actions = _actions(mjx_env, seed=0)
    return _rollout(mjx_env, actions, FAST_COMPILE), _rollout(cpu_env, actions)


def test_observations_and_rewards_match_the_mjx_env(against_mjx):
    (mjx_first, mjx_states), (cpu_first, cpu_states) = against_mjx
    for module in mjx_first.obs:
        np.testing.assert_allclose(cpu_first.obs[module], mjx_first.obs[module], atol=1e-5)
        np.testing.assert_allclose(cpu_states.obs[module], mjx_states.obs[module],
                                   rtol=1e-4, atol=1e-3, err_msg=module)
        np.testing.assert_allclose(cpu_states.reward[module], mjx_states.reward[module],
                                   rtol=1e-4, atol=1e-4, err_msg=module)
    for name in mjx_states.metrics:
        np.testing.assert_allclose(cpu_states.metrics[name], mjx_states.metrics[name],
                                   rtol=1e-4, atol=1e-4, err_msg=name)


def test_termination_truncation_and_auto_reset_match_the_mjx_env(against_mjx):
    (mjx_first, mjx_states), (cpu_first, cpu_states) = against_mjx
    # The lifted env terminates at step 0; the other one is truncated at step 4.
    assert cpu_states.done[0, LIFTED] == 1 and cpu_states.info["truncation"][0, LIFTED] == 0
    assert cpu_states.info["truncation"][CONFIG.episode_length - 1, 1 - LIFTED] == 1
    np.testing.assert_array_equal(cpu_states.done, mjx_states.done)
    np.testing.assert_array_equal(cpu_states.info["truncation"], mjx_states.info["truncation"])
    np.testing.assert_array_equal(cpu_states.info["steps"], mjx_states.info["steps"])
    for name in mjx_states.info["last_episode"]:
        np.testing.assert_allclose(cpu_states.info["last_episode"][name],
                                   mjx_states.info["last_episode"][name],
                                   rtol=1e-4, atol=1e-4, err_msg=name)
    # After a done step both backends restart the env from the same state, and the
    # restart is a new episode's first state (not the terminal one).
    t, env = 0, LIFTED
    np.testing.assert_allclose(cpu_states.data.qpos[t, env], mjx_states.data.qpos[t, env],
                               atol=1e-6)
    assert cpu_states.info["steps"][t, env] == 0
    assert cpu_states.data.qpos[t, env, 2] < cpu_first.data.qpos[env, 2] + START_HEIGHT[env] - 0.3


@pytest.fixture(scope="module")
def stock_ant():
    body = load_body("ant-modular")
    env = make_env(body, CONFIG, "cpu")
    actions = _actions(env, seed=1)
    return body, env, actions, _rollout(env, actions)


def _load(data: mujoco.MjData, state) -> None:
    """Write the env's carried float32 state into an MjData (as float64)."""
    data.time = float(state.time)
    for name in ("qpos", "qvel", "act", "qacc_warmstart"):
        getattr(data, name)[:] = np.asarray(getattr(state, name), np.float64)


def test_physics_is_mujocos_mj_step(stock_ant):
    """Each control step equals frame_skip calls of mj_step from the float32 state the env
    holds, bit for bit: the env carries its state as float32 between control steps."""
    body, env, actions, (first, states) = stock_ant
    data = mujoco.MjData(body.model)
    to_ctrl = jax.jit(env._actions.to_ctrl)
    compared = ("time", "qpos", "qvel", "qacc_warmstart", "xpos", "xmat", "cvel", "subtree_com")
    steps_compared = 0
    for e in range(N_ENVS):
        state = jax.tree.map(lambda x: np.array(x[e]), first.data)
        state.qpos[2] += START_HEIGHT[e]
        for t in range(N_STEPS):
            _load(data, state)
            data.ctrl[:] = np.asarray(to_ctrl({m: a[t, e] for m, a in actions.items()}))
            for _ in range(body.frame_skip):
                mujoco.mj_step(body.model, data)
            mujoco.mj_forward(body.model, data)  # derived fields of the new state, as the env's
            state = jax.tree.map(lambda x: np.array(x[t, e]), states.data)
            if states.done[t, e]:
                continue  # auto-reset: the env's data is the next episode's start
            for name in compared:
                value = getattr(state, name)
                expected = np.asarray(getattr(data, name), np.float32).reshape(value.shape)
                np.testing.assert_array_equal(value, expected, err_msg=f"{name}, env {e}, t {t}")
            steps_compared += 1
    # Env 0 is truncated once (at step 5), env 1 terminates at its first step; the steps
    # after those restarts are compared too.
    assert steps_compared == N_ENVS * N_STEPS - int(states.done.sum()) >= N_ENVS * (N_STEPS - 2)


def test_single_and_batched_calls_step_alike(stock_ant):
    _, env, actions, (first, states) = stock_ant
    single = jax.tree.map(lambda x: jnp.asarray(x[0]), first)
    single = single.replace(data=single.data.replace(
        qpos=single.data.qpos.at[2].add(START_HEIGHT[0])))
    action = {m: a[0, 0] for m, a in actions.items()}
    stepped = jax.device_get(jax.jit(env.step)(single, action))
    for module, obs in stepped.obs.items():
        np.testing.assert_array_equal(obs, states.obs[module][0, 0])
    np.testing.assert_array_equal(stepped.data.qpos, states.data.qpos[0, 0])


def test_the_simulator_starts_only_the_environments_whose_episode_ended(monkeypatch):
    """Restarts cost a host call: one is made only on steps where some env is done, and
    computes only those envs."""
    env = make_env(load_body("ant-modular"), CONFIG, "cpu")
    simulator, calls = env.physics.simulator, []
    start = simulator.start

    def counted_start(qpos, qvel, where=None):
        calls.append(None if where is None else np.asarray(where) > 0)
        return start(qpos, qvel, where)

    monkeypatch.setattr(simulator, "start", counted_start)  # envs of this model share it
    _, states = _rollout(env, _actions(env, seed=2))
    ended = [done > 0 for done in states.done if done.any()]
    # The reset starts every env; env 1 terminates at step 0, and each env is truncated
    # after episode_length steps of its own.
    assert 0 < len(ended) < N_STEPS
    assert calls[0] is None and len(calls) == 1 + len(ended)
    for made, expected in zip(calls[1:], ended):
        np.testing.assert_array_equal(made, expected)


def test_batches_step_on_one_thread_per_core_the_process_may_use(monkeypatch):
    """A process pinned to one core (`taskset -c 0`) steps on one thread, not one per core
    of the machine."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    env = make_env(load_body("hopper-modular"), CONFIG, "cpu")
    assert env.physics.simulator._batch(4).nthread == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    env = make_env(load_body("hopper-modular"), CONFIG, "cpu")
    assert env.physics.simulator._batch(4).nthread == 3
    assert make_env(load_body("hopper-modular"), CONFIG, "cpu", nthread=2).physics.simulator \
        ._batch(4).nthread == 2


def test_backend_choice_and_errors():
    body = load_body("ant-modular")
    with pytest.raises(EnvError, match="no mjx.Model; use env.body.model"):
        make_env(body, EnvConfig(), "cpu").mjx_model
    assert default_backend(body) == ("cpu" if jax.default_backend() == "cpu" else "mjx")
    with pytest.raises(EnvError, match='"auto", "mjx", "cpu" or "warp"'):
        make_env(body, EnvConfig(), "physx")
