"""centipede-N: N ant legs on a chain of N/2 torso segments, built with MjSpec.

Segment i is a torso sphere with a left and a right leg, each built like the ant's: a rigid
connector, a thigh on a vertical hip hinge and a shin on an ankle hinge with a foot sphere.
Torso 0 carries the free joint; torso i > 0 hangs behind torso i-1 on a yaw and a pitch
hinge, both motorized. Default partition: one module per torso and one per leg (torso_0 has
no motor: observation / value only). Named partitions "AxB", in the format of MaMuJoCo's
ManySegmentAnt (whose segments have no motorized torso hinges, so its agents are not these):
A modules of B consecutive segments each (torsos and legs), for every A*B = N/2, plus torso_0.
"""

from __future__ import annotations

import math

import mujoco

from modular_ppo.body.numerics import INIT_QPOS
from modular_ppo.body.spec_parts import add_floor, add_motor, add_numeric, add_task, annotate, new_spec

MIN_LEGS = 4
MAX_LEGS = 256
"""The most legs (128 segments, 385 modules): larger bodies take minutes to build and
compile; the cap is checked before anything is built."""

_PHYSICS = """
Physics for MJX speed, as the ant: Newton solver, 1 iteration, 4 line-search steps, timestep
0.01 s, 5 physics steps per control step (dt = 0.05 s). Only the foot spheres collide, and
only with the floor (sphere-plane, the cheapest pair in MJX): legs and torsos pass through
each other, which costs realism in tight turns but keeps the collision pass linear in the
number of legs. More solver iterations cost step time (BENCHMARKS.md, "Solver iterations
and the MJX step time").
"""

_SPACING = 0.6
_TORSO_RADIUS = 0.25
_LIMB_RADIUS = 0.08
_CONNECTOR, _THIGH, _SHIN = 0.28, 0.28, 0.56
_ANKLE_REST = 1.0
_START_HEIGHT = 0.6
_SIDES = {"left": 1.0, "right": -1.0}


CENTIPEDE_SIZES = (
    f"a centipede has an even number of legs, at least {MIN_LEGS} (two per torso segment) and "
    f"at most {MAX_LEGS}. Use centipede-N with N in 4, 6, 8, ..., {MAX_LEGS}."
)
"""The sizes a centipede has, as its error for any other says them."""


def is_centipede_size(n_legs: int) -> bool:
    """Whether a centipede can have `n_legs` legs: an even number from 4 to MAX_LEGS."""
    return MIN_LEGS <= n_legs <= MAX_LEGS and n_legs % 2 == 0


def centipede_spec(n_legs: int) -> mujoco.MjSpec:
    """The centipede with `n_legs` legs (an even number >= 4)."""
    n_segments = n_legs // 2
    spec = new_spec(f"centipede-{n_legs}", _PHYSICS, timestep=0.01, iterations=1)
    spec.default.joint.armature = 1
    spec.default.joint.damping = [1, 0, 0]  # linear damping; higher polynomial terms off
    spec.default.geom.contype = 0
    spec.default.geom.conaffinity = 0
    spec.default.geom.density = 5.0
    spec.default.geom.friction = [1, 0.5, 0.5]
    add_floor(spec, collides=True)
    torso = spec.worldbody.add_body(name="torso_0", pos=[0, 0, _START_HEIGHT])
    torso.add_freejoint(name="root")
    torso.add_camera(
        name="track",
        mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
        pos=[0, -3 - n_segments * _SPACING, 0.3],
        xyaxes=[1, 0, 0, 0, 0, 1],
    )
    _add_segment(spec, torso, 0)
    for i in range(1, n_segments):
        torso = torso.add_body(name=f"torso_{i}", pos=[-_SPACING, 0, 0])
        torso.add_geom(
            type=mujoco.mjtGeom.mjGEOM_CAPSULE,
            size=[_LIMB_RADIUS, 0, 0],
            fromto=[0, 0, 0, _SPACING, 0, 0],
        )
        _add_hinge(spec, torso, f"body_yaw_{i}", [0, 0, 1], math.radians(40))
        _add_hinge(spec, torso, f"body_pitch_{i}", [0, 1, 0], math.radians(20))
        _add_segment(spec, torso, i)
    annotate(spec, _default_partition(n_segments), _segment_partitions(n_segments))
    add_task(
        spec,
        task_reference="the ant's (Brax ant = Gymnasium Ant-v5 without its contact cost), "
                       "velocity of the front torso segment",
        frame_skip=5, forward_reward_weight=1.0, velocity_source="root",
        healthy_reward=1.0, healthy_reward_on="every_step", ctrl_cost_weight=0.5,
        ctrl_cost_on="action", contact_force_range=[-1.0, 1.0], healthy_z=[0.2, 1.0],
        healthy_bounds="inclusive",
        reset_noise_scale=0.1, reset_qvel_noise="normal",
    )
    add_numeric(spec, INIT_QPOS, _init_qpos(spec))
    return spec


def _add_segment(spec: mujoco.MjSpec, torso: mujoco.MjsBody, i: int) -> None:
    torso.add_geom(
        name=f"torso_{i}_geom", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[_TORSO_RADIUS, 0, 0]
    )
    for side, y in _SIDES.items():
        leg = torso.add_body(name=f"leg_{i}_{side}")
        leg.add_geom(
            type=mujoco.mjtGeom.mjGEOM_CAPSULE,
            size=[_LIMB_RADIUS, 0, 0],
            fromto=[0, 0, 0, 0, y * _CONNECTOR, 0],
        )
        thigh = leg.add_body(name=f"thigh_{i}_{side}", pos=[0, y * _CONNECTOR, 0])
        thigh.add_geom(
            type=mujoco.mjtGeom.mjGEOM_CAPSULE,
            size=[_LIMB_RADIUS, 0, 0],
            fromto=[0, 0, 0, 0, y * _THIGH, 0],
        )
        _add_hinge(spec, thigh, f"hip_{i}_{side}", [0, 0, 1], math.radians(30))
        shin = thigh.add_body(name=f"shin_{i}_{side}", pos=[0, y * _THIGH, 0])
        shin.add_geom(
            type=mujoco.mjtGeom.mjGEOM_CAPSULE,
            size=[_LIMB_RADIUS, 0, 0],
            fromto=[0, 0, 0, 0, y * _SHIN, 0],
        )
        shin.add_geom(
            name=f"foot_{i}_{side}",
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[_LIMB_RADIUS, 0, 0],
            pos=[0, y * _SHIN, 0],
            mass=0,
            contype=1,
        )
        # The axis (-y, 0, 0) turns the shin downwards for positive angles on both sides.
        _add_hinge(
            spec, shin, f"ankle_{i}_{side}", [-y, 0, 0], (math.radians(30), math.radians(70))
        )


def _add_hinge(
    spec: mujoco.MjSpec,
    body: mujoco.MjsBody,
    name: str,
    axis: list[float],
    limit: float | tuple[float, float],
) -> None:
    low, high = (-limit, limit) if isinstance(limit, float) else limit
    body.add_joint(
        name=name,
        type=mujoco.mjtJoint.mjJNT_HINGE,
        axis=axis,
        range=[low, high],
        limited=mujoco.mjtLimited.mjLIMITED_TRUE,
    )
    add_motor(spec, name, gear=150)


def _default_partition(n_segments: int) -> dict[str, list[str]]:
    modules = {}
    for i in range(n_segments):
        modules[f"torso_{i}"] = [f"torso_{i}"]
        for side in _SIDES:
            modules[f"leg_{i}_{side}"] = [f"leg_{i}_{side}"]
    return modules


def _segment_partitions(n_segments: int) -> dict[str, dict[str, list[str]]]:
    """ "AxB" -> torso_0 alone, then A groups of B consecutive segments (torso_0's legs go
    to the first group)."""
    partitions = {}
    for per_group in range(1, n_segments + 1):
        if n_segments % per_group:
            continue
        groups = n_segments // per_group
        modules = {"torso_0": ["torso_0"]}
        for g in range(groups):
            first = g * per_group
            heads = ["leg_0_left", "leg_0_right"] if first == 0 else [f"torso_{first}"]
            if first == 0 and per_group > 1:
                heads.append("torso_1")
            modules[f"part_{g}"] = heads
        partitions[f"{groups}x{per_group}"] = modules
    return partitions


def _init_qpos(spec: mujoco.MjSpec) -> list[float]:
    """qpos0 with every ankle bent down to its rest angle (qpos0 = 0 is outside its range)."""
    model = spec.compile()
    qpos = model.qpos0.copy()
    for j in range(model.njnt):
        if model.joint(j).name.startswith("ankle_"):
            qpos[model.jnt_qposadr[j]] = _ANKLE_REST
    return qpos.tolist()
