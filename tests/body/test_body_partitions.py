"""Partition sources (mapping, annotation, named partition, rules) and how bodies, joints and
actuators of every kind land in modules."""

import numpy as np
import pytest

from modular_ppo.body import BodyGraph, load_body


def actuators_by_module(graph: BodyGraph) -> dict[str, tuple[str, ...]]:
    return {name: module.actuators for name, module in graph.modules.items()}


def test_subtrees_rule_assigns_every_joint_and_transmission_kind(gadget_xml):
    graph = BodyGraph.from_mjcf(gadget_xml)
    assert actuators_by_module(graph) == {
        # site thruster on base; both tendons span the two arms, whose common ancestor is base
        "base": ("thrust", "couple", "squeeze"),
        "neck": ("head_motor",),  # ball joint on head, below the jointless neck
        "arm_l": ("shoulder_l_x", "shoulder_l_y", "extend_l"),
        "arm_r": (),  # moved only through the tendon: an observation / value module
        "tail": (),
    }
    m = graph.model
    assert graph.modules["base"].qpos_adr.size == 7 and graph.modules["base"].qvel_adr.size == 6
    assert graph.modules["neck"].qpos_adr.size == 4 and graph.modules["neck"].qvel_adr.size == 3
    assert graph.modules["arm_l"].bodies == ("arm_l", "slider_l")
    assert graph.modules["arm_l"].qpos_adr.size == 3
    # scenery: the static crate and the loose ball (it has a joint but no actuator) stay out
    assert graph.bodies.nodes["crate"]["module"] is None
    assert graph.bodies.nodes["ball"]["module"] is None
    ball_qpos = m.jnt_qposadr[m.joint("ball_free").id]
    assert not any(ball_qpos in mod.qpos_adr for mod in graph.modules.values())


def test_per_actuated_body_rule_lifts_jointless_connectors_and_merges_the_rest(gadget_xml):
    graph = BodyGraph.from_mjcf(gadget_xml, "per_actuated_body")
    assert {n: m.bodies for n, m in graph.modules.items()} == {
        "base": ("base", "arm_r", "tail"),
        "head": ("neck", "head"),
        "arm_l": ("arm_l",),
        "slider_l": ("slider_l",),
    }
    ant = load_body("ant-modular", "per_actuated_body")
    assert ant.module_names[:3] == ("torso", "aux_1", "foot_1")
    assert ant.modules["aux_1"].bodies == ("front_left_leg", "aux_1")
    assert ant.modules["aux_1"].actuators == ("hip_1",)


def test_subtrees_rule_reproduces_the_ant_annotation():
    annotated, rule = load_body("ant-modular"), load_body("ant-modular", "subtrees")
    assert [m.bodies for m in annotated.modules.values()] == [
        m.bodies for m in rule.modules.values()
    ]


def test_mapping_listing_every_body_equals_listing_roots():
    by_roots = load_body(
        "walker2d-modular", {"torso": ["torso"], "right": ["thigh"], "left": ["thigh_left"]}
    )
    explicit = load_body(
        "walker2d-modular",
        {
            "torso": ["torso"],
            "right": ["thigh", "leg", "foot"],
            "left": ["thigh_left", "leg_left", "foot_left"],
        },
    )
    assert by_roots.partition_of_actuators() == explicit.partition_of_actuators()
    named = load_body("walker2d-modular", "2x3").partition_of_actuators()
    assert list(by_roots.partition_of_actuators().values()) == list(named.values())
    assert explicit.modules["right"].root_bodies == ("thigh",)


def test_module_may_join_several_subtrees():
    graph = load_body("ant-modular", "2x4")
    front = graph.modules["front_legs"]
    assert front.root_bodies == ("front_left_leg", "front_right_leg")
    assert front.parent == "torso"
    assert front.actuators == ("hip_1", "ankle_1", "hip_2", "ankle_2")


@pytest.mark.parametrize(
    ("name", "partition"),
    [
        ("ant-modular", None),
        ("ant-modular", "2x4d"),
        ("humanoid-modular", "9|8"),
        ("centipede-6", "per_actuated_body"),
        ("swimmer-6", "subtrees"),
    ],
)
def test_graph_xml_rebuilds_the_same_partition(name, partition):
    graph = load_body(name, partition)
    rebuilt = BodyGraph.from_mjcf(graph.xml)
    assert rebuilt.module_names == graph.module_names
    for a, b in zip(graph.modules.values(), rebuilt.modules.values(), strict=True):
        assert a.bodies == b.bodies
        assert np.array_equal(a.qpos_adr, b.qpos_adr)
        assert np.array_equal(a.actuator_ids, b.actuator_ids)


def test_default_annotation_may_name_a_rule():
    xml = load_body("ant-modular").xml.replace(
        load_body("ant-modular").partition_annotation(), "per_actuated_body"
    )
    graph = BodyGraph.from_mjcf(xml)
    assert graph.module_names == load_body("ant-modular", "per_actuated_body").module_names


def test_hop_distances_and_neighbors_follow_the_module_tree():
    ant = load_body("ant-modular")
    assert ant.neighbors("front_left", 1) == ("torso",)
    assert ant.neighbors("front_left", 2) == ("torso", "front_right", "back_left", "back_right")
    assert ant.neighbors("torso", 1) == ("front_left", "front_right", "back_left", "back_right")
    walker = load_body("walker2d-modular")
    i, j = walker.module_index("foot"), walker.module_index("foot_left")
    assert walker.hop_distance[i, j] == 6  # foot-leg-thigh-torso-thigh_left-leg_left-foot_left


def test_rule_module_names_are_made_fit_for_metric_keys():
    xml = """<mujoco><worldbody><body name="robot/base"><freejoint/><geom size=".1"/>
      <body name="robot/arm 1"><joint name="a"/><geom size=".1"/></body>
      <body name="robot_arm_1"><joint name="b"/><geom size=".1"/></body></body></worldbody>
      <actuator><motor joint="a"/><motor joint="b"/></actuator></mujoco>"""
    graph = BodyGraph.from_mjcf(xml)
    assert graph.module_names == ("robot_base", "robot_arm_1", "robot_arm_1_2")
    assert graph.modules["robot_arm_1"].bodies == ("robot/arm 1",)


def test_unnamed_actuators_get_stable_names():
    xml = """<mujoco><worldbody><body name="b"><freejoint/><geom size=".1"/>
      <body name="c"><joint name="h"/><geom size=".1"/></body></body></worldbody>
      <actuator><motor joint="h"/></actuator></mujoco>"""
    assert BodyGraph.from_mjcf(xml).modules["c"].actuators == ("actuator#0",)
