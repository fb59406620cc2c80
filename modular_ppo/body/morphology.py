"""Morphology features: what a module knows about its place in the body and its build.

`morphology_features(body)` gives every module one vector of `MORPHOLOGY_WIDTH` static
numbers read from the compiled MJCF, the same width for every body, so networks that
append them to module tokens (`NetworkConfig.morphology`) keep their weights across
bodies. Scales are fixed constants, never a body's own totals (except `relative_hops`),
so the same leg of centipede-4 and centipede-8, or the walker's right leg with and without
its left foot, has the same features. Counts are log(1 + count); lengths are in meters;
geometry is read at the rest pose (`BodyGraph.init_qpos`) in the **root frame**: the frame
of the root module's top body at rest (the frame the observations' body features use), so
a body placed or turned differently in the world has the same features.

Entries, in order (`MORPHOLOGY_NAMES` names each):

Position in the module tree (hops along `BodyGraph.modules` parents; the module-to-module
hop matrix itself is `BodyGraph.hop_distance`):
 0 hops_to_root     log(1 + hops from the module up to the root module of its tree)
 1 body_depth       log(1 + MuJoCo bodies above the module's top body, the world not counted)
 2 relative_hops    hops_to_root / the largest hops_to_root in the body (0 for one module)
 3 children         log(1 + child modules)
 4 subtree          log(1 + modules in the module's subtree, itself included)
 5 height           log(1 + hops from the module down to its deepest descendant module)
Build:
 6 bodies           log(1 + MuJoCo bodies of the module)
 7 joints           log(1 + its joints, not counting the root body's own: a free joint or
                    a planar body's slides and hinge place the body in the world)
 8 actuators        log(1 + its actuators, of any transmission)
 9-11 position      its top body's origin relative to the root body's, root frame, m
12 mass             log(1 + mass of its bodies in kg)
13 limb_length      summed full length of its capsules and cylinders (fromto length), m
14 limb_radius      largest radius of its capsules, cylinders and spheres, m
15 reach            largest distance from its top body's origin to a point of one of its
                    geoms' bounding spheres, m
Then JOINT_SLOTS slots of JOINT_WIDTH entries, one per joint of the module (the joints
counted in `joints`, in MuJoCo id order, so in the order the observations list them);
slots beyond the module's joints are zero, joints beyond the slots only counted:
 0 present          1
 1-4 type           one-hot free, ball, slide, hinge
 5-7 axis           unit axis in the root frame (hinge: rotation, slide: translation;
                    zero for free and ball joints)
 8 limited          1 if the joint has limits
 9-10 range         lower, upper limit: rad (hinge), m (slide), 0 and the largest angle in
                    rad (ball); 0, 0 without limits
11 gear             gear of the first actuator (lowest id) that drives this joint directly
                    (joint transmission), divided by GEAR_SCALE; 0 without one
12-13 ctrl range    that actuator's ctrlrange, the controls actions -1 and +1 map to
                    (-1, 1 without limits, as the env maps them); 0, 0 without one
"""

from __future__ import annotations

import math

import mujoco
import networkx as nx
import numpy as np
from jaxtyping import Float

from modular_ppo.body.graph import BodyGraph
from modular_ppo.body.modules import Module

JOINT_SLOTS = 4
"""Joints described one by one per module (the humanoid's legs have 4)."""
GEAR_SCALE = 100.0
"""Gears are divided by this (N m or N per unit of control): the bundled bodies' gears,
25 to 300, become 0.25 to 3."""

_MODULE_NAMES = (
    "hops_to_root", "body_depth", "relative_hops", "children", "subtree", "height",
    "bodies", "joints", "actuators", "position_x", "position_y", "position_z",
    "mass", "limb_length", "limb_radius", "reach",
)
_JOINT_NAMES = (
    "present", "free", "ball", "slide", "hinge", "axis_x", "axis_y", "axis_z",
    "limited", "range_low", "range_high", "gear", "ctrl_low", "ctrl_high",
)
JOINT_WIDTH = len(_JOINT_NAMES)
MORPHOLOGY_NAMES = _MODULE_NAMES + tuple(
    f"joint_{k}/{name}" for k in range(JOINT_SLOTS) for name in _JOINT_NAMES
)
"""The name of every entry of a module's morphology vector, in order."""
MORPHOLOGY_WIDTH = len(MORPHOLOGY_NAMES)

_JOINT_TRANSMISSIONS = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
_LIMBS = (int(mujoco.mjtGeom.mjGEOM_CAPSULE), int(mujoco.mjtGeom.mjGEOM_CYLINDER))
_ROUND = (*_LIMBS, int(mujoco.mjtGeom.mjGEOM_SPHERE))
_AXIAL = (int(mujoco.mjtJoint.mjJNT_SLIDE), int(mujoco.mjtJoint.mjJNT_HINGE))


def morphology_features(body: BodyGraph) -> dict[str, Float[np.ndarray, "width"]]:
    """Module name -> its MORPHOLOGY_WIDTH features (module docstring), float32, in module
    order."""
    model = body.model
    data = mujoco.MjData(model)
    data.qpos[:] = body.init_qpos
    mujoco.mj_kinematics(model, data)
    root = body.root_body_id
    to_root = data.xmat[root].reshape(3, 3).T  # world -> root frame
    hops = {name: _hops_to_root(body, name) for name in body.modules}
    deepest = max(hops.values())
    driver = _joint_drivers(model)
    features = {}
    for name, module in body.modules.items():
        top = int(body.bodies.nodes[module.root_body]["id"])
        joints = [int(j) for j in module.joint_ids if model.jnt_bodyid[j] != root]
        tree = [
            math.log1p(hops[name]),
            math.log1p(len(nx.ancestors(body.bodies, module.root_body))),
            hops[name] / deepest if deepest else 0.0,
            math.log1p(len(module.children)),
            math.log1p(_subtree_size(body, name)),
            math.log1p(_height(body, name)),
        ]
        build = [
            math.log1p(module.body_ids.size),
            math.log1p(len(joints)),
            math.log1p(module.n_actuators),
            *to_root @ (data.xpos[top] - data.xpos[root]),
            math.log1p(float(model.body_mass[module.body_ids].sum())),
            *_geometry(model, data, module, top),
        ]
        slots = np.zeros((JOINT_SLOTS, JOINT_WIDTH))
        for slot, joint in zip(slots, joints):
            slot[:] = _joint_entries(model, data, joint, to_root, driver.get(joint))
        features[name] = np.concatenate([tree, build, slots.ravel()]).astype(np.float32)
    return features


def _hops_to_root(body: BodyGraph, name: str) -> int:
    hops = 0
    while (name := body.modules[name].parent) is not None:
        hops += 1
    return hops


def _subtree_size(body: BodyGraph, name: str) -> int:
    return 1 + sum(_subtree_size(body, child) for child in body.modules[name].children)


def _height(body: BodyGraph, name: str) -> int:
    return max((1 + _height(body, child) for child in body.modules[name].children), default=0)


def _geometry(
    model: mujoco.MjModel, data: mujoco.MjData, module: Module, top: int
) -> list[float]:
    """limb_length, limb_radius, reach of the module's geoms."""
    geoms = np.flatnonzero(np.isin(model.geom_bodyid, module.body_ids))
    kinds = model.geom_type[geoms]
    limbs = geoms[np.isin(kinds, _LIMBS)]
    round_ = geoms[np.isin(kinds, _ROUND)]
    distance = np.linalg.norm(data.geom_xpos[geoms] - data.xpos[top], axis=1)
    return [
        float(2 * model.geom_size[limbs, 1].sum()),
        float(model.geom_size[round_, 0].max(initial=0.0)),
        float((distance + model.geom_rbound[geoms]).max(initial=0.0)),
    ]


def _joint_drivers(model: mujoco.MjModel) -> dict[int, int]:
    """Joint id -> the lowest id of the actuators driving it through a joint transmission."""
    drivers: dict[int, int] = {}
    for a in range(model.nu):
        if int(model.actuator_trntype[a]) in _JOINT_TRANSMISSIONS:
            drivers.setdefault(int(model.actuator_trnid[a, 0]), a)
    return drivers


def _joint_entries(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    joint: int,
    to_root: np.ndarray,
    actuator: int | None,
) -> list[float]:
    kind = int(model.jnt_type[joint])
    one_hot = np.eye(4)[kind]  # mjtJoint order: free, ball, slide, hinge
    axis = to_root @ data.xaxis[joint] if kind in _AXIAL else np.zeros(3)
    limited = bool(model.jnt_limited[joint])
    low, high = model.jnt_range[joint] if limited else (0.0, 0.0)
    if actuator is None:
        gear, ctrl = 0.0, (0.0, 0.0)
    else:
        gear = float(model.actuator_gear[actuator, 0]) / GEAR_SCALE
        ctrl = (tuple(model.actuator_ctrlrange[actuator])
                if model.actuator_ctrllimited[actuator] else (-1.0, 1.0))
    return [1.0, *one_hot, *axis, float(limited), low, high, gear, *ctrl]
