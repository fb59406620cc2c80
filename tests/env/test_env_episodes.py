"""On every bundled body: reset noise, the team-reward invariant, truncation, termination,
auto-reset and episode metrics. One compiled rollout per body (see conftest.py).

The ant runs on the MJX backend; the other bodies on the CPU backend, which runs the same
env code (observations, rewards, episodes) on MuJoCo's C simulator and compiles in a
fraction of the time (tests/perf checks the two backends agree; tests/body steps every body
in MJX). Generated families (centipede-N, swimmer-N) run at the first size
`bundled_names()` lists: all sizes come from one generator.
"""

import jax
import mujoco
import numpy as np
import pytest
from body_families import one_size_per_family
from env_rollouts import EPISODE_LENGTH, N_ENVS, N_STEPS

from modular_ppo.body import load_body

BODIES = one_size_per_family()
MJX_BODY = "ant-modular"


def _backend(name: str) -> str:
    return "mjx" if name == MJX_BODY else "cpu"


def _at(tree, env, t=None):
    """Leaf values of one env (and step) of a host State or dict."""
    return jax.tree.map(lambda x: x[env] if t is None else x[env, t], tree)


def _single_agent_reward(body, before, after, actions):
    """run_forward's reward for the whole body, from the two states and the body's task
    (the ant's rollout observes contact forces but its task has no contact cost)."""
    task = body.task
    dt = body.model.opt.timestep * body.frame_skip
    if task.velocity_source == "com":
        forward = (after.subtree_com[0, 0] - before.subtree_com[0, 0]) / dt
    else:
        root = body.root_body_id
        forward = (after.xpos[root, 0] - before.xpos[root, 0]) / dt
    if task.ctrl_cost_on == "ctrl":
        ctrl = float(np.sum(np.square(after.ctrl)))
    else:
        ctrl = sum(float(np.sum(np.square(a))) for a in actions.values())
    contact = 0.0
    if task.contact_cost_weight:
        forces = np.clip(after.cfrc_ext, *task.contact_force_range)
        contact = np.clip(task.contact_cost_weight * np.sum(np.square(forces)),
                          *task.contact_cost_range)
    # Not done: the state after the step is healthy, so either convention pays the bonus.
    return (task.forward_reward_weight * forward + task.healthy_reward
            - task.ctrl_cost_weight * ctrl - contact)


def _check_start_noise(graph, data):
    """qpos = init_qpos + U(-s, s); qvel U(-s, s) or s * N(0, 1), as the body's task says."""
    scale = graph.task.reset_noise_scale
    noise = data.qpos - graph.init_qpos
    assert np.all(np.abs(noise) <= scale * (1 + 1e-4) + 1e-6)
    assert np.std(noise) > scale / 5, f"qpos noise should be U(-{scale}, {scale})"
    if graph.task.reset_qvel_noise == "uniform":
        assert np.all(np.abs(data.qvel) <= scale * (1 + 1e-4) + 1e-6)
        assert np.std(data.qvel) > scale / 5
    else:
        assert 0.3 * scale < np.std(data.qvel) < 3 * scale, f"qvel should be {scale} * N(0, 1)"


@pytest.mark.parametrize("name", BODIES)
def test_reset_adds_the_tasks_noise_to_the_rest_pose(name, body, runner):
    graph, run = body(name), runner(name, backend=_backend(name))
    first = run(seed=1).first
    for env in range(N_ENVS):
        _check_start_noise(graph, _at(first.data, env))
    assert not np.allclose(first.data.qpos[0], first.data.qpos[1]), "envs differ by key"
    assert np.all(first.info["steps"] == 0) and np.all(first.done == 0)
    for module, size in run.env.obs_sizes.items():
        assert first.obs[module].shape == (N_ENVS, size)
        assert np.all(np.isfinite(first.obs[module]))


@pytest.mark.parametrize("name", BODIES)
def test_module_rewards_sum_to_the_single_agent_reward(name, body, runner):
    graph, rollout = body(name), runner(name, backend=_backend(name))(seed=2)
    checked = 0
    for env in range(N_ENVS):
        before = _at(rollout.first.data, env)
        for t in range(N_STEPS):
            state = _at(rollout.states, env, t)
            actions = {m: a[env, t] for m, a in rollout.actions.items()}
            if not state.done:  # after a done, data is already the next episode's start
                expected = _single_agent_reward(graph, before, state.data, actions)
                total = sum(float(r) for r in state.reward.values())
                np.testing.assert_allclose(total, expected, rtol=1e-4, atol=1e-4)
                checked += 1
            before = state.data
    assert checked >= N_ENVS * (N_STEPS - 2)


@pytest.mark.parametrize("name", BODIES)
def test_truncation_auto_reset_and_episode_metrics(name, body, runner):
    graph, run = body(name), runner(name, backend=_backend(name))
    rollout = run(seed=3)
    modules = run.env.body.module_names
    ended = {"at_the_limit": 0, "truncated": 0, "early": 0}
    for env in range(N_ENVS):
        first = _at(rollout.first, env)
        rewards, velocities = [], []
        for t in range(N_STEPS):
            state = _at(rollout.states, env, t)
            rewards.append(state.reward)
            velocities.append(float(state.metrics["forward_velocity"]))
            if not state.done:
                assert state.info["steps"] == len(rewards)
                assert state.info["truncation"] == 0
                continue
            assert len(rewards) <= EPISODE_LENGTH
            ended["at_the_limit" if len(rewards) == EPISODE_LENGTH else "early"] += 1
            ended["truncated"] += int(state.info["truncation"] == 1)
            # Auto-reset: the returned state is a fresh start, with its own noise.
            _check_start_noise(graph, state.data)
            assert not np.array_equal(state.data.qpos, first.data.qpos), "noise drawn anew"
            assert state.data.time == 0
            for module in modules:
                assert np.all(np.isfinite(state.obs[module]))
            assert state.info["steps"] == 0
            last = state.info["last_episode"]
            assert last["length"] == len(rewards)
            np.testing.assert_allclose(
                last["team_return"], sum(sum(r.values()) for r in rewards), rtol=1e-5, atol=1e-4
            )
            for module in modules:
                np.testing.assert_allclose(
                    last[f"return/{module}"], sum(r[module] for r in rewards), rtol=1e-5, atol=1e-4
                )
            np.testing.assert_allclose(last["forward_velocity"], np.mean(velocities), rtol=1e-5,
                                       atol=1e-5)
            assert all(v == 0 for v in state.info["episode"].values())
            rewards, velocities = [], []
        assert np.any(_at(rollout.states, env).done), "an episode should have ended"
    # Every episode that ran to the limit was truncated there (none terminates on exactly
    # that step in these seeded rollouts), and some did.
    assert ended["truncated"] == ended["at_the_limit"] >= 1, ended


def _tilt_or_lift(graph) -> np.ndarray | None:
    """A qpos offset that leaves the body's healthy range, or None if it cannot fall."""
    model = graph.model
    root = graph.root_body_id
    offset = np.zeros(model.nq)
    root_joints = np.flatnonzero(model.jnt_bodyid == root)
    hinges = [j for j in root_joints if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    angle = graph.task.healthy_angle
    if angle is not None and len(hinges) == 1:
        offset[model.jnt_qposadr[hinges[0]]] = angle[1] - angle[0] + 1.0
        return offset
    if graph.healthy_z is None or not np.isfinite(graph.healthy_z[1]):
        return None
    for j in root_joints:
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            offset[model.jnt_qposadr[j] + 2] = graph.healthy_z[1] + 1.0
            return offset
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE and model.jnt_axis[j][2] == 1:
            offset[model.jnt_qposadr[j]] = graph.healthy_z[1] + 1.0
            return offset
    return None


FALLING_BODIES = [n for n in BODIES if _tilt_or_lift(load_body(n)) is not None]


def test_every_body_that_can_fall_is_tested_for_termination():
    """`_tilt_or_lift` finds a pose outside the healthy range of every body whose task has
    one: a body it cannot handle would drop out of the test below."""
    can_fall = [n for n in BODIES if load_body(n).task.can_fall]
    assert "ant-modular" in can_fall and "hopper-modular" in can_fall
    assert FALLING_BODIES == can_fall


@pytest.mark.parametrize("name", FALLING_BODIES)
def test_leaving_the_healthy_range_terminates_without_truncation(name, body, runner):
    """Start from a lifted / tilted pose: the first step terminates and auto-resets."""
    run = runner(name, backend=_backend(name))
    rollout = run(seed=4, qpos_offset=_tilt_or_lift(body(name)))
    states = rollout.states
    np.testing.assert_array_equal(states.done[:, 0], 1.0)
    np.testing.assert_array_equal(states.info["truncation"][:, 0], 0.0)
    np.testing.assert_array_equal(states.info["last_episode"]["length"][:, 0], 1.0)
    np.testing.assert_array_equal(states.info["steps"][:, 0], 0)
    for env in range(N_ENVS):
        _check_start_noise(body(name), _at(states.data, env, 0))
    assert np.all(states.done[:, 1] == 0), "the restarted episode continues"
