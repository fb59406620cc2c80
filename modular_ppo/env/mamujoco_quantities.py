"""MuJoCo's xipos / ximat, cinert and qfrc_actuator, computed from fields every simulator
state carries.

MaMuJoCo's Humanoid observes `cinert` and `qfrc_actuator` (MABrax's its bodies' inertial
frames). The MJX and C-simulator states of
a ModularEnv carry xpos, xmat, subtree_com and ctrl (see `Simulator`), not these, so they
are computed here the way MuJoCo does (mj_comPos; mj_fwdActuation for plain motors), at
the state's own instant.
"""

from __future__ import annotations

import jax.numpy as jnp
import mujoco
import numpy as np
from jaxtyping import Array, Float

from modular_ppo.body import BodyGraph
from modular_ppo.env.errors import EnvError


_INERTIA_ROWS, _INERTIA_COLUMNS = np.array([0, 1, 2, 0, 0, 1]), np.array([0, 1, 2, 1, 2, 2])
"""cinert's order of the inertia matrix's entries: xx, yy, zz, xy, xz, yz."""


class InertialFrames:
    """MuJoCo's `xipos` and `ximat` of every body: its inertial frame (center of mass and
    principal axes) in the world, from its body frame and the model's constant offset of
    the one in the other (`body_ipos`, `body_iquat`), as mj_kinematics computes them."""

    def __init__(self, model: mujoco.MjModel):
        self._ipos = np.asarray(model.body_ipos, np.float32)
        rotations = np.zeros((model.nbody, 9))
        for b in range(model.nbody):
            mujoco.mju_quat2Mat(rotations[b], model.body_iquat[b])
        self._irot = rotations.reshape(model.nbody, 3, 3).astype(np.float32)

    def __call__(
        self, xpos: Float[Array, "nbody 3"], xmat: Float[Array, "nbody 3 3"],
    ) -> tuple[Float[Array, "nbody 3"], Float[Array, "nbody 3 3"]]:
        return xpos + jnp.einsum("bij,bj->bi", xmat, self._ipos), xmat @ self._irot


class ComInertia:
    """MuJoCo's `cinert` of every body: its inertia about the center of mass of its
    kinematic tree, in the world frame, as [Ixx, Iyy, Izz, Ixy, Ixz, Iyz, m*d, m] with d
    the offset of the body's center of mass from that point."""

    def __init__(self, model: mujoco.MjModel):
        self._frames = InertialFrames(model)
        self._inertia = np.asarray(model.body_inertia, np.float32)
        self._mass = np.asarray(model.body_mass, np.float32)
        self._tree_root = np.asarray(model.body_rootid, np.int32)

    def __call__(
        self, xpos: Float[Array, "nbody 3"], xmat: Float[Array, "nbody 3 3"],
        subtree_com: Float[Array, "nbody 3"],
    ) -> Float[Array, "nbody 10"]:
        com, rotation = self._frames(xpos, xmat)
        d = com - subtree_com[self._tree_root]
        m = self._mass
        rotated = jnp.einsum("bij,bj,bkj->bik", rotation, self._inertia, rotation)
        # the parallel-axis theorem: rotated + m * (|d|^2 I - d d^T)
        shifted = rotated + m[:, None, None] * (
            jnp.sum(d * d, axis=1)[:, None, None] * jnp.eye(3) - d[:, :, None] * d[:, None, :]
        )
        upper = shifted[:, _INERTIA_ROWS, _INERTIA_COLUMNS]
        return jnp.concatenate([upper, m[:, None] * d, m[:, None]], axis=1)


class MotorForces:
    """MuJoCo's `qfrc_actuator` of a body whose actuators are all plain motors on hinge or
    slide joints: qfrc[dof] = gear * clip(gain * clip(ctrl, ctrlrange), forcerange), the
    clips where the actuator is limited. It depends on ctrl alone."""

    def __init__(self, body: BodyGraph):
        model = body.model
        plain = (
            (model.actuator_trntype == mujoco.mjtTrn.mjTRN_JOINT)
            & (model.actuator_dyntype == mujoco.mjtDyn.mjDYN_NONE)
            & (model.actuator_gaintype == mujoco.mjtGain.mjGAIN_FIXED)
            & (model.actuator_biastype == mujoco.mjtBias.mjBIAS_NONE)
        )
        joints = model.actuator_trnid[:, 0]
        plain &= np.isin(model.jnt_type[joints], (mujoco.mjtJoint.mjJNT_HINGE,
                                                  mujoco.mjtJoint.mjJNT_SLIDE))
        plain &= ~model.jnt_actfrclimited[joints] & ~model.jnt_actgravcomp[joints].astype(bool)
        if not plain.all():
            names = [model.actuator(a).name or f"actuator{a}" for a in np.flatnonzero(~plain)]
            raise EnvError(
                f"{body.source}: MaMuJoCo's qfrc_actuator is computed here for plain motors "
                f"on hinge or slide joints only; actuator(s) {', '.join(names)} are not. "
                "Use observation \"modular\" for this body."
            )
        self._nv = model.nv
        self._dof = np.asarray(model.jnt_dofadr[joints], np.int32)
        self._gear = np.asarray(model.actuator_gear[:, 0], np.float32)
        self._gain = np.asarray(model.actuator_gainprm[:, 0], np.float32)
        self._ctrl_range = _limits(model.actuator_ctrllimited, model.actuator_ctrlrange)
        self._force_range = _limits(model.actuator_forcelimited, model.actuator_forcerange)

    def __call__(self, ctrl: Float[Array, "nu"]) -> Float[Array, "nv"]:
        ctrl = jnp.clip(ctrl, *self._ctrl_range)
        force = jnp.clip(self._gain * ctrl, *self._force_range)
        return jnp.zeros(self._nv, force.dtype).at[self._dof].add(self._gear * force)


def _limits(limited: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per actuator, infinite where it is not limited."""
    limited = np.asarray(limited, bool)
    low = np.where(limited, bounds[:, 0], -np.inf).astype(np.float32)
    high = np.where(limited, bounds[:, 1], np.inf).astype(np.float32)
    return low, high
