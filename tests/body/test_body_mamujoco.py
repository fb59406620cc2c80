"""Named partitions against MaMuJoCo's agents.

Reference: `get_parts_and_edges` in multiagent_mujoco/obsk.py (schroederdewitt/multiagent_mujoco,
same groups in Kallinteris-Andreas/multiagent_mujoco_v4). Each agent is written as MaMuJoCo
writes it: (joint, actuator id) per node, the actuator ids of Gymnasium's XML.
"""

import pytest

from modular_ppo.body import load_body

ANT_LEGS = {
    1: [("hip_1", 2), ("ankle_1", 3)],
    2: [("hip_2", 4), ("ankle_2", 5)],
    3: [("hip_3", 6), ("ankle_3", 7)],
    4: [("hip_4", 0), ("ankle_4", 1)],
}
CHEETAH = {"bthigh": 0, "bshin": 1, "bfoot": 2, "fthigh": 3, "fshin": 4, "ffoot": 5}
WALKER = {
    "thigh_joint": 0,
    "leg_joint": 1,
    "foot_joint": 2,
    "thigh_left_joint": 3,
    "leg_left_joint": 4,
    "foot_left_joint": 5,
}
HUMANOID = {
    "abdomen_y": 0,
    "abdomen_z": 1,
    "abdomen_x": 2,
    "right_hip_x": 3,
    "right_hip_z": 4,
    "right_hip_y": 5,
    "right_knee": 6,
    "left_hip_x": 7,
    "left_hip_z": 8,
    "left_hip_y": 9,
    "left_knee": 10,
    "right_shoulder1": 11,
    "right_shoulder2": 12,
    "right_elbow": 13,
    "left_shoulder1": 14,
    "left_shoulder2": 15,
    "left_elbow": 16,
}


def nodes(table: dict[str, int], *joints: str) -> list[tuple[str, int]]:
    return [(j, table[j]) for j in joints]


MAMUJOCO_AGENTS = {
    ("ant-modular", "4x2"): [ANT_LEGS[1], ANT_LEGS[2], ANT_LEGS[3], ANT_LEGS[4]],
    ("ant-modular", "2x4"): [ANT_LEGS[1] + ANT_LEGS[2], ANT_LEGS[3] + ANT_LEGS[4]],
    ("ant-modular", "2x4d"): [ANT_LEGS[1] + ANT_LEGS[3], ANT_LEGS[2] + ANT_LEGS[4]],
    # not in obsk.py: one node per agent, as its "6x1" / "3x1" partitions do
    ("ant-modular", "8x1"): [[node] for leg in ANT_LEGS.values() for node in leg],
    ("halfcheetah-modular", "6x1"): [nodes(CHEETAH, j) for j in CHEETAH],
    ("halfcheetah-modular", "2x3"): [
        nodes(CHEETAH, "bfoot", "bshin", "bthigh"),
        nodes(CHEETAH, "ffoot", "fshin", "fthigh"),
    ],
    ("hopper-modular", "3x1"): [[("thigh_joint", 0)], [("leg_joint", 1)], [("foot_joint", 2)]],
    ("walker2d-modular", "2x3"): [
        nodes(WALKER, "foot_joint", "leg_joint", "thigh_joint"),
        nodes(WALKER, "foot_left_joint", "leg_left_joint", "thigh_left_joint"),
    ],
    ("humanoid-modular", "9|8"): [
        nodes(
            HUMANOID,
            "left_shoulder1",
            "left_shoulder2",
            "abdomen_x",
            "abdomen_y",
            "abdomen_z",
            "right_shoulder1",
            "right_shoulder2",
            "right_elbow",
            "left_elbow",
        ),
        nodes(
            HUMANOID,
            "left_hip_x",
            "left_hip_y",
            "left_hip_z",
            "right_hip_x",
            "right_hip_y",
            "right_hip_z",
            "right_knee",
            "left_knee",
        ),
    ],
    # Swimmer-v4 "2x1" (joints rot2, rot3 there) and many-agent swimmer "AxB": joint i drives
    # actuator i, agents take consecutive joints.
    ("swimmer-3", "2x1"): [[("joint_1", 0)], [("joint_2", 1)]],
    ("swimmer-7", "3x2"): [
        nodes({f"joint_{i + 1}": i for i in range(6)}, f"joint_{2 * k + 1}", f"joint_{2 * k + 2}")
        for k in range(3)
    ],
}


@pytest.mark.parametrize(("body", "partition"), list(MAMUJOCO_AGENTS), ids=lambda v: str(v))
def test_named_partition_has_mamujoco_agents(body, partition):
    graph = load_body(body, partition)
    agents = MAMUJOCO_AGENTS[body, partition]
    ours = {frozenset(ids) for ids in graph.partition_of_actuators().values()}
    assert ours == {frozenset(act for _, act in agent) for agent in agents}
    m = graph.model
    for agent in agents:
        for joint, act in agent:
            assert m.joint(m.actuator_trnid[act, 0]).name == joint
    # the body parts MaMuJoCo leaves to "global" observations form one unactuated module
    unactuated = [n for n, mod in graph.modules.items() if not mod.is_actuated]
    assert unactuated == [graph.root_module]


def test_ant_4x2_is_the_default_ant_annotation():
    assert (
        load_body("ant-modular", "4x2").partition_of_actuators()
        == load_body("ant-modular").partition_of_actuators()
    )


def test_ant_4x2_modules_are_the_leg_subtrees():
    graph = load_body("ant-modular", "4x2")
    m = graph.model
    for module in graph.actuated_modules:
        (root,) = graph.modules[module].root_bodies
        subtree = [b for b in range(m.nbody) if root in _ancestor_names(m, b)]
        assert sorted(subtree) == graph.modules[module].body_ids.tolist()


def _ancestor_names(m, body: int) -> list[str]:
    names = []
    while body != 0:
        names.append(m.body(body).name)
        body = m.body_parentid[body]
    return names
