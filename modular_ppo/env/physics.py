"""The MJX side of a ModularEnv: the device model, fresh starts and the frame-skip step."""

from __future__ import annotations

from typing import Any, Protocol

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float
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
    device = jax.local_devices()[0]  # not jax.devices()[0]: another process's, in a run of several
    try:
        model = mjx.put_model(body.model, device=device, impl="jax")
        return model, mjx.make_data(model, device=device)
    except NotImplementedError as e:
        raise UnsupportedModelError(
            f"{body.source}: MJX cannot simulate this model ({e}). {_unsupported_hint(str(e))}"
        ) from None


class Simulator(Protocol):
    """What ModularEnv needs of a simulator. Its data must carry the `mjx.Data` fields
    observations and tasks read: qpos, qvel, ctrl, xpos, xmat, subtree_com, cvel (and
    cfrc_ext where contact forces are used), all of one instant: the state they describe."""

    dt: float
    """Seconds per control step."""

    def start(self, qpos: Float[Array, "nq"], qvel: Float[Array, "nv"]) -> Any:
        """A fresh state at (qpos, qvel): zero time, controls, activations, warm start."""
        ...

    def restart_where(
        self, done: Bool[Array, ""], data: Any, qpos: Float[Array, "nq"], qvel: Float[Array, "nv"]
    ) -> Any:
        """`start(qpos, qvel)` where `done`, else `data` unchanged."""
        ...

    def step(self, data: Any, ctrl: Float[Array, "nu"]) -> Any:
        """`frame_skip` physics steps holding `ctrl`; derived fields of the new state."""
        ...


class StartsEverywhere:
    """`Simulator.restart_where` from the simulator's own `start`: a fresh start made for
    every environment and kept where it is done (under vmap, selection is all there is)."""

    def restart_where(
        self, done: Bool[Array, ""], data: Any, qpos: Float[Array, "nq"],
        qvel: Float[Array, "nv"],
    ) -> Any:
        return jax.tree.map(lambda a, b: jnp.where(done, a, b), self.start(qpos, qvel), data)


class Physics(StartsEverywhere):
    """The MJX `Simulator`: starts and steps one environment's `mjx.Data` (callers vmap)."""

    def __init__(self, body: BodyGraph, contact_forces: bool):
        self.model, self._blank = put_model(body)
        self.frame_skip = body.frame_skip
        self.dt = float(body.model.opt.timestep) * self.frame_skip
        """Seconds per control step."""
        self.contact_forces = contact_forces
        """Whether states carry cfrc_ext (external contact forces per body)."""

    def start(self, qpos: Float[Array, "nq"], qvel: Float[Array, "nv"]) -> mjx.Data:
        """Only the kinematics observations and rewards read are computed (unless contact
        forces are observed): mjx.step recomputes everything else from qpos / qvel and
        leaves qacc_warmstart as a full mjx.forward would (zero), so the episode is the
        same while a start costs a fraction of a step."""
        return self.derived(self._blank.replace(qpos=qpos, qvel=qvel))

    def blank_with(self, **fields: Array) -> mjx.Data:
        """The model's blank data (`mjx.make_data`) with these fields set."""
        return self._blank.replace(**fields)

    def step(self, data: mjx.Data, ctrl: Float[Array, "nu"]) -> mjx.Data:
        """`frame_skip` physics steps holding `ctrl`, then the kinematics of the new state
        (mjx.step leaves those of the state before its last substep)."""
        data = jax.lax.fori_loop(
            0, self.frame_skip, lambda _, d: mjx.step(self.model, d), data.replace(ctrl=ctrl)
        )
        return self.derived(data)

    def derived(self, data: mjx.Data) -> mjx.Data:
        """`data` with the fields observations and rewards read computed from its qpos and
        qvel (and cfrc_ext, with a full forward pass, where contact forces are observed)."""
        if self.contact_forces:
            # cfrc_ext needs the solved contacts of this state: a full forward pass.
            return mjx.rne_postconstraint(self.model, mjx.forward(self.model, data))
        data = mjx.com_pos(self.model, mjx.kinematics(self.model, data))
        return mjx.com_vel(self.model, data)


def contact_forces(data: mjx.Data) -> Float[Array, "nbody 6"]:
    """External contact wrench per body, [torque, force] at the body's subtree com."""
    impl = getattr(data, "_impl", None)
    return jnp.asarray(impl.cfrc_ext if impl is not None else data.cfrc_ext)
