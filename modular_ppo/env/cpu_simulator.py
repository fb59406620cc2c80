"""MuJoCo's C simulator on a thread pool, called from jitted JAX code with a whole batch.

`CpuPhysics.step` is a `jax.pure_callback` with `vmap_method="broadcast_all"`: under
`vmap(env.step)` one host call receives every environment's state, writes it into a
`mujoco.batch.Batch` (persistent threads, the GIL released while they step), runs
`frame_skip` substeps of `mj_step` per environment and hands back the new state with the
kinematic quantities observations and rewards read. Those are the ones `mj_step` computes
at the start of its last substep, which is what `mjx.step` leaves in `mjx.Data` too.

The state lives in JAX (float32, like MJX) so env states stay pure pytrees: jit, vmap,
checkpoint and edit them as with the MJX env. The C simulator runs in float64 between
two control steps.
"""

from __future__ import annotations

import math
import threading

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import struct
from jaxtyping import Array, Float, PRNGKeyArray
from mujoco import batch as mujoco_batch

from modular_ppo.body import BodyGraph
from modular_ppo.env.errors import EnvError


@struct.dataclass
class CpuData:
    """One environment's simulator state, with the field names of `mjx.Data` that
    observations and tasks read (so the MJX env's observation and task code runs on it)."""

    time: Float[Array, ""]
    qpos: Float[Array, "nq"]
    qvel: Float[Array, "nv"]
    act: Float[Array, "na"]
    qacc_warmstart: Float[Array, "nv"]
    """The solver's starting point for the next step: with few solver iterations the
    trajectory depends on it, so it is carried like the rest of the state."""
    ctrl: Float[Array, "nu"]
    xpos: Float[Array, "nbody 3"]
    xmat: Float[Array, "nbody 3 3"]
    cvel: Float[Array, "nbody 6"]
    subtree_com: Float[Array, "nbody 3"]


STATE_FIELDS = ("time", "qpos", "qvel", "act", "qacc_warmstart", "ctrl")
"""Written into the C simulator before a call, read back after it."""
DERIVED_FIELDS = ("xpos", "xmat", "cvel", "subtree_com")
"""Computed by the C simulator, read back after a call."""

_UNCARRIED_STATE = (
    mujoco.mjtState.mjSTATE_HISTORY.value | mujoco.mjtState.mjSTATE_PLUGIN.value
    | mujoco.mjtState.mjSTATE_PLASTIC.value
)


def unsupported_reason(model: mujoco.MjModel) -> str | None:
    """Why the CPU backend cannot carry this model's state, or None if it can."""
    if mujoco.mj_stateSize(model, _UNCARRIED_STATE):
        return ("the model has actuator/sensor history, plugin or plasticity state, which "
                "the CPU backend does not carry between steps")
    return None


class ThreadedSimulator:
    """Steps batches of states of one model with `mujoco.batch.Batch`, from numpy arrays.

    One Batch (and thread pool) per distinct batch size, made on first use: a training
    run meets two or three sizes (training, evaluation, a single env).
    """

    def __init__(self, model: mujoco.MjModel, frame_skip: int, nthread: int):
        self.model = model
        self.frame_skip = frame_skip
        self.nthread = nthread
        self._batches: dict[int, mujoco_batch.Batch] = {}
        # A Batch must not be driven from two threads at once; XLA may run two
        # computations that call back concurrently.
        self._lock = threading.Lock()
        data = mujoco.MjData(model)
        self.shapes = {name: np.shape(getattr(data, name))
                       for name in STATE_FIELDS + DERIVED_FIELDS}
        """Field -> shape per environment (xmat as mjx.Data holds it: nbody x 3 x 3)."""
        self.shapes["xmat"] = (model.nbody, 3, 3)
        free, ball = int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)
        self._quaternions = [
            (int(model.jnt_qposadr[j]) + (3 if model.jnt_type[j] == free else 0), 4)
            for j in range(model.njnt) if model.jnt_type[j] in (free, ball)
        ]
        """(qpos address, 4) of every free or ball joint's quaternion."""

    def _batch(self, n: int) -> mujoco_batch.Batch:
        if n not in self._batches:
            batch = mujoco_batch.Batch(self.model, nsim=n, nthread=self.nthread)
            # State components not in STATE_FIELDS keep the model's defaults for good.
            batch.reset(stage=mujoco.mjtStage.mjSTAGE_NONE.value)
            for name in DERIVED_FIELDS:  # outputs are copied out only once bound
                batch.bind(name)
            self._batches[n] = batch
        return self._batches[n]

    def step(self, *state: np.ndarray) -> tuple[np.ndarray, ...]:
        """STATE_FIELDS arrays [..., *shape] -> STATE_FIELDS + DERIVED_FIELDS after
        frame_skip substeps, float32, same leading shape."""
        return self._call(state, lambda batch: batch.step(nstep=self.frame_skip))

    def forward(self, *state: np.ndarray) -> tuple[np.ndarray, ...]:
        """Like `step` without stepping: the kinematics and velocities of the given state,
        its quaternions normalised (as MJX's kinematics and MuJoCo's integrator leave them)."""
        state = list(state)
        qpos = np.array(state[STATE_FIELDS.index("qpos")], np.float64)
        for start, size in self._quaternions:
            quat = qpos[..., start:start + size]
            qpos[..., start:start + size] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
        state[STATE_FIELDS.index("qpos")] = qpos
        return self._call(
            state, lambda batch: batch.forward(stage=mujoco.mjtStage.mjSTAGE_VEL.value)
        )

    def _call(self, state, run) -> tuple[np.ndarray, ...]:
        lead = np.shape(state[STATE_FIELDS.index("qpos")])[:-1]
        n = math.prod(lead)
        with self._lock:
            batch = self._batch(n)
            for name, value in zip(STATE_FIELDS, state):
                batch.bind(name)[...] = np.reshape(value, (n, *self.shapes[name]))
            run(batch)
            return tuple(
                np.asarray(batch.bind(name), np.float32).reshape((*lead, *self.shapes[name]))
                for name in STATE_FIELDS + DERIVED_FIELDS
            )


class CpuPhysics:
    """The C-simulator `Simulator` of a ModularEnv: resets and steps one environment's
    `CpuData` (callers vmap), as the MJX `Physics` does an `mjx.Data`."""

    def __init__(self, body: BodyGraph, nthread: int = 0):
        reason = unsupported_reason(body.model)
        if reason:
            raise EnvError(f"{body.source}: {reason}. Use the MJX backend for this body.")
        self.frame_skip = body.frame_skip
        self.dt = float(body.model.opt.timestep) * self.frame_skip
        """Seconds per control step."""
        self.simulator = ThreadedSimulator(body.model, self.frame_skip, nthread)
        self._init_qpos = np.asarray(body.init_qpos, np.float32)
        self._nv = body.model.nv
        self._result_shapes = tuple(
            jax.ShapeDtypeStruct(self.simulator.shapes[name], jnp.float32)
            for name in STATE_FIELDS + DERIVED_FIELDS
        )

    @property
    def model(self):
        raise EnvError("this env runs on the CPU backend (MuJoCo's C simulator) and has no "
                       "mjx.Model; use env.body.model, or the MJX backend.")

    def initial_data(self, key: PRNGKeyArray, noise_scale: float) -> CpuData:
        """qpos = body.init_qpos + U(-s, s), qvel = s * N(0, 1), as the MJX env draws them
        from the same key; velocities, warm start, controls and time zero."""
        qpos_key, qvel_key = jax.random.split(key)
        qpos = self._init_qpos + jax.random.uniform(
            qpos_key, self._init_qpos.shape, minval=-noise_scale, maxval=noise_scale
        )
        qvel = noise_scale * jax.random.normal(qvel_key, (self._nv,))
        zeros = {name: jnp.zeros(self.simulator.shapes[name]) for name in STATE_FIELDS}
        state = {**zeros, "qpos": qpos, "qvel": qvel}
        return self._callback(self.simulator.forward, state)

    def step(self, data: CpuData, ctrl: Float[Array, "nu"]) -> CpuData:
        """`frame_skip` physics steps holding `ctrl`."""
        state = {name: getattr(data, name) for name in STATE_FIELDS}
        return self._callback(self.simulator.step, {**state, "ctrl": ctrl})

    def _callback(self, host_function, state: dict[str, Array]) -> CpuData:
        outputs = jax.pure_callback(
            host_function,
            self._result_shapes,
            *(jnp.asarray(state[name], jnp.float32) for name in STATE_FIELDS),
            vmap_method="broadcast_all",
        )
        return CpuData(**dict(zip(STATE_FIELDS + DERIVED_FIELDS, outputs)))
