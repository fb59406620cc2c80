"""Observations: own features match MuJoCo's C simulator; k-hop blocks are the neighbors'."""

import dataclasses

import mujoco
import numpy as np
import pytest

from modular_ppo.env import EnvConfig, EnvError, describe_observations
from modular_ppo.env.observations import Observer

# Written out by hand from the morphologies: module -> neighbors at <= k hops, module order.
LEGS = ["front_left", "front_right", "back_left", "back_right"]
S0, S1, S2, S3 = (f"segment_{i}" for i in range(4))  # swimmer-4: a chain of four modules
EXPECTED_NEIGHBORS = {
    "swimmer-4": {
        1: {S0: [S1], S1: [S0, S2], S2: [S1, S3], S3: [S2]},
        2: {S0: [S1, S2], S1: [S0, S2, S3], S2: [S0, S1, S3], S3: [S1, S2]},
    },
    "ant-modular": {
        1: {"torso": LEGS, **{leg: ["torso"] for leg in LEGS}},
        2: {"torso": LEGS, **{leg: ["torso"] + [o for o in LEGS if o != leg] for leg in LEGS}},
    },
}


def _blocks(observer: Observer, obs: dict, module: str) -> dict[str, np.ndarray]:
    """Block name -> values, for the blocks of `module`'s observation."""
    out, start = {}, 0
    for block in observer.layout[module]:
        out[block.name] = np.asarray(obs[module][start : start + block.size])
        start += block.size
    assert start == obs[module].shape[0] == observer.sizes[module]
    return out


@pytest.mark.parametrize("name", ["swimmer-4", "ant-modular"])
def test_k_hop_observations_hold_exactly_the_neighbors_own_features(
    name, body, mujoco_state, to_mjx
):
    graph = body(name)
    data = to_mjx(graph, mujoco_state(graph, seed=3))
    own_only = Observer(graph, EnvConfig(neighbor_hops=0))
    obs0 = own_only(data)
    n_global = sum(b.size for b in own_only.layout[graph.root_module] if b.hops is None)
    assert n_global == 13
    own = {m: np.asarray(o[:-n_global]) for m, o in obs0.items()}
    global_features = np.asarray(obs0[graph.root_module][-n_global:])

    for k in (1, 2):
        observer = Observer(graph, EnvConfig(neighbor_hops=k))
        obs = observer(data)
        for module in graph.module_names:
            neighbors = EXPECTED_NEIGHBORS[name][k][module]
            expected = np.concatenate(
                [own[module], *(own[n] for n in neighbors), global_features]
            )
            np.testing.assert_array_equal(np.asarray(obs[module]), expected)
            sources = [b.source for b in observer.layout[module] if b.hops]
            assert list(dict.fromkeys(sources)) == [n for n in neighbors if own[n].size]


def test_own_features_match_mujoco(body, to_mjx):
    ant = body("ant-modular")
    model = ant.model
    data = mujoco.MjData(model)
    data.qpos[:] = ant.numerics["init_qpos"]
    data.qpos[2] = 0.3  # low enough that the feet press into the floor
    data.qpos[3:7] = [0.9, 0.1, -0.2, 0.3]
    data.qvel[:] = np.random.default_rng(0).normal(0, 1, model.nv)
    data.ctrl[:] = np.linspace(-0.9, 0.9, model.nu)
    mujoco.mj_forward(model, data)
    mujoco.mj_rnePostConstraint(model, data)
    assert np.abs(data.cfrc_ext).sum() > 0, "the reference state should have contacts"

    config = EnvConfig(neighbor_hops=0, contact_forces=True, previous_action=True)
    observer = Observer(ant, config)
    obs = observer(to_mjx(ant, data))

    torso = data.body("torso")
    rot = torso.xmat.reshape(3, 3)

    def world_velocity(name):
        res = np.zeros(6)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_XBODY, data.body(name).id, res, 0)
        return res[3:], res[:3]  # linear, angular at the body's frame origin

    blocks = _blocks(observer, obs, "front_left")
    joints = [data.joint("hip_1"), data.joint("ankle_1")]
    np.testing.assert_allclose(blocks["front_left/joint_pos"], [j.qpos[0] for j in joints],
                               atol=1e-6)
    np.testing.assert_allclose(blocks["front_left/joint_vel"], [j.qvel[0] for j in joints],
                               atol=1e-6)
    layout = {b.name: b for b in observer.layout["front_left"]}
    moving = layout["front_left/body_pos"].elements
    assert moving == ("aux_1", "foot_1")  # the welded front_left_leg body adds nothing
    pos = [rot.T @ (data.body(b).xpos - torso.xpos) for b in moving]
    np.testing.assert_allclose(blocks["front_left/body_pos"], np.ravel(pos), atol=1e-5)
    rel_rot = [(rot.T @ data.body(b).xmat.reshape(3, 3))[:, :2].ravel() for b in moving]
    np.testing.assert_allclose(blocks["front_left/body_rot6d"], np.ravel(rel_rot), atol=1e-5)
    vel = [np.concatenate([rot.T @ v for v in world_velocity(b)]) for b in moving]
    np.testing.assert_allclose(blocks["front_left/body_vel"], np.ravel(vel), atol=1e-4)
    contact_bodies = layout["front_left/contact_force"].elements
    assert contact_bodies == ("front_left_leg", "aux_1", "foot_1")
    contact = [np.clip(data.body(b).cfrc_ext, -1, 1) for b in contact_bodies]
    np.testing.assert_allclose(blocks["front_left/contact_force"], np.ravel(contact), atol=1e-4)
    leg_actuators = [
        a for joint in ("hip_1", "ankle_1") for a in range(model.nu)
        if model.actuator_trnid[a, 0] == model.joint(joint).id
    ]
    np.testing.assert_allclose(blocks["front_left/prev_action"], data.ctrl[leg_actuators],
                               atol=1e-6)

    linvel, angvel = world_velocity("torso")
    np.testing.assert_allclose(blocks["global/root_height"], [torso.xpos[2]], atol=1e-6)
    np.testing.assert_allclose(blocks["global/root_rot6d"], rot[:, :2].ravel(), atol=1e-6)
    np.testing.assert_allclose(blocks["global/root_linvel"], linvel, atol=1e-4)
    np.testing.assert_allclose(blocks["global/root_angvel"], angvel, atol=1e-4)

    torso_blocks = _blocks(observer, obs, "torso")
    assert list(torso_blocks) == ["torso/contact_force", *(n for n in blocks if "global" in n)]


def test_layout_description_and_sizes(body):
    ant = body("ant-modular")
    config = EnvConfig(neighbor_hops=1)
    text = describe_observations(ant, config)
    observer = Observer(ant, config)
    for module, size in observer.sizes.items():
        assert f"{module}: {size} values" in text
    assert "front_left/joint_pos" in text and "[hip_1, ankle_1]" in text


def test_a_module_that_would_observe_nothing_is_refused(body):
    config = EnvConfig(neighbor_hops=0, global_features=False)
    with pytest.raises(EnvError, match="torso.*global_features=True or neighbor_hops >= 1"):
        Observer(body("ant-modular"), config)
    fixed = Observer(body("ant-modular"), dataclasses.replace(config, neighbor_hops=1))
    assert fixed.sizes["torso"] > 0


def test_parent_frame_body_features_match_mujoco(body, mujoco_state, to_mjx):
    ant = body("ant-modular")
    model, data = ant.model, mujoco_state(ant, seed=5)
    observer = Observer(ant, EnvConfig(neighbor_hops=0, body_frame="parent"))
    blocks = _blocks(observer, observer(to_mjx(ant, data)), "front_left")
    moving = ("aux_1", "foot_1")
    pos, rot6d, vel = [], [], []
    for name in moving:
        b = data.body(name)
        parent = data.body(int(model.body_parentid[b.id]))
        frame = parent.xmat.reshape(3, 3)
        pos.append(frame.T @ (b.xpos - parent.xpos))
        rot6d.append((frame.T @ b.xmat.reshape(3, 3))[:, :2].ravel())
        world = np.zeros(6)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_XBODY, b.id, world, 0)
        vel.append(np.concatenate([frame.T @ world[3:], frame.T @ world[:3]]))
    np.testing.assert_allclose(blocks["front_left/body_pos"], np.ravel(pos), atol=1e-5)
    np.testing.assert_allclose(blocks["front_left/body_rot6d"], np.ravel(rot6d), atol=1e-5)
    np.testing.assert_allclose(blocks["front_left/body_vel"], np.ravel(vel), atol=1e-4)


def test_in_the_parent_frame_a_leg_observes_the_same_wherever_it_sits(body, to_mjx):
    """centipede-6 at rest in its initial pose: its legs 1 and 2 are built and posed alike,
    one segment apart. Root-frame body positions tell them apart; parent-frame features
    are the same, so a shared policy sees on a longer centipede what it saw on this one."""
    centipede = body("centipede-6")
    data = mujoco.MjData(centipede.model)
    data.qpos[:] = centipede.numerics["init_qpos"]
    mujoco.mj_forward(centipede.model, data)
    features = ("body_pos", "body_rot6d", "body_vel")

    def own(frame):
        observer = Observer(centipede, EnvConfig(neighbor_hops=0, body_frame=frame))
        obs = observer(to_mjx(centipede, data))
        return {leg: {f: _blocks(observer, obs, leg)[f"{leg}/{f}"] for f in features}
                for leg in ("leg_1_left", "leg_2_left")}

    parent, root = own("parent"), own("root")
    for f in features:
        np.testing.assert_allclose(parent["leg_1_left"][f], parent["leg_2_left"][f], atol=1e-5)
    assert np.abs(root["leg_1_left"]["body_pos"] - root["leg_2_left"]["body_pos"]).max() > 0.1


def test_an_unknown_body_frame_is_refused():
    with pytest.raises(EnvError, match="body_frame = 'torso'.*\"root\".*\"parent\""):
        EnvConfig(body_frame="torso")
