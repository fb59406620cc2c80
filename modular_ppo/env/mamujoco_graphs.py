"""Gymnasium-Robotics' MaMuJoCo (v1) graphs of the five bodies it shares with this project.

Transcribed from `get_parts_and_edges` (obsk.py) and `_generate_local_categories`
(mujoco_multi.py) in gymnasium_robotics/envs/multiagent_mujoco, gymnasium-robotics 1.4.
Per scenario: its nodes (a joint an agent acts on), its hyperedges (fully connected sets
of nodes), its global nodes, its partitions (agents as node labels, in agent order) and
its local categories per hop. Addresses are obsk.py's own: qpos / qvel addresses negative
from the end, actuator and body ids, all of Gymnasium's v5 model, whose layout (joints,
actuators, bodies in id order) the bundled body must have (`Scenario.joints`,
`actuator_joints`, `bodies`). tests/env/test_env_mamujoco.py checks these tables against
obsk.py and the observations built from them against gymnasium_robotics' env.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Node:
    """obsk.py's `Node`: what the categories read for one joint (or one global node)."""

    label: str
    qpos: tuple[int, ...]
    """qpos addresses the "qpos" category reads (negative: from the end of qpos)."""
    qvel: tuple[int, ...]
    """qvel addresses the "qvel" and "qfrc_actuator" categories read."""
    actuator: int | None = None
    """The actuator id the node's agent drives (None for a global node)."""
    bodies: tuple[int, ...] = ()
    """Body ids the "cinert", "cvel" and "cfrc_ext" categories read."""
    qvel_clip: float | None = None
    """The "qvel" category is clipped to [-c, c] (obsk.py's extra_obs; the Hopper's 10)."""
    body_clip: float | None = None
    """The body categories are clipped to [-c, c] (obsk.py's body_fn; the Ant's 1)."""


@dataclasses.dataclass(frozen=True)
class Scenario:
    """One MaMuJoCo environment ("Ant", ...) on the model layout it assumes."""

    name: str
    joints: tuple[str, ...]
    """Joint names in model order."""
    actuator_joints: tuple[str, ...]
    """The joint of each actuator, in actuator order."""
    bodies: tuple[str, ...]
    """Body names in id order, as the bundled body names them."""
    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, ...], ...]
    """Hyperedges as node labels."""
    global_nodes: tuple[Node, ...]
    partitions: dict[str, tuple[tuple[str, ...], ...]]
    """Partition name -> agents, each a tuple of node labels, in agent order."""
    local_categories: tuple[tuple[str, ...], ...]
    """Categories a node at hop 0, 1, ... contributes; the last repeats for further hops."""

    def node(self, label: str) -> Node:
        return next(n for n in self.nodes if n.label == label)


_ANT_LEGS = ("front_left_leg", "aux_1", "foot_1", "front_right_leg", "aux_2", "foot_2",
             "back_leg", "aux_3", "foot_3", "right_back_leg", "aux_4", "foot_4")


def _ant_node(label: str, address: int, actuator: int, bodies: tuple[int, ...]) -> Node:
    return Node(label, (address,), (address,), actuator, bodies, body_clip=1.0)


ANT = Scenario(
    name="Ant",
    joints=("root", "hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4",
            "ankle_4"),
    actuator_joints=("hip_4", "ankle_4", "hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3",
                     "ankle_3"),
    # Gymnasium's ant leaves the foot bodies unnamed; the bundled ant calls them foot_i.
    bodies=("world", "torso", *_ANT_LEGS),
    nodes=(
        _ant_node("hip1", -8, 2, (1, 2)),
        _ant_node("ankle1", -7, 3, (2, 3, 4)),
        _ant_node("hip2", -6, 4, (1, 5)),
        _ant_node("ankle2", -5, 5, (5, 6, 7)),
        _ant_node("hip3", -4, 6, (1, 8)),
        _ant_node("ankle3", -3, 7, (8, 9, 10)),
        _ant_node("hip4", -2, 0, (1, 11)),
        _ant_node("ankle4", -1, 1, (11, 12, 13)),
    ),
    edges=(("ankle4", "hip4"), ("ankle1", "hip1"), ("ankle2", "hip2"), ("ankle3", "hip3"),
           ("hip4", "hip1", "hip2", "hip3")),
    global_nodes=(Node("root", (2, 3, 4, 5, 6), (0, 1, 2, 3, 4, 5)),),
    partitions={
        "2x4": (("hip1", "ankle1", "hip2", "ankle2"), ("hip3", "ankle3", "hip4", "ankle4")),
        "2x4d": (("hip1", "ankle1", "hip4", "ankle4"), ("hip2", "ankle2", "hip3", "ankle3")),
        "4x2": (("hip1", "ankle1"), ("hip2", "ankle2"), ("hip3", "ankle3"), ("hip4", "ankle4")),
    },
    local_categories=(("qpos", "qvel", "cfrc_ext"), ("qpos",)),
)

_PLANAR_ROOT = ("rootx", "rootz", "rooty")


def _planar_globals(qvel_clip: float | None = None) -> tuple[Node, ...]:
    """root_x (its qpos left out: the forward position), root_z, root_y."""
    return (
        Node("root_x", (), (0,), qvel_clip=qvel_clip),
        Node("root_z", (1,), (1,), qvel_clip=qvel_clip),
        Node("root_y", (2,), (2,), qvel_clip=qvel_clip),
    )


def _chain(labels: tuple[str, ...], qvel_clip: float | None = None) -> tuple[Node, ...]:
    """Nodes for the last len(labels) joints, in order, actuator i driving the i-th."""
    n = len(labels)
    return tuple(
        Node(label, (i - n,), (i - n,), i, qvel_clip=qvel_clip) for i, label in enumerate(labels)
    )


_CHEETAH = ("bthigh", "bshin", "bfoot", "fthigh", "fshin", "ffoot")
HALF_CHEETAH = Scenario(
    name="HalfCheetah",
    joints=(*_PLANAR_ROOT, *_CHEETAH),
    actuator_joints=_CHEETAH,
    bodies=("world", "torso", *_CHEETAH),
    nodes=_chain(_CHEETAH),
    edges=(("bfoot", "bshin"), ("bshin", "bthigh"), ("bthigh", "fthigh"), ("fthigh", "fshin"),
           ("fshin", "ffoot")),
    global_nodes=_planar_globals(),
    partitions={
        "2x3": (("bthigh", "bshin", "bfoot"), ("fthigh", "fshin", "ffoot")),
        "6x1": tuple((label,) for label in _CHEETAH),
    },
    local_categories=(("qpos", "qvel"), ("qpos",)),
)

_HOPPER = ("thigh_joint", "leg_joint", "foot_joint")
HOPPER = Scenario(
    name="Hopper",
    joints=(*_PLANAR_ROOT, *_HOPPER),
    actuator_joints=_HOPPER,
    bodies=("world", "torso", "thigh", "leg", "foot"),
    nodes=_chain(_HOPPER, qvel_clip=10.0),
    edges=(("foot_joint", "leg_joint"), ("leg_joint", "thigh_joint")),
    global_nodes=_planar_globals(qvel_clip=10.0),
    partitions={"3x1": tuple((label,) for label in _HOPPER)},
    local_categories=(("qpos", "qvel"), ("qpos",)),
)

_WALKER = ("thigh_joint", "leg_joint", "foot_joint", "thigh_left_joint", "leg_left_joint",
           "foot_left_joint")
WALKER2D = Scenario(
    name="Walker2d",
    joints=(*_PLANAR_ROOT, *_WALKER),
    actuator_joints=_WALKER,
    bodies=("world", "torso", "thigh", "leg", "foot", "thigh_left", "leg_left", "foot_left"),
    nodes=_chain(_WALKER),
    edges=(("foot_joint", "leg_joint"), ("leg_joint", "thigh_joint"),
           ("foot_left_joint", "leg_left_joint"), ("leg_left_joint", "thigh_left_joint"),
           ("thigh_joint", "thigh_left_joint")),
    global_nodes=_planar_globals(),
    partitions={
        "2x3": (("foot_joint", "leg_joint", "thigh_joint"),
                ("foot_left_joint", "leg_left_joint", "thigh_left_joint")),
    },
    local_categories=(("qpos", "qvel"), ("qpos",)),
)

_HUMANOID_ACTUATED = (
    "abdomen_y", "abdomen_z", "abdomen_x", "right_hip_x", "right_hip_z", "right_hip_y",
    "right_knee", "left_hip_x", "left_hip_z", "left_hip_y", "left_knee", "right_shoulder1",
    "right_shoulder2", "right_elbow", "left_shoulder1", "left_shoulder2", "left_elbow",
)
"""obsk.py's node order: node i has qpos / qvel address i - 17 and drives actuator i. The
model's joints start abdomen_z, abdomen_y, so the nodes "abdomen_y" and "abdomen_z" read
each other's joint (and act on their own): kept, it is what MaMuJoCo observes."""
_ABDOMEN, _RIGHT_LEG, _LEFT_LEG = (1, 2, 3), (4, 5), (7, 8)
_HUMANOID_BODIES = (
    _ABDOMEN, _ABDOMEN, (3, 4, 7), _RIGHT_LEG, _RIGHT_LEG, _RIGHT_LEG, (5, 6), _LEFT_LEG,
    _LEFT_LEG, _LEFT_LEG, (8, 9), (1, 10, 11), (1, 10, 11), (11,), (1, 12, 13), (1, 12, 13),
    (13,),
)
_ABDOMEN_NODES = ("abdomen_x", "abdomen_y", "abdomen_z")
_RIGHT_HIP, _LEFT_HIP = ("right_hip_x", "right_hip_y", "right_hip_z"), (
    "left_hip_x", "left_hip_y", "left_hip_z")
HUMANOID = Scenario(
    name="Humanoid",
    joints=("root", "abdomen_z", "abdomen_y", "abdomen_x", "right_hip_x", "right_hip_z",
            "right_hip_y", "right_knee", "left_hip_x", "left_hip_z", "left_hip_y", "left_knee",
            "right_shoulder1", "right_shoulder2", "right_elbow", "left_shoulder1",
            "left_shoulder2", "left_elbow"),
    actuator_joints=_HUMANOID_ACTUATED,
    bodies=("world", "torso", "lwaist", "pelvis", "right_thigh", "right_shin", "right_foot",
            "left_thigh", "left_shin", "left_foot", "right_upper_arm", "right_lower_arm",
            "left_upper_arm", "left_lower_arm"),
    nodes=tuple(
        Node(label, (i - 17,), (i - 17,), i, bodies)
        for i, (label, bodies) in enumerate(zip(_HUMANOID_ACTUATED, _HUMANOID_BODIES))
    ),
    edges=(
        _ABDOMEN_NODES, _RIGHT_HIP, _LEFT_HIP,
        ("left_elbow", "left_shoulder1", "left_shoulder2"),
        ("right_elbow", "right_shoulder1", "right_shoulder2"),
        ("left_knee", *_LEFT_HIP), ("right_knee", *_RIGHT_HIP),
        ("left_shoulder1", "left_shoulder2", *_ABDOMEN_NODES),
        ("right_shoulder1", "right_shoulder2", *_ABDOMEN_NODES),
        (*_ABDOMEN_NODES, *_LEFT_HIP), (*_ABDOMEN_NODES, *_RIGHT_HIP),
    ),
    global_nodes=(Node("root", (2, 3, 4, 5, 6), (0, 1, 2, 3, 4, 5)),),
    partitions={
        "9|8": (
            (*_ABDOMEN_NODES, "right_shoulder1", "right_shoulder2", "right_elbow",
             "left_shoulder1", "left_shoulder2", "left_elbow"),
            (*_RIGHT_HIP, "right_knee", *_LEFT_HIP, "left_knee"),
        ),
    },
    local_categories=(("qpos", "qvel", "cinert", "cvel", "qfrc_actuator", "cfrc_ext"), ("qpos",)),
)

SCENARIOS: dict[str, Scenario] = {
    "ant-modular": ANT,
    "halfcheetah-modular": HALF_CHEETAH,
    "hopper-modular": HOPPER,
    "walker2d-modular": WALKER2D,
    "humanoid-modular": HUMANOID,
}
"""Bundled body -> the MaMuJoCo scenario it reproduces. A body matches by its layout
(joints, actuators, bodies), whatever its file or name."""

BODY_CATEGORIES = {"cinert": 10, "cvel": 6, "cfrc_ext": 6}
"""Categories read per body, and their width."""
