"""swimmer-N: Gymnasium's swimmer lengthened to N capsule segments, built with MjSpec.

Segment 0 carries the planar root joints (slide x, slide y, hinge z) and no motor; each
further segment hangs from the previous one by a motorized hinge. Default partition: one
module per segment. Named partitions "AxB" (MaMuJoCo's many-agent swimmer): A modules of
B consecutive motorized segments each, for every A*B = N-1, plus segment_0.
"""

from __future__ import annotations

import mujoco

from modular_ppo.body.spec_parts import add_floor, add_motor, add_task, annotate, new_spec

MIN_SEGMENTS = 2
MAX_SEGMENTS = 256
"""The most segments: larger bodies take minutes to build and compile; the cap is checked
before anything is built."""

_PHYSICS = """
Physics for MJX speed: Newton solver, 1 iteration, 4 line-search steps, timestep 0.01 s and
4 physics steps per control step (dt = 0.04 s, as Gymnasium's swimmer). There are no
contacts at all (every geom has contype 0): the swimmer moves through viscous fluid
(density 4000, viscosity 0.1, MJX's inertia-box model), and the only constraints are the
joint limits (+-100 degrees), rarely reached, so one Newton iteration is plenty.
"""

_LENGTH, _RADIUS = 1.0, 0.1
_JOINT_RANGE = 100 * 3.141592653589793 / 180


SWIMMER_SIZES = (
    f"a swimmer needs at least {MIN_SEGMENTS} segments (one motorized joint) and has at most "
    f"{MAX_SEGMENTS}. Use swimmer-N with N from {MIN_SEGMENTS} to {MAX_SEGMENTS}, e.g. swimmer-4."
)
"""The sizes a swimmer has, as its error for any other says them."""


def is_swimmer_size(n_segments: int) -> bool:
    """Whether a swimmer can have `n_segments` segments: from 2 to MAX_SEGMENTS."""
    return MIN_SEGMENTS <= n_segments <= MAX_SEGMENTS


def swimmer_spec(n_segments: int) -> mujoco.MjSpec:
    """The swimmer with `n_segments` segments (N-1 motors)."""
    spec = new_spec(f"swimmer-{n_segments}", _PHYSICS, timestep=0.01, iterations=1)
    spec.option.density = 4000
    spec.option.viscosity = 0.1
    spec.default.joint.armature = 0.1
    add_floor(spec, collides=False, z=-0.1)
    head = spec.worldbody.add_body(name="segment_0")
    _add_capsule(head, [_LENGTH / 2, 0, 0, -_LENGTH / 2, 0, 0])
    head.add_joint(name="root_x", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[1, 0, 0])
    head.add_joint(name="root_y", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 1, 0])
    head.add_joint(name="root_rot", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1])
    head.add_camera(
        name="track",
        mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
        pos=[0, -3, 3],
        xyaxes=[1, 0, 0, 0, 1, 1],
    )
    parent, offset = head, -_LENGTH / 2
    for i in range(1, n_segments):
        segment = parent.add_body(name=f"segment_{i}", pos=[offset, 0, 0])
        _add_capsule(segment, [0, 0, 0, -_LENGTH, 0, 0])
        segment.add_joint(
            name=f"joint_{i}",
            type=mujoco.mjtJoint.mjJNT_HINGE,
            axis=[0, 0, 1],
            range=[-_JOINT_RANGE, _JOINT_RANGE],
            limited=mujoco.mjtLimited.mjLIMITED_TRUE,
        )
        add_motor(spec, f"joint_{i}", gear=150)
        parent, offset = segment, -_LENGTH
    segments = [f"segment_{i}" for i in range(n_segments)]
    annotate(spec, {s: [s] for s in segments}, _chain_partitions(segments))
    add_task(
        spec,
        task_reference="Gymnasium Swimmer-v5 (its task on a swimmer of any length)",
        frame_skip=4, forward_reward_weight=1.0, velocity_source="root", healthy_reward=0.0,
        ctrl_cost_weight=1e-4, ctrl_cost_on="action", terminate_when_unhealthy=0,
        reset_noise_scale=0.1, reset_qvel_noise="uniform",
    )
    return spec


def _add_capsule(body: mujoco.MjsBody, fromto: list[float]) -> None:
    body.add_geom(
        type=mujoco.mjtGeom.mjGEOM_CAPSULE,
        fromto=fromto,
        size=[_RADIUS, 0, 0],
        density=1000,
        contype=0,
        conaffinity=0,
        rgba=[0.8, 0.6, 0.4, 1],
    )


def _chain_partitions(segments: list[str]) -> dict[str, dict[str, list[str]]]:
    """ "AxB" -> segment_0 alone, then A groups of B consecutive motorized segments."""
    motorized = segments[1:]
    partitions = {}
    for per_group in range(1, len(motorized) + 1):
        if len(motorized) % per_group == 0:
            groups = len(motorized) // per_group
            modules = {segments[0]: [segments[0]]}
            for g in range(groups):
                modules[f"part_{g}"] = motorized[g * per_group : (g + 1) * per_group]
            partitions[f"{groups}x{per_group}"] = modules
    return partitions
