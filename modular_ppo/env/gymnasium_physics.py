"""A `Simulator` that steps MuJoCo's C simulator exactly as Gymnasium's v5 MuJoCo envs do.

Gymnasium's `MujocoEnv.do_simulation` writes ctrl, calls `mj_step(model, data,
nstep=frame_skip)` and then `mj_rnePostConstraint`; `set_state` (its reset) writes qpos
and qvel and calls `mj_forward`. After `mj_step` the positions qpos and velocities qvel are
the new state's, while the quantities MuJoCo derives from them (xpos, xmat, cvel,
subtree_com, cfrc_ext) are still those of the start of the last substep: Gymnasium's
rewards and MaMuJoCo's observations read them so. `GymnasiumPhysics` hands them back as
they stand, where `CpuPhysics` (the CPU backend) recomputes them at the new state; with it,
a ModularEnv observes and rewards what Gymnasium and MaMuJoCo do on the same state
(tests/interop/test_interop_mamujoco.py).

One MjData per environment, stepped in Python (a `jax.pure_callback`, sequential under
vmap): for the PettingZoo / Gymnasium views of one env, not for training batches. The
state lives in JAX as `CpuData` (float32), so the C simulator runs in float64 within one
control step and from a float32 state at the next.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from jaxtyping import Array, Float

from modular_ppo.body import BodyGraph
from modular_ppo.env.cpu_simulator import DERIVED_FIELDS, STATE_FIELDS, CpuData
from modular_ppo.env.physics import StartsEverywhere


class GymnasiumPhysics(StartsEverywhere):
    """Starts and steps one environment's `CpuData` as Gymnasium's `MujocoEnv` does (see
    module docstring); `restart_where` starts every environment and selects."""

    def __init__(self, body: BodyGraph):
        self._model = body.model
        self._data = mujoco.MjData(self._model)
        self.frame_skip = body.frame_skip
        self.dt = float(body.model.opt.timestep) * self.frame_skip
        """Seconds per control step."""
        fields = STATE_FIELDS + DERIVED_FIELDS
        shapes = {name: np.shape(getattr(self._data, name)) for name in fields}
        shapes["xmat"] = (self._model.nbody, 3, 3)
        self._result = tuple(jax.ShapeDtypeStruct(shapes[name], jnp.float32) for name in fields)

    @property
    def model(self) -> mujoco.MjModel:
        """The MuJoCo model stepped (an `mujoco.MjModel`, not an `mjx.Model`)."""
        return self._model

    def start(self, qpos: Float[Array, "nq"], qvel: Float[Array, "nv"]) -> CpuData:
        """Gymnasium's reset: `mj_resetData`, then `set_state(qpos, qvel)` (mj_forward)."""
        return self._call(self._start_host, qpos, qvel)

    def step(self, data: CpuData, ctrl: Float[Array, "nu"]) -> CpuData:
        """Gymnasium's `do_simulation(ctrl, frame_skip)` from `data`."""
        state = {name: getattr(data, name) for name in STATE_FIELDS}
        return self._call(self._step_host, *{**state, "ctrl": ctrl}.values())

    def _call(self, function, *inputs: Array) -> CpuData:
        outputs = jax.pure_callback(
            function, self._result, *(jnp.asarray(x, jnp.float32) for x in inputs),
            vmap_method="sequential",
        )
        return CpuData(**dict(zip(STATE_FIELDS + DERIVED_FIELDS, outputs)))

    def _start_host(self, qpos: np.ndarray, qvel: np.ndarray) -> tuple[np.ndarray, ...]:
        mujoco.mj_resetData(self._model, self._data)
        self._data.qpos[:], self._data.qvel[:] = qpos, qvel
        mujoco.mj_forward(self._model, self._data)
        return self._read()

    def _step_host(self, *state: np.ndarray) -> tuple[np.ndarray, ...]:
        for name, value in zip(STATE_FIELDS, state):
            if name == "time":
                self._data.time = float(value)
            else:
                getattr(self._data, name)[...] = value
        mujoco.mj_step(self._model, self._data, nstep=self.frame_skip)
        mujoco.mj_rnePostConstraint(self._model, self._data)
        return self._read()

    def _read(self) -> tuple[np.ndarray, ...]:
        return tuple(
            np.asarray(getattr(self._data, name), np.float32).reshape(spec.shape)
            for name, spec in zip(STATE_FIELDS + DERIVED_FIELDS, self._result)
        )
