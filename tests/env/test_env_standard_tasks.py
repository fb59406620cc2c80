"""Every bundled body's task is its standard one: Gymnasium v5's reward code, run on this
project's own states, gives the team reward of every step, and ends episodes on the same
steps.

For each body: random actions for several hundred control steps on the CPU backend (every
episode restarts with fresh noise). For each step the state before it is taken from the
env, stepped again with MuJoCo's C simulator to the state after it (the env's own state
after a done step is already the next episode's start), and handed to the Gymnasium v5 env
class of that body (built on this project's MJCF), whose own `_get_rew` and `is_healthy`
give the reference reward and termination. Velocities are taken the way Gymnasium does
(qpos[0], the main body's xpos, or the center of mass for Humanoid), on the project's
states, all of one instant.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest

from gymnasium.envs.mujoco.ant_v5 import AntEnv
from gymnasium.envs.mujoco.half_cheetah_v5 import HalfCheetahEnv
from gymnasium.envs.mujoco.hopper_v5 import HopperEnv
from gymnasium.envs.mujoco.humanoid_v5 import HumanoidEnv, mass_center
from gymnasium.envs.mujoco.swimmer_v5 import SwimmerEnv
from gymnasium.envs.mujoco.walker2d_v5 import Walker2dEnv

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env

N_ENVS, N_STEPS = 2, 300


@dataclasses.dataclass(frozen=True)
class Standard:
    """A body's Gymnasium v5 counterpart and how its reward reads positions."""

    env_class: type
    position: str
    """"qpos0": qpos[0] (planar bodies, swimmer); "main_body": xpos of body 1 (Ant);
    "mass_center": Gymnasium's `mass_center` (Humanoid)."""
    kwargs: dict = dataclasses.field(default_factory=dict)
    alive_bonus_on_termination: float = 0.0
    """Brax's convention, kept by the ant (and the centipede): the alive bonus is paid on
    the terminating step too, where Gymnasium pays nothing."""


STANDARDS = {
    "ant-modular": Standard(AntEnv, "main_body", {"contact_cost_weight": 0.0}, 1.0),
    "centipede-4": Standard(AntEnv, "main_body", {"contact_cost_weight": 0.0}, 1.0),
    "halfcheetah-modular": Standard(HalfCheetahEnv, "qpos0"),
    "hopper-modular": Standard(HopperEnv, "qpos0"),
    "walker2d-modular": Standard(Walker2dEnv, "qpos0"),
    "humanoid-modular": Standard(HumanoidEnv, "mass_center"),
    "swimmer-4": Standard(SwimmerEnv, "qpos0"),
}


def _rollout(name: str):
    """Random actions on the CPU backend: per step the state before, the action in
    MuJoCo actuator order, the team reward and done."""
    body = load_body(name)
    env = make_env(body, EnvConfig(), "cpu")
    nu = body.model.nu
    actuators = {m: body.modules[m].actuator_ids for m in env.action_sizes}

    def step(state, key):
        flat = jax.random.uniform(key, (N_ENVS, nu), minval=-1.0, maxval=1.0)
        action = {m: flat[:, ids] for m, ids in actuators.items()}
        after = jax.vmap(env.step)(state, action)
        record = (state.data, flat, sum(after.reward.values()), after.done, after.info["truncation"])
        return after, record

    def run(key):
        start = jax.vmap(env.reset)(jax.random.split(key, N_ENVS))
        return jax.lax.scan(step, start, jax.random.split(key, N_STEPS))[1]

    return body, env, jax.device_get(jax.jit(run)(jax.random.PRNGKey(7)))


def _reference_env(name: str, body, tmp_path: Path):
    xml = tmp_path / f"{name}.xml"
    xml.write_text(body.xml)
    standard = STANDARDS[name]
    return standard.env_class(xml_file=str(xml), **standard.kwargs)


def _position(standard: Standard, model, data) -> np.ndarray:
    if standard.position == "qpos0":
        return np.array([data.qpos[0], 0.0])
    if standard.position == "main_body":
        return data.xpos[1, :2].copy()
    return mass_center(model, data)


@pytest.mark.parametrize("name", list(STANDARDS))
def test_team_reward_and_termination_are_gymnasium_v5s(name, tmp_path):
    body, env, (before, actions, rewards, dones, truncations) = _rollout(name)
    standard = STANDARDS[name]
    gym_env = _reference_env(name, body, tmp_path)
    model, data = gym_env.model, gym_env.data
    ctrl_range = body.model.actuator_ctrlrange
    mid, half = ctrl_range.mean(axis=1), (ctrl_range[:, 1] - ctrl_range[:, 0]) / 2
    terminations = compared = 0
    for t in range(N_STEPS):
        for e in range(N_ENVS):
            for field in ("qpos", "qvel", "act", "qacc_warmstart"):
                getattr(data, field)[...] = np.asarray(getattr(before, field)[t, e])
            data.time = float(before.time[t, e])
            mujoco.mj_forward(model, data)
            position_before = _position(standard, model, data)
            ctrl = mid + half * actions[t, e]
            data.ctrl[:] = ctrl
            mujoco.mj_step(model, data, nstep=body.frame_skip)
            mujoco.mj_forward(model, data)  # every derived field of the state after the step
            mujoco.mj_rnePostConstraint(model, data)
            velocity = (_position(standard, model, data) - position_before)[0] / gym_env.dt
            expected, _ = gym_env._get_rew(velocity, ctrl)
            healthy = bool(getattr(gym_env, "is_healthy", True))
            if not healthy:
                expected += standard.alive_bonus_on_termination
                terminations += 1
            np.testing.assert_allclose(rewards[t, e], expected, rtol=1e-3, atol=2e-3,
                                       err_msg=f"{name}: step {t}, env {e}")
            terminated = bool(dones[t, e]) and not bool(truncations[t, e])
            assert terminated == (not healthy), f"{name}: step {t}, env {e}"
            compared += 1
    assert compared == N_STEPS * N_ENVS
    if body.task.can_fall:
        assert terminations > 0, f"{name}: random actions never ended an episode"


@pytest.mark.parametrize("name", list(STANDARDS))
def test_a_body_standing_still_earns_what_gymnasiums_would(name):
    """From the exact rest pose with zero actions, the first steps pay Gymnasium's alive
    bonus (5 for the humanoid, 1 for hopper / walker2d / ant, 0 for the half cheetah and the
    swimmer), less its small contact cost, and no velocity to speak of."""
    body = load_body(name)
    env = make_env(body, EnvConfig(reset_noise_scale=0.0), "cpu")
    state = env.reset(jax.random.PRNGKey(0))
    zero = {m: jnp.zeros(n) for m, n in env.action_sizes.items()}
    step = jax.jit(env.step)
    alive = {"humanoid-modular": 5.0, "halfcheetah-modular": 0.0, "swimmer-4": 0.0}.get(name, 1.0)
    for _ in range(3):
        state = step(state, zero)
        assert float(state.done) == 0.0
        assert abs(float(sum(state.reward.values())) - alive) < 0.2, name
