"""The MJX side of a ModularEnv: the device model, initial states and the frame-skip step."""

from __future__ import annotations

from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float, PRNGKeyArray
from mujoco import mjx

from modular_ppo.body import BodyGraph
from modular_ppo.env.errors import UnsupportedModelError


def _unsupported_hint(message: str) -> str:
    if "mjtSolver" in message:
        return 'MJX runs the Newton and CG solvers: set <option solver="Newton"/> in the MJCF.'
    if "collisions not implemented" in message:
        return (
            "Give one geom of that pair another type (sphere, capsule, box, plane or mesh), "
            "or stop the pair colliding (contype / conaffinity, or <contact><exclude>)."
        )
    return (
        "Change or remove that feature in the MJCF; MJX's supported features are listed at "
        "https://mujoco.readthedocs.io/en/stable/mjx.html#feature-parity."
    )


def put_model(body: BodyGraph) -> tuple[mjx.Model, mjx.Data]:
    """The body's model on the device, and a blank data to build states from.

    Raises UnsupportedModelError, naming the body file and what to change, where MJX
    refuses the model.
    """
    try:
        model = mjx.put_model(body.model, impl="jax")
        return model, mjx.make_data(model)
    except NotImplementedError as e:
        raise UnsupportedModelError(
            f"{body.source}: MJX cannot simulate this model ({e}). {_unsupported_hint(str(e))}"
        ) from None


class Simulator(Protocol):
    """What ModularEnv needs of a simulator. Its data must carry the `mjx.Data` fields
    observations and tasks read: qpos, qvel, ctrl, xpos, xmat, subtree_com, cvel (and
    cfrc_ext in `_impl` where contact forces are used)."""

    dt: float
    """Seconds per control step."""

    def initial_data(self, key: PRNGKeyArray, noise_scale: float) -> Any: ...

    def step(self, data: Any, ctrl: Float[Array, "nu"]) -> Any: ...


class Physics:
    """The MJX `Simulator`: resets and steps one environment's `mjx.Data` (callers vmap)."""

    def __init__(self, body: BodyGraph, contact_forces: bool):
        self.model, self._blank = put_model(body)
        self.frame_skip = body.frame_skip
        self.dt = float(body.model.opt.timestep) * self.frame_skip
        """Seconds per control step."""
        self.contact_forces = contact_forces
        """Whether states carry cfrc_ext (external contact forces per body)."""
        self._init_qpos = np.asarray(body.init_qpos, np.float32)

    def initial_data(self, key: PRNGKeyArray, noise_scale: float) -> mjx.Data:
        """qpos = body.init_qpos + U(-s, s), qvel = s * N(0, 1) (Brax / Gymnasium reset).

        Only the kinematics observations and rewards read (xpos, xmat, subtree_com, cvel)
        are computed, unless contact forces are observed: mjx.step recomputes everything
        else from qpos / qvel and leaves qacc_warmstart as a full mjx.forward would (zero),
        so the episode is the same while reset compiles in a fraction of the time.
        """
        qpos_key, qvel_key = jax.random.split(key)
        qpos = self._init_qpos + jax.random.uniform(
            qpos_key, self._init_qpos.shape, minval=-noise_scale, maxval=noise_scale
        )
        qvel = noise_scale * jax.random.normal(qvel_key, (self.model.nv,))
        data = self._blank.replace(qpos=qpos, qvel=qvel)
        if self.contact_forces:
            return self._with_contact_forces(mjx.forward(self.model, data))
        data = mjx.com_pos(self.model, mjx.kinematics(self.model, data))
        return mjx.com_vel(self.model, data)

    def step(self, data: mjx.Data, ctrl: Float[Array, "nu"]) -> mjx.Data:
        """`frame_skip` physics steps holding `ctrl`."""
        data = jax.lax.fori_loop(
            0, self.frame_skip, lambda _, d: mjx.step(self.model, d), data.replace(ctrl=ctrl)
        )
        return self._with_contact_forces(data)

    def _with_contact_forces(self, data: mjx.Data) -> mjx.Data:
        # mjx.step leaves cfrc_ext at zero; this pass fills it from the solved contacts.
        return mjx.rne_postconstraint(self.model, data) if self.contact_forces else data


def contact_forces(data: mjx.Data) -> Float[Array, "nbody 6"]:
    """External contact wrench per body, [torque, force] at the body's subtree com."""
    return jnp.asarray(data._impl.cfrc_ext)
