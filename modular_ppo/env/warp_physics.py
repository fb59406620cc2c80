"""The `--backend warp` simulator: MJX's MuJoCo Warp implementation (NVIDIA GPUs).

`mjx.put_model(..., impl="warp")` runs MuJoCo Warp kernels behind the same `mjx.step`;
it needs the warp-lang package (`pip install 'mujoco-mjx[warp]'`, this repository's
`warp` extra) and a CUDA GPU (`warp_unavailable_reason` says which is missing).

Batched as MJX's own warp tests do: a data template whose contact buffer serves every
environment (MuJoCo Warp keeps the contacts of all worlds in one buffer of `naconmax`),
starts computed by `mjx.forward` on it, and a finished episode's fresh start merged into
the running state with `Data.where`, which selects the per-environment fields and keeps
the shared buffers. `mjx.step` leaves the kinematics of the state before its last
substep, and MJX computes the rest (`com_vel`) for its JAX implementation only, so each
control step ends with a full `mjx.forward` of the new state.
"""

from __future__ import annotations

import jax
from jaxtyping import Array, Bool, Float
from mujoco import mjx
from mujoco.mjx import warp as mjx_warp

from modular_ppo.body import BodyGraph

WORLDS = 16_384
"""The most environments one env may be stepped with at once (vmapped)."""
CONTACTS_PER_WORLD = 64
"""Contact slots per environment in the shared buffer (`naconmax`)."""


def warp_unavailable_reason() -> str | None:
    """What this machine lacks for MuJoCo Warp, with how to get it; None if nothing."""
    if not mjx_warp.WARP_INSTALLED:
        return ("MuJoCo Warp is not installed (MJX's warp implementation needs the "
                "warp-lang package): pip install 'mujoco-mjx[warp]', or this repository's "
                "extra, pip install -e '.[warp]'")
    try:
        jax.devices("cuda")
    except RuntimeError:
        platforms = sorted({device.platform for device in jax.devices()})
        return ("MuJoCo Warp runs on NVIDIA GPUs and JAX sees none here (its devices: "
                f"{', '.join(platforms)}). On a machine with one, install JAX for CUDA "
                "(pip install 'jax[cuda12]'); here use --backend mjx or cpu")
    return None


def put_warp_model(body: BodyGraph, worlds: int) -> tuple[mjx.Model, mjx.Data]:
    """The body's MuJoCo Warp model on the device, and a data template for up to `worlds`
    environments stepped at once (vmapped)."""
    device = jax.local_devices()[0]
    model = mjx.put_model(body.model, device=device, impl="warp")
    # The bundled bodies run one solver iteration on purpose (MJX speed); MuJoCo Warp
    # would print that the iteration limit was reached at every step.
    quiet = model.opt._impl.warn_overflow & ~int(mjx_warp.mjwp_types.OverflowType.ITERATIONS)
    model = model.tree_replace({"opt._impl.warn_overflow": quiet})
    return model, mjx.make_data(body.model, device=device, impl="warp",
                                naconmax=worlds * CONTACTS_PER_WORLD)


class WarpPhysics:
    """The `Simulator` on MuJoCo Warp: starts and steps one environment's `mjx.Data`
    (callers vmap, over at most `WORLDS` environments)."""

    def __init__(self, body: BodyGraph):
        self.model, self._blank = put_warp_model(body, WORLDS)
        self.frame_skip = body.frame_skip
        self.dt = float(body.model.opt.timestep) * self.frame_skip
        """Seconds per control step."""

    def start(self, qpos: Float[Array, "nq"], qvel: Float[Array, "nv"]) -> mjx.Data:
        return mjx.forward(self.model, self._blank.replace(qpos=qpos, qvel=qvel))

    def restart_where(
        self, done: Bool[Array, ""], data: mjx.Data, qpos: Float[Array, "nq"],
        qvel: Float[Array, "nv"],
    ) -> mjx.Data:
        return data.where(done, self.start(qpos, qvel))

    def step(self, data: mjx.Data, ctrl: Float[Array, "nu"]) -> mjx.Data:
        """`frame_skip` physics steps holding `ctrl`, then a forward pass of the new state."""
        data = jax.lax.fori_loop(
            0, self.frame_skip, lambda _, d: mjx.step(self.model, d), data.replace(ctrl=ctrl)
        )
        return mjx.forward(self.model, data)
