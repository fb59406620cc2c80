"""The bundled morphologies: names, generators, task numerics, MJX-friendly settings, and a
random-control rollout in MuJoCo's C simulator for every one."""

import mujoco
import numpy as np
import pytest
from mujoco import mjx
from mujoco.mjx._src.collision_driver import geom_pairs

from modular_ppo.body import bundled_names, load_body
from modular_ppo.body.library import BODIES_DIR

XML_BODIES = [
    "ant-modular",
    "halfcheetah-modular",
    "hopper-modular",
    "humanoid-modular",
    "walker2d-modular",
]

# Control period dt = timestep * frame_skip of the Gymnasium / Brax tasks they reproduce.
CONTROL_DT = {
    "ant-modular": 0.05,
    "halfcheetah-modular": 0.05,
    "hopper-modular": 0.008,
    "walker2d-modular": 0.008,
    "humanoid-modular": 0.015,
    "swimmer-4": 0.04,
    "swimmer-6": 0.04,
    "centipede-4": 0.05,
    "centipede-6": 0.05,
    "centipede-8": 0.05,
}


def test_bundled_names_list_files_and_default_generated_sizes():
    assert bundled_names() == XML_BODIES + [
        "centipede-4",
        "centipede-6",
        "centipede-8",
        "swimmer-4",
        "swimmer-6",
    ]


@pytest.mark.parametrize(
    ("name", "modules", "actuators", "dof"),
    [
        ("centipede-4", 6, 10, 16),
        ("centipede-10", 15, 28, 34),
        ("swimmer-2", 2, 1, 4),
        ("swimmer-9", 9, 8, 11),
    ],
)
def test_generated_bodies_take_any_valid_size(name, modules, actuators, dof):
    body = load_body(name)
    assert body.name == name
    assert (len(body.modules), body.model.nu, body.model.nv) == (modules, actuators, dof)


def test_centipede_segment_partitions_group_whole_segments():
    body = load_body("centipede-8", "2x2")
    assert body.module_names == ("torso_0", "part_0", "part_1")
    assert body.modules["part_0"].root_bodies == ("leg_0_left", "leg_0_right", "torso_1")
    assert body.modules["part_1"].bodies[0] == "torso_2"
    assert [body.modules[m].n_actuators for m in body.actuated_modules] == [10, 12]


def test_load_body_by_path_equals_by_name():
    by_path = load_body(str(BODIES_DIR / "hopper-modular.xml"))
    assert by_path.partition_of_actuators() == load_body("hopper-modular").partition_of_actuators()


@pytest.mark.parametrize("name", bundled_names())
def test_task_numerics(name):
    body = load_body(name)
    m = body.model
    assert m.opt.timestep * body.frame_skip == pytest.approx(CONTROL_DT[name])
    qpos = body.init_qpos
    assert qpos.shape == (m.nq,)
    for j in np.flatnonzero(m.jnt_limited):
        low, high = m.jnt_range[j]
        assert low <= qpos[m.jnt_qposadr[j]] <= high, m.joint(j).name
    can_fall = not name.startswith(("swimmer", "halfcheetah"))
    assert (body.healthy_z is not None) == can_fall
    if can_fall:
        data = mujoco.MjData(m)
        data.qpos[:] = qpos
        mujoco.mj_kinematics(m, data)
        low, high = body.healthy_z
        assert low < data.xpos[body.root_body_id, 2] < high, "the rest pose is healthy"


@pytest.mark.parametrize("name", bundled_names())
def test_physics_settings_are_mjx_friendly(name):
    m = load_body(name).model
    assert m.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON
    assert (m.opt.iterations, m.opt.ls_iterations) == (1, 4)
    floor = m.geom("floor").id
    pairs = list(geom_pairs(m))
    assert all(floor in (g1, g2) for g1, g2, _ in pairs), "only contacts with the floor"
    cheap = {
        int(mujoco.mjtGeom.mjGEOM_PLANE),
        int(mujoco.mjtGeom.mjGEOM_SPHERE),
        int(mujoco.mjtGeom.mjGEOM_CAPSULE),
    }
    assert {int(m.geom_type[g]) for pair in pairs for g in pair[:2]} <= cheap
    assert (len(pairs) == 0) == name.startswith("swimmer")
    mjx.put_model(m)


@pytest.mark.parametrize("name", bundled_names())
def test_random_control_rollout_stays_finite(name):
    body = load_body(name)
    m = body.model
    data = mujoco.MjData(m)
    data.qpos[:] = body.init_qpos
    rng = np.random.default_rng(0)
    for _ in range(200):
        data.ctrl[:] = rng.uniform(-1, 1, m.nu)
        for _ in range(body.frame_skip):
            mujoco.mj_step(m, data)
        assert np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()
    assert not any(w.number for w in data.warning), "no solver / contact buffer warnings"
    assert not np.allclose(data.qpos, body.init_qpos), "the motors move the body"
