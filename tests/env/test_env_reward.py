"""Rewards: the ant's is Brax's ant reward; team terms follow the split rule; directions;
contact forces reach observations and the contact cost."""

import math

import jax
import mujoco
import numpy as np
from env_rollouts import N_ENVS, N_STEPS

from modular_ppo.env import EnvConfig, Transition, make_task

ANT = "ant-modular"
LEGS = ["front_left", "front_right", "back_left", "back_right"]


def _at(tree, env, t):
    return jax.tree.map(lambda x: x[env, t], tree)


def _ctrl(graph, actions):
    ctrl = np.zeros(graph.model.nu)
    for module, action in actions.items():
        ctrl[graph.modules[module].actuator_ids] = action
    return ctrl


def test_ant_reward_is_the_brax_ant_reward(body, runner):
    """reward = x velocity of the torso + 1.0 - 0.5 * sum(action^2) (Brax / Gymnasium ant);
    actions beyond [-1, 1] are clipped for the motors but costed as given (as in Brax)."""
    ant, run = body(ANT), runner(ANT)
    assert run.env.dt == 0.05
    rollout = run(actions=run.random_actions(seed=8, scale=1.5), seed=8)
    torso = ant.model.body("torso").id
    checked = 0
    for env in range(N_ENVS):
        x_before = rollout.first.data.xpos[env, torso, 0]
        for t in range(N_STEPS):
            state = _at(rollout.states, env, t)
            actions = {m: a[env, t] for m, a in rollout.actions.items()}
            x_after = state.data.xpos[torso, 0]
            if not state.done:  # after a done, data is already the next episode's start
                forward = (x_after - x_before) / 0.05
                ctrl_cost = {m: 0.5 * np.sum(np.square(a)) for m, a in actions.items()}
                team = forward + 1.0
                total = sum(state.reward.values())
                np.testing.assert_allclose(total, team - sum(ctrl_cost.values()), rtol=1e-4,
                                           atol=1e-4)
                np.testing.assert_allclose(state.reward["torso"], team / 5, rtol=1e-4, atol=1e-5)
                for leg in LEGS:
                    np.testing.assert_allclose(state.reward[leg], team / 5 - ctrl_cost[leg],
                                               rtol=1e-4, atol=1e-5)
                np.testing.assert_allclose(state.metrics["forward_velocity"], forward, rtol=1e-4,
                                           atol=1e-4)
                assert state.metrics["reward/healthy"] == 1.0
                np.testing.assert_allclose(state.metrics["reward/ctrl_cost"],
                                           -sum(ctrl_cost.values()), rtol=1e-5)
                np.testing.assert_allclose(state.data.ctrl, np.clip(_ctrl(ant, actions), -1, 1),
                                           atol=1e-6)
                checked += 1
            x_before = x_after
    assert checked >= N_ENVS * (N_STEPS - 2)


def _transition(graph, to_mjx, seed, qvel_scale=1.0):
    """Two C-simulator states one control step apart from the rest pose, random actions."""
    model = graph.model
    data = mujoco.MjData(model)
    data.qpos[:] = graph.init_qpos
    data.qvel[:] = qvel_scale * np.random.default_rng(seed).normal(0, 1, model.nv)
    mujoco.mj_forward(model, data)
    before = to_mjx(graph, data)
    mujoco.mj_step(model, data, graph.frame_skip)
    mujoco.mj_forward(model, data)
    mujoco.mj_rnePostConstraint(model, data)
    rng = np.random.default_rng(seed + 1)
    actions = {m: rng.uniform(-1, 1, graph.modules[m].n_actuators) for m in graph.actuated_modules}
    dt = model.opt.timestep * graph.frame_skip
    return Transition(before, to_mjx(graph, data), actions, dt), data


def test_team_terms_follow_the_split_rule(body, to_mjx):
    ant = body(ANT)
    transition, _ = _transition(ant, to_mjx, seed=9)
    even, even_terms = make_task(ant, EnvConfig(team_reward="even")).rewards(transition)
    root, root_terms = make_task(ant, EnvConfig(team_reward="root")).rewards(transition)
    assert even_terms.keys() == {"forward_velocity", "healthy", "ctrl_cost"}
    team = float(even_terms["forward_velocity"] + even_terms["healthy"])
    ctrl_cost = {m: -0.5 * np.sum(np.square(a)) for m, a in transition.action.items()}
    np.testing.assert_allclose(root["torso"], team, rtol=1e-6)
    np.testing.assert_allclose(even["torso"], team / 5, rtol=1e-6)
    for leg in LEGS:
        np.testing.assert_allclose(root[leg], ctrl_cost[leg], rtol=1e-6)
        np.testing.assert_allclose(even[leg], team / 5 + ctrl_cost[leg], rtol=1e-6)
    np.testing.assert_allclose(sum(even.values()), sum(root.values()), rtol=1e-5)
    for name in even_terms:
        np.testing.assert_allclose(even_terms[name], root_terms[name], rtol=1e-6)


def test_run_direction_rewards_the_velocity_along_its_direction(body, to_mjx):
    ant = body(ANT)
    transition, _ = _transition(ant, to_mjx, seed=10)
    torso = ant.model.body("torso").id
    dx, dy = np.asarray(transition.after.xpos[torso, :2] - transition.before.xpos[torso, :2])
    for degrees, expected in [(0.0, dx), (90.0, dy), (225.0, -(dx + dy) / math.sqrt(2))]:
        task = make_task(ant, EnvConfig(task="run_direction", direction_deg=degrees))
        _, terms = task.rewards(transition)
        np.testing.assert_allclose(terms["forward_velocity"], expected / transition.dt,
                                   rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(task.progress(transition), expected / transition.dt,
                                   rtol=1e-4, atol=1e-5)


def test_contact_cost_is_gymnasiums(body, to_mjx):
    ant = body(ANT)
    transition, data = _transition(ant, to_mjx, seed=11, qvel_scale=0.0)  # standing on its feet
    task = make_task(ant, EnvConfig(contact_cost_weight=5e-4))
    assert task.needs_contact_forces
    _, terms = task.rewards(transition)
    expected = 5e-4 * np.sum(np.square(np.clip(data.cfrc_ext[1:], -1, 1)))
    assert expected > 0, "the reference step should touch the floor"
    np.testing.assert_allclose(terms["contact_cost"], -expected, rtol=1e-4)


def test_contact_forces_and_previous_action_in_a_rollout(body, runner):
    """The step path with cfrc_ext (the ant's test rollout observes both)."""
    ant, run = body(ANT), runner(ANT)
    assert run.env.config.contact_forces and run.env.config.previous_action
    rollout = run(seed=12)
    layout = run.env.obs_layout["front_left"]
    starts = np.cumsum([0] + [b.size for b in layout])
    blocks = {b.name: slice(s, s + b.size) for b, s in zip(layout, starts)}
    feet = [ant.model.body(f"foot_{i}").id for i in range(1, 5)]
    bodies = ant.modules["front_left"].body_ids
    touched = False
    for env in range(N_ENVS):
        for t in range(N_STEPS):
            state = _at(rollout.states, env, t)
            if state.done:
                continue
            forces = np.asarray(state.data._impl.cfrc_ext)
            touched |= bool(np.abs(forces[feet]).sum() > 0)
            obs = state.obs["front_left"]
            np.testing.assert_allclose(obs[blocks["front_left/contact_force"]],
                                       np.clip(forces[bodies], -1, 1).ravel(), atol=1e-6)
            actions = rollout.actions["front_left"][env, t]
            np.testing.assert_allclose(obs[blocks["front_left/prev_action"]], actions, atol=1e-6)
    assert touched, "the ant's feet should reach the floor within the rollout"
