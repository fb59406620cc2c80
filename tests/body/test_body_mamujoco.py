"""Named partitions against MaMuJoCo's agents.

Gymnasium-Robotics' MaMuJoCo (v1, gymnasium_robotics.envs.multiagent_mujoco) is the
reference for the partition names it defines: its `get_parts_and_edges` gives each agent as
nodes (a joint label and the id of the actuator it drives in Gymnasium's XML, whose
actuator order the bundled bodies share). The ant's two other partitions are no v1 names:
"2x4d-original" is the original MaMuJoCo's 2x4d (schroederdewitt/multiagent_mujoco, obsk.py:
legs 1+3 and 2+4), "8x1" this project's, written out here.
"""

import pytest
from gymnasium_robotics.envs.multiagent_mujoco.obsk import get_parts_and_edges

from modular_ppo.body import load_body

V1_PARTITIONS = [
    ("ant-modular", "Ant", "4x2"),
    ("ant-modular", "Ant", "2x4"),
    ("ant-modular", "Ant", "2x4d"),
    ("halfcheetah-modular", "HalfCheetah", "6x1"),
    ("halfcheetah-modular", "HalfCheetah", "2x3"),
    ("hopper-modular", "Hopper", "3x1"),
    ("walker2d-modular", "Walker2d", "2x3"),
    ("humanoid-modular", "Humanoid", "9|8"),
    ("swimmer-3", "Swimmer", "2x1"),
    ("swimmer-7", "ManySegmentSwimmer", "3x2"),  # 6 motorized joints, 3 agents of 2
]

ANT_LEGS = {leg: [f"hip_{leg}", f"ankle_{leg}"] for leg in (1, 2, 3, 4)}
NOT_V1 = {
    "2x4d-original": [ANT_LEGS[1] + ANT_LEGS[3], ANT_LEGS[2] + ANT_LEGS[4]],
    "8x1": [[joint] for leg in ANT_LEGS.values() for joint in leg],
}
"""The ant's partitions that Gymnasium-Robotics' MaMuJoCo does not define: agents by joint."""


def _agents(graph) -> set[frozenset[int]]:
    return {frozenset(ids) for ids in graph.partition_of_actuators().values()}


@pytest.mark.parametrize(("body", "scenario", "partition"), V1_PARTITIONS, ids=lambda v: str(v))
def test_named_partition_has_gymnasium_robotics_agents(body, scenario, partition):
    graph = load_body(body, partition)
    parts, _, _ = get_parts_and_edges(scenario, partition)
    assert _agents(graph) == {frozenset(node.act_ids for node in part) for part in parts}
    if scenario in ("Swimmer", "ManySegmentSwimmer"):
        return  # their joints are numbered, not named as here
    m = graph.model
    for node in (node for part in parts for node in part):
        joint = m.joint(m.actuator_trnid[node.act_ids, 0]).name
        assert joint.replace("_", "") == node.label.replace("_", "")  # Ant: hip_1 is "hip1"
    # the body parts MaMuJoCo leaves to "global" observations form one unactuated module
    unactuated = [n for n, mod in graph.modules.items() if not mod.is_actuated]
    assert unactuated == [graph.root_module]


@pytest.mark.parametrize("partition", list(NOT_V1))
def test_the_ants_other_partitions(partition):
    graph = load_body("ant-modular", partition)
    m = graph.model
    by_joints = {
        frozenset(a for a in range(m.nu) if m.joint(m.actuator_trnid[a, 0]).name in agent)
        for agent in NOT_V1[partition]
    }
    assert _agents(graph) == by_joints
    with pytest.raises(Exception, match="UNKNOWN partitioning"):
        get_parts_and_edges("Ant", partition)


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
