"""Every observed quantity of one state, computed once into a flat vector.

Observations are gathers from this vector with static index arrays (one per module), so
the per-step cost does not grow with the number of modules or hops. Frames:
- joints: qpos / qvel of every joint except the root body's own joints (free, or the
  slide / hinge chain of a planar body): the root's pose is a global feature instead.
- bodies: every jointed body except the root body: position relative to a frame body
  and rotation relative to it (first two columns of the relative rotation matrix, a
  continuous 6D representation), both in the frame body's frame; linear velocity (at the
  body's frame origin) and angular velocity, world velocities expressed in that frame.
  The frame body is the root body, or with `body_frame="parent"` each body's parent.
- contact forces: MuJoCo's cfrc_ext of every module body, clipped to [-1, 1] (Gymnasium).
- previous action: what each actuator's ctrl holds, mapped back to [-1, 1].
- root (global): height, rotation (6D, world frame), linear velocity at the root body's
  frame origin and angular velocity, both in the world frame.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float
from mujoco import mjx

from modular_ppo.body import BodyGraph
from modular_ppo.env.actions import ActionMap
from modular_ppo.env.config import EnvConfig
from modular_ppo.env.physics import contact_forces

FEATURE_WIDTHS = {
    "body_pos": 3,
    "body_rot6d": 6,
    "body_vel": 6,
    "contact_force": 6,
    "root_height": 1,
    "root_rot6d": 6,
    "root_linvel": 3,
    "root_angvel": 3,
}
"""Entries per element of the per-body and root features (joints vary by joint type)."""

OWN_FEATURES = (
    "joint_pos", "joint_vel", "body_pos", "body_rot6d", "body_vel", "contact_force",
    "prev_action",
)
GLOBAL_FEATURES = ("root_height", "root_rot6d", "root_linvel", "root_angvel")


class FeatureVector:
    """The flat feature vector of a state and where each feature of each element sits.

    `slots[(feature, element_id)]` are the flat indices of one element's feature: element
    ids are joint ids (joint_*), body ids (body_*, contact_force), actuator ids
    (prev_action), or -1 for the root features.
    """

    def __init__(self, body: BodyGraph, config: EnvConfig):
        model = body.model
        self._root = body.root_body_id
        self._body_rootid = np.asarray(model.body_rootid, np.int32)
        agent_joints = np.concatenate([m.joint_ids for m in body.modules.values()])
        self.joint_ids = np.sort(agent_joints[model.jnt_bodyid[agent_joints] != self._root])
        self._qpos_adr = [_joint_addresses(model, j, qpos=True) for j in self.joint_ids]
        self._qvel_adr = [_joint_addresses(model, j, qpos=False) for j in self.joint_ids]
        agent_bodies = np.sort(np.concatenate([m.body_ids for m in body.modules.values()]))
        jointed = np.isin(agent_bodies, model.jnt_bodyid) & (agent_bodies != self._root)
        self.body_ids = agent_bodies[jointed] if config.body_features else agent_bodies[:0]
        self._parent_ids = (np.asarray(model.body_parentid, np.int32)[self.body_ids]
                            if config.body_frame == "parent" else None)
        """The body whose frame each of body_ids' features is taken in; None: the root's."""
        self.contact_body_ids = agent_bodies if config.contact_forces else agent_bodies[:0]
        self.actuator_ids = np.arange(model.nu) if config.previous_action else np.arange(0)
        self.global_features = config.global_features
        self._actions = ActionMap(body)

        self.slots: dict[tuple[str, int], np.ndarray] = {}
        self.size = 0
        self._add("joint_pos", self.joint_ids, [a.size for a in self._qpos_adr])
        self._add("joint_vel", self.joint_ids, [a.size for a in self._qvel_adr])
        for feature in ("body_pos", "body_rot6d", "body_vel"):
            self._add(feature, self.body_ids, [FEATURE_WIDTHS[feature]] * self.body_ids.size)
        self._add("contact_force", self.contact_body_ids, [6] * self.contact_body_ids.size)
        self._add("prev_action", self.actuator_ids, [1] * self.actuator_ids.size)
        if self.global_features:
            for feature in GLOBAL_FEATURES:
                self._add(feature, np.array([-1]), [FEATURE_WIDTHS[feature]])
        self._qpos_gather = np.concatenate([np.zeros(0, np.int32), *self._qpos_adr])
        self._qvel_gather = np.concatenate([np.zeros(0, np.int32), *self._qvel_adr])

    def _add(self, feature: str, elements: np.ndarray, widths: list[int]) -> None:
        for element, width in zip(elements.tolist(), widths):
            self.slots[(feature, element)] = np.arange(self.size, self.size + width)
            self.size += width

    def __call__(self, data: mjx.Data) -> Float[Array, "features"]:
        """All enabled features of one state, in slot order."""
        root_pos, root_rot = data.xpos[self._root], data.xmat[self._root]
        parts = [data.qpos[self._qpos_gather], data.qvel[self._qvel_gather]]
        if self.body_ids.size:
            b = self.body_ids
            linvel, angvel = _velocity_at_frame(data, b, self._body_rootid[b])
            if self._parent_ids is None:  # one frame for all: a plain product
                origin = root_pos
                rotation = jnp.einsum("ji,bjk->bik", root_rot, data.xmat[b])

                def in_frame(vectors: Float[Array, "n 3"]) -> Float[Array, "n 3"]:
                    return vectors @ root_rot
            else:
                origin, frame_rot = data.xpos[self._parent_ids], data.xmat[self._parent_ids]
                rotation = jnp.einsum("bji,bjk->bik", frame_rot, data.xmat[b])

                def in_frame(vectors: Float[Array, "n 3"]) -> Float[Array, "n 3"]:
                    return jnp.einsum("bj,bjk->bk", vectors, frame_rot)

            parts += [
                in_frame(data.xpos[b] - origin).ravel(),
                rotation[:, :, :2].reshape(b.size, 6).ravel(),
                jnp.concatenate([in_frame(linvel), in_frame(angvel)], axis=1).ravel(),
            ]
        if self.contact_body_ids.size:
            forces = contact_forces(data)[self.contact_body_ids]
            parts.append(jnp.clip(forces, -1.0, 1.0).ravel())
        if self.actuator_ids.size:
            parts.append(self._actions.from_ctrl(data.ctrl))
        if self.global_features:
            root = np.array([self._root])
            linvel, angvel = _velocity_at_frame(data, root, self._body_rootid[root])
            parts += [root_pos[2:], root_rot[:, :2].ravel(), linvel[0], angvel[0]]
        return jnp.concatenate(parts).astype(jnp.float32)


def _joint_addresses(model, joint: int, qpos: bool) -> np.ndarray:
    sizes = {0: (7, 6), 1: (4, 3), 2: (1, 1), 3: (1, 1)}[int(model.jnt_type[joint])]
    start = model.jnt_qposadr[joint] if qpos else model.jnt_dofadr[joint]
    return np.arange(start, start + sizes[0 if qpos else 1], dtype=np.int32)


def _velocity_at_frame(
    data: mjx.Data, bodies: np.ndarray, tree_roots: np.ndarray
) -> tuple[Float[Array, "n 3"], Float[Array, "n 3"]]:
    """World linear velocity at each body's frame origin, and its angular velocity.

    MuJoCo's cvel is [angular, linear] with the linear part taken at the subtree com of
    the body's kinematic tree; moving the point to xpos adds angular x offset.
    """
    angvel, linvel = data.cvel[bodies, :3], data.cvel[bodies, 3:]
    offset = data.xpos[bodies] - data.subtree_com[tree_roots]
    return linvel + jnp.cross(angvel, offset), angvel
