"""MABrax task names: agents act on MABrax's actuators and observe what MABrax's index maps
(read from the installed jaxmarl) select from Brax's observation, on this project's states;
a MABrax name rolls out under jax.jit(jax.vmap(...))."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from mujoco import mjx

from modular_ppo.body import load_body
from modular_ppo.env.cpu_simulator import DERIVED_FIELDS, STATE_FIELDS, CpuData
from modular_ppo.env.mamujoco_quantities import InertialFrames
from modular_ppo.interop.mabrax import (
    MABRAX_TASKS,
    agent_names,
    brax_observation,
    index_maps,
    mabrax_observer,
)

N_ENVS, N_STEPS, EPISODE = 2, 7, 3


def _state(task: str, seed: int = 0) -> tuple[mujoco.MjModel, mujoco.MjData, mjx.Data]:
    body = load_body(*MABRAX_TASKS[task])
    rng = np.random.default_rng(seed)
    model = body.model
    data = mujoco.MjData(model)
    data.qpos[:] = body.init_qpos + rng.uniform(-0.1, 0.1, model.nq)
    data.qvel[:] = rng.normal(0.0, 3.0, model.nv)  # some beyond hopper / walker's clip
    data.ctrl[:] = rng.uniform(-0.3, 0.3, model.nu)
    mujoco.mj_forward(model, data)
    return model, data, mjx.put_data(model, data, impl="jax")


def _observations(task: str, seed: int = 0) -> tuple[mujoco.MjData, dict[str, np.ndarray]]:
    body = load_body(*MABRAX_TASKS[task])
    _, obs_map = index_maps(task)
    _, data, mjx_data = _state(task, seed)
    observe = mabrax_observer(task, body, obs_map)
    return data, {a: np.asarray(o) for a, o in observe(mjx_data).items()}


def _q(data: mujoco.MjData, *joints: str) -> list[float]:
    return [float(data.joint(j).qpos[0]) for j in joints]


def _v(data: mujoco.MjData, *joints: str) -> list[float]:
    return [float(data.joint(j).qvel[0]) for j in joints]


@pytest.mark.parametrize("task", list(MABRAX_TASKS))
def test_agents_act_on_mabrax_actuators(task):
    body = load_body(*MABRAX_TASKS[task])
    action_map, obs_map = index_maps(task)
    names = agent_names(body, task, action_map)
    assert sorted(names.values()) == sorted(action_map) == sorted(obs_map)
    assert sorted(names) == sorted(body.actuated_modules)
    for module, agent in names.items():
        np.testing.assert_array_equal(body.modules[module].actuator_ids, action_map[agent])


def test_ant_agent_observes_leg_after_the_one_it_moves():
    body = load_body("ant-modular", "4x2")
    names = agent_names(body, "ant_4x2", index_maps("ant_4x2")[0])
    assert names == {"back_right": "agent_0", "front_left": "agent_1",
                     "front_right": "agent_2", "back_left": "agent_3"}
    data, obs = _observations("ant_4x2")
    torso = [data.qpos[2], *data.qpos[3:7]]
    hips = ["hip_1", "hip_2", "hip_3", "hip_4"]
    for i, agent in enumerate(sorted(obs)):
        leg = f"{i + 1}"
        positions = sorted(set(hips) | {f"ankle_{leg}"}, key=lambda j: data.model.joint(j).id)
        expected = [*torso, *_q(data, *positions), *data.qvel[:6],
                    *_v(data, f"hip_{leg}", f"ankle_{leg}")]
        np.testing.assert_allclose(obs[agent], expected, rtol=1e-5, atol=1e-5)


def test_hopper_agents_see_own_joint_and_neighbours_and_the_torso():
    data, obs = _observations("hopper_3x1")
    torso = [data.body("torso").xpos[2], data.qpos[2]]
    velocity = np.clip(data.qvel, -10, 10)
    joints = ["thigh_joint", "leg_joint", "foot_joint"]
    for i, agent in enumerate(sorted(obs)):
        seen = joints[max(i - 1, 0): i + 2]
        expected = [*torso, *_q(data, *seen), *velocity[:3], velocity[3 + i]]
        np.testing.assert_allclose(obs[agent], expected, rtol=1e-5, atol=1e-5)


def test_walker_agents_see_torso_height_and_velocities_not_its_pitch():
    data, obs = _observations("walker2d_2x3")
    velocity = np.clip(data.qvel, -10, 10)
    right = ["thigh_joint", "leg_joint", "foot_joint"]
    left = ["thigh_left_joint", "leg_left_joint", "foot_left_joint"]
    height = data.body("torso").xpos[2]
    np.testing.assert_allclose(
        obs["agent_0"], [height, *_q(data, *right, left[0]), *velocity[:2], *velocity[3:6]],
        rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        obs["agent_1"], [height, *_q(data, right[0], *left), *velocity[:2], *velocity[6:9]],
        rtol=1e-5, atol=1e-5)


def test_halfcheetah_map_reads_one_entry_past_the_meant_one():
    """MABrax's map was written for an observation with the root's x: on Brax's (and this)
    layout agent_0 sees rooty, bthigh, bshin, bfoot, fshin, vz, vangle and two joint
    velocities, and agent_5's last index, 17, one past the end, reads the last entry
    (ffoot's velocity, which the map meant)."""
    data, obs = _observations("halfcheetah_6x1")
    np.testing.assert_allclose(
        obs["agent_0"],
        [*_q(data, "rooty", "bthigh", "bshin", "bfoot", "fshin"),
         *_v(data, "rootz", "rooty", "bthigh", "bshin")],
        rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        obs["agent_5"],
        [*_q(data, "rooty", "bthigh", "ffoot"), *_v(data, "rootx", "rootz", "rooty", "bthigh"),
         data.qvel[-1]],
        rtol=1e-5, atol=1e-5)
    assert index_maps("halfcheetah_6x1")[1]["agent_5"][-1] == 17 == len(data.qvel) + 8


def test_humanoid_observation_has_brax_layout_and_clamps_past_its_end():
    body = load_body("humanoid-modular", "9|8")
    model, data, mjx_data = _state("humanoid_9|8")
    full = np.asarray(brax_observation("humanoid_9|8", body)(mjx_data))
    nbody = model.nbody - 1
    assert full.shape == (model.nq - 2 + model.nv + 16 * nbody + model.nv,)
    np.testing.assert_allclose(full[: model.nq - 2], data.qpos[2:], rtol=1e-6)
    inertia = full[model.nq - 2 + model.nv:][: 10 * nbody].reshape(nbody, 10)
    np.testing.assert_allclose(inertia[:, 9], model.body_mass[1:], rtol=1e-6)
    # The sum of the bodies' inertias about the whole body's center of mass is the
    # inertia of the whole body about it, which MuJoCo's composite inertia of the root
    # gives: cinert of the tree root, taken about subtree_com[root] (the same point).
    whole = inertia[:, :9].sum(0).reshape(3, 3)
    np.testing.assert_allclose(np.trace(whole), _mujoco_whole_inertia_trace(model, data),
                               rtol=1e-4)
    np.testing.assert_allclose(full[-model.nv:], data.qfrc_actuator, rtol=1e-4, atol=1e-4)
    _, obs = _observations("humanoid_9|8")
    _, obs_map = index_maps("humanoid_9|8")
    for agent, indices in obs_map.items():
        np.testing.assert_array_equal(obs[agent], full[np.minimum(indices, full.size - 1)])
    assert obs_map["agent_0"].max() >= full.size  # MABrax's map runs past Brax's layout


def test_inertial_frames_are_mujocos():
    model, data, _ = _state("humanoid_9|8", seed=2)
    xipos, ximat = InertialFrames(model)(data.xpos, data.xmat.reshape(-1, 3, 3))
    np.testing.assert_allclose(xipos, data.xipos, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ximat, data.ximat.reshape(-1, 3, 3), rtol=1e-5, atol=1e-5)


def test_humanoid_observation_on_the_c_simulators_state_is_mjxs():
    """The C simulator's states carry body frames, not inertial frames: the observation
    derives the latter from the former and gives what it gives on MJX's data."""
    body = load_body("humanoid-modular", "9|8")
    _, data, mjx_data = _state("humanoid_9|8", seed=3)
    fields = {name: jnp.asarray(getattr(data, name), jnp.float32)
              for name in STATE_FIELDS + DERIVED_FIELDS}
    cpu_data = CpuData(**{**fields, "xmat": fields["xmat"].reshape(-1, 3, 3)})  # as it carries
    observe = brax_observation("humanoid_9|8", body)
    np.testing.assert_allclose(observe(cpu_data), observe(mjx_data), rtol=1e-4, atol=1e-4)


def _mujoco_whole_inertia_trace(model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """Trace of the whole body's inertia about its center of mass, from MuJoCo's bodies."""
    com = data.subtree_com[1]
    total = 0.0
    for b in range(1, model.nbody):
        offset = data.xipos[b] - com
        total += model.body_inertia[b].sum() + 2 * model.body_mass[b] * offset @ offset
    return total


def test_mabrax_name_rolls_out_under_jit_vmap(jaxmarl_env):
    env = jaxmarl_env("hopper_3x1", EPISODE)
    assert env.agents == ["agent_0", "agent_1", "agent_2"]
    _, obs_map = index_maps("hopper_3x1")
    observe = brax_observation("hopper_3x1", env.body)

    def rollout(key):
        obs, state = env.reset(key)

        def step(carry, key):
            obs, state = carry
            actions = {a: jax.random.uniform(jax.random.fold_in(key, i), (1,), minval=-1,
                                             maxval=1) for i, a in enumerate(env.agents)}
            obs, state, rewards, dones, _ = env.step(key, state, actions)
            return (obs, state), dict(obs=obs, rewards=rewards, dones=dones,
                                      brax=observe(state.data))

        return jax.lax.scan(step, (obs, state), jax.random.split(key, N_STEPS))[1]

    out = jax.jit(jax.vmap(rollout))(jax.random.split(jax.random.PRNGKey(1), N_ENVS))
    for agent, indices in obs_map.items():
        assert out["obs"][agent].shape == (N_ENVS, N_STEPS, indices.size)
        np.testing.assert_array_equal(out["obs"][agent], out["brax"][..., indices])
    assert set(out["dones"]) == {*env.agents, "__all__"}
    np.testing.assert_array_equal(out["dones"]["__all__"][:, EPISODE - 1 :: EPISODE], True)
    np.testing.assert_allclose(sum(out["rewards"][a] for a in env.agents),
                               out["rewards"]["__all__"], rtol=1e-5, atol=1e-5)
