"""MuJoCo's C simulator on a thread pool, called from jitted JAX code with a whole batch.

`CpuPhysics.step` is a host call (`host_call.py`: an XLA FFI custom call into Python, which
JAX's persistent cache can keep, unlike `jax.pure_callback`) that sees the whole batch: under
`vmap(env.step)` one host call receives every environment's state, writes it into a
`mujoco.batch.Batch` (persistent threads, the GIL released while they step), runs
`frame_skip` substeps of `mj_step` per environment and hands back the new state with the
kinematic quantities observations and rewards read, computed at the new state (as the MJX
`Physics` does). Where contact forces are needed, the model gets an accelerometer on a
site of its world body, so that MuJoCo's forward pass also fills cfrc_ext (it computes it
only for models with such sensors), and the new state gets a full forward pass.

The state lives in JAX (float32, like MJX) so env states stay pure pytrees: jit, vmap,
checkpoint and edit them as with the MJX env. The C simulator runs in float64 between
two control steps.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
import weakref
from collections.abc import Callable

import jax
import jax.custom_batching
import jax.numpy as jnp
import mujoco
import numpy as np
from flax import struct
from jaxtyping import Array, Bool, Float
from mujoco import batch as mujoco_batch

from modular_ppo.body import BodyGraph
from modular_ppo.env.errors import EnvError
from modular_ppo.env.host_call import host_call, register


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
    cfrc_ext: Float[Array, "nbody 6"]
    """External contact wrench per body; zero unless the simulator computes contact forces."""


STATE_FIELDS = ("time", "qpos", "qvel", "act", "qacc_warmstart", "ctrl")
"""Written into the C simulator before a call, read back after it."""
DERIVED_FIELDS = ("xpos", "xmat", "cvel", "subtree_com", "cfrc_ext")
"""Computed by the C simulator, read back after a call."""
_PROBE = "modular_ppo:contact_force_probe"

_UNCARRIED_STATE = (
    mujoco.mjtState.mjSTATE_HISTORY.value | mujoco.mjtState.mjSTATE_PLUGIN.value
    | mujoco.mjtState.mjSTATE_PLASTIC.value
)


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


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

    def __init__(
        self, model: mujoco.MjModel, frame_skip: int, nthread: int, contact_forces: bool = False
    ):
        """nthread: threads stepping a batch; 0: one per core this process may run on (a
        process pinned to one core with `taskset` gets one thread: a second thread on the
        same core costs 4-8% of the stepping and gains nothing). contact_forces: compute
        cfrc_ext (the model must have a sensor that needs it, see
        `with_contact_force_probe`)."""
        self.model = model
        self.frame_skip = frame_skip
        self._stage = _stage(contact_forces)
        """What is computed at the new state: kinematics and velocities, or everything."""
        self.nthread = nthread or usable_cores()
        self._batches: dict[int, mujoco_batch.Batch] = {}
        self._fields: dict[int, dict[str, np.ndarray]] = {}
        """n -> the live (n, ...) arrays of its batch by field: STATE_FIELDS written before
        a call, DERIVED_FIELDS read after it."""
        # A Batch must not be driven from two threads at once; XLA may run two
        # computations that call back concurrently.
        self._lock = threading.Lock()
        data = mujoco.MjData(self.model)
        self.shapes = {name: np.shape(getattr(data, name))
                       for name in STATE_FIELDS + DERIVED_FIELDS}
        """Field -> shape per environment (xmat as mjx.Data holds it: nbody x 3 x 3)."""
        self.shapes["xmat"] = (model.nbody, 3, 3)
        self.widths = {name: math.prod(shape) for name, shape in self.shapes.items()}
        """Field -> floats per environment: its columns in `write_columns`' rows."""
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
            self._batches[n] = batch
            # Bound once: a state field's `bind` makes a new view at every call.
            self._fields[n] = {name: batch.bind(name) for name in STATE_FIELDS + DERIVED_FIELDS}
        return self._batches[n]

    def step(self, *state: np.ndarray, into: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """STATE_FIELDS arrays [..., *shape] -> STATE_FIELDS + DERIVED_FIELDS after
        frame_skip substeps, float32, same leading shape; with `into` ([N, width]), written
        into its columns instead (`write_columns`)."""
        lead = np.shape(state[STATE_FIELDS.index("qpos")])[:-1]
        n = math.prod(lead)
        with self._lock:
            batch, fields = self._batch(n), self._fields[n]
            for name, value in zip(STATE_FIELDS, state):
                fields[name][...] = np.reshape(value, fields[name].shape)
            batch.step(nstep=self.frame_skip, stage=self._stage)
            if into is not None:
                return self.write_columns(fields, into)
            return self._read(fields, lead, None)

    def start(
        self, qpos: np.ndarray, qvel: np.ndarray, where: np.ndarray | None = None,
        into: np.ndarray | None = None,
    ) -> tuple[np.ndarray, ...]:
        """Fresh states at (qpos, qvel) [..., nq / nv]: time, activations, warm start and
        controls zero, quaternions normalized (as MJX's kinematics and MuJoCo's integrator
        leave them). Returns STATE_FIELDS + DERIVED_FIELDS, float32, same leading shape.
        With `where` (same leading shape), only those environments are written and computed
        (the others' rows of the batch are left as they are: a step writes the whole state
        it starts from); every field of the others is zero. With `into` ([N, width]) and
        no `where`, written into its columns instead (`write_columns`)."""
        lead = np.shape(qpos)[:-1]
        n = math.prod(lead)
        ids = None if where is None else np.flatnonzero(np.ravel(where) > 0)
        rows = slice(None) if ids is None else ids
        with self._lock:
            batch, fields = self._batch(n), self._fields[n]
            for name in STATE_FIELDS:
                fields[name][rows] = 0.0
            fields["qpos"][rows] = self._normalized(np.reshape(qpos, (n, -1))[rows])
            fields["qvel"][rows] = np.reshape(qvel, (n, -1))[rows]
            if ids is None or ids.size:
                batch.forward(ids=ids, stage=self._stage)
            if into is not None and ids is None:
                return self.write_columns(fields, into)
            return self._read(fields, lead, ids)

    def write_columns(self, fields: dict[str, np.ndarray], into: np.ndarray) -> np.ndarray:
        """STATE_FIELDS + DERIVED_FIELDS of every environment written, float32, into the
        columns of `into` [N, width], each field flattened, in that order; `into`."""
        column = 0
        for name in STATE_FIELDS + DERIVED_FIELDS:
            width = self.widths[name]
            into[:, column:column + width] = fields[name].reshape(len(into), width)
            column += width
        return into

    def _read(
        self, fields: dict[str, np.ndarray], lead: tuple[int, ...], ids: np.ndarray | None
    ) -> tuple[np.ndarray, ...]:
        """STATE_FIELDS + DERIVED_FIELDS as float32 [*lead, *shape]: every environment's,
        or those of `ids` and zeros elsewhere."""
        out = []
        for name in STATE_FIELDS + DERIVED_FIELDS:
            if ids is None:
                values = fields[name].astype(np.float32)
            else:
                values = np.zeros(fields[name].shape, np.float32)
                values[ids] = fields[name][ids]
            out.append(values.reshape((*lead, *self.shapes[name])))
        return tuple(out)

    def _normalized(self, qpos: np.ndarray) -> np.ndarray:
        qpos = np.array(qpos, np.float64)
        for start, size in self._quaternions:
            quat = qpos[..., start:start + size]
            qpos[..., start:start + size] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
        return qpos


def _stage(contact_forces: bool) -> int:
    return (mujoco.mjtStage.mjSTAGE_ACC if contact_forces else mujoco.mjtStage.mjSTAGE_VEL).value


def simulator_key(
    model: mujoco.MjModel, frame_skip: int, nthread: int, contact_forces: bool
) -> str:
    """A digest of the compiled model (its binary) and the stepping settings (nthread
    resolved: 0 is not a setting of its own): it names a simulator's host calls, the same
    in every process, so compiled programs that call it can be cached."""
    binary = np.zeros(mujoco.mj_sizeModel(model), np.uint8)
    mujoco.mj_saveModel(model, None, binary)
    digest = hashlib.sha256(binary.tobytes()).hexdigest()[:24]
    return (f"mujoco:{digest}:skip{frame_skip}:stage{_stage(contact_forces)}"
            f":threads{nthread or usable_cores()}")


_simulators: weakref.WeakValueDictionary[str, ThreadedSimulator] = (
    weakref.WeakValueDictionary())
"""key -> the live simulator of that key: envs of the same model and settings share one,
so the host calls a compiled program names reach a simulator while any of them lives."""


def shared_simulator(
    model: mujoco.MjModel, frame_skip: int, nthread: int, contact_forces: bool
) -> tuple[str, ThreadedSimulator]:
    """The key (`simulator_key`) and live `ThreadedSimulator` of these settings, made (and
    its `step` and `start` registered as host calls "<key>/step", "<key>/start") if there
    is none."""
    key = simulator_key(model, frame_skip, nthread, contact_forces)
    simulator = _simulators.get(key)
    if simulator is None:
        simulator = ThreadedSimulator(model, frame_skip, nthread, contact_forces)
        _simulators[key] = simulator
        register(f"{key}/step", simulator, "step")
        register(f"{key}/start", simulator, "start")
    return key, simulator


class CpuPhysics:
    """The C-simulator `Simulator` of a ModularEnv: starts and steps one environment's
    `CpuData` (callers vmap), as the MJX `Physics` does an `mjx.Data`."""

    def __init__(self, body: BodyGraph, nthread: int = 0, contact_forces: bool = False):
        reason = unsupported_reason(body.model)
        if reason:
            raise EnvError(f"{body.source}: {reason}. Use the MJX backend for this body.")
        self.frame_skip = body.frame_skip
        self.dt = float(body.model.opt.timestep) * self.frame_skip
        """Seconds per control step."""
        self.contact_forces = contact_forces
        """Whether states carry cfrc_ext (external contact forces per body)."""
        model = with_contact_force_probe(body.xml) if contact_forces else body.model
        self._key, self.simulator = shared_simulator(model, self.frame_skip, nthread,
                                                     contact_forces)
        self.result_width = 2 * sum(self.simulator.widths[name]
                                    for name in STATE_FIELDS + DERIVED_FIELDS)
        """Floats per environment in `step_on_host`'s result."""
        self._result_shapes = tuple(
            jax.ShapeDtypeStruct(self.simulator.shapes[name], jnp.float32)
            for name in STATE_FIELDS + DERIVED_FIELDS
        )
        self._restart_where = jax.custom_batching.custom_vmap(self._started_where)
        self._restart_where.def_vmap(self._restart_where_batched)

    @property
    def model(self):
        raise EnvError("this env runs on the CPU backend (MuJoCo's C simulator) and has no "
                       "mjx.Model; use env.body.model, or the MJX backend.")

    def start(self, qpos: Float[Array, "nq"], qvel: Float[Array, "nv"]) -> CpuData:
        """A fresh state at (qpos, qvel); time, controls, activations, warm start zero."""
        return self._call("start", qpos, qvel)

    def restart_where(
        self, done: Bool[Array, ""], data: CpuData, qpos: Float[Array, "nq"],
        qvel: Float[Array, "nv"],
    ) -> CpuData:
        """`start(qpos, qvel)` where `done`, else `data`. Under vmap, the simulator is
        called only on steps where some environment is done, and starts only those: most
        steps end no episode, and a host call costs as much as a fifth of MuJoCo's step."""
        return self._restart_where(done, data, qpos, qvel)

    def _started_where(self, done: Array, data: CpuData, qpos: Array, qvel: Array) -> CpuData:
        return restart_from(self._call("start", qpos, qvel, done))(done, data, qpos, qvel)

    def _restart_where_batched(self, size: int, batched, done, data, qpos, qvel):
        """The vmap rule of `restart_where`: one host call for the batch, made only if any
        environment is done."""
        done, data, qpos, qvel = jax.tree.map(
            lambda x, is_batched: x if is_batched else jnp.broadcast_to(x, (size, *x.shape)),
            (done, data, qpos, qvel), tuple(batched),
        )
        restarted = jax.lax.cond(
            jnp.any(done),
            lambda: jax.vmap(self._started_where)(done, data, qpos, qvel),
            lambda: data,
        )
        return restarted, jax.tree.map(lambda _: True, restarted)

    def step(self, data: CpuData, ctrl: Float[Array, "nu"]) -> CpuData:
        """`frame_skip` physics steps holding `ctrl`."""
        state = {name: getattr(data, name) for name in STATE_FIELDS}
        return self._call("step", *{**state, "ctrl": ctrl}.values())

    def host_request(
        self, data: CpuData, ctrl: Float[Array, "nu"], start_qpos: Float[Array, "nq"],
        start_qvel: Float[Array, "nv"],
    ) -> Float[Array, "width"]:
        """One environment's inputs to `step_on_host` as one row: its STATE_FIELDS but
        ctrl, then ctrl and the fresh start's qpos and qvel (one array crosses to the host:
        every array copied off an accelerator costs its own transfer)."""
        parts = [getattr(data, name) for name in STATE_FIELDS[:-1]]
        return jnp.concatenate([jnp.ravel(x).astype(jnp.float32)
                                for x in (*parts, ctrl, start_qpos, start_qvel)])

    def step_on_host(self, request: Float[np.ndarray, "n width"]) -> Float[np.ndarray, "n out"]:
        """`step` outside jit on a batch of `host_request` rows: every environment's state
        after the step (STATE_FIELDS + DERIVED_FIELDS flattened, `write_columns`), then
        the fresh start at its start pose (the start `restart_where` would make where the
        step ends an episode, made for all because which end is decided after the step;
        `restart_from` selects them), in one float32 array; `host_result` reads a row."""
        shapes, widths = self.simulator.shapes, self.simulator.widths
        ends = np.cumsum([widths[name] for name in (*STATE_FIELDS, "qpos")])
        n, parts = len(request), np.split(request, ends, axis=1)
        state = [part.reshape(n, *shapes[name]) for name, part in zip(STATE_FIELDS, parts)]
        out = np.empty((n, self.result_width), np.float32)
        half = self.result_width // 2
        self.simulator.step(*state, into=out[:, :half])
        self.simulator.start(parts[-2], parts[-1], into=out[:, half:])
        return out

    def host_result(self, row: Float[Array, "out"]) -> tuple[CpuData, CpuData]:
        """One environment's row of `step_on_host`: (state after the step, fresh start)."""
        shapes, names = self.simulator.shapes, STATE_FIELDS + DERIVED_FIELDS
        sizes = [self.simulator.widths[name] for name in names]
        pieces = jnp.split(row, np.cumsum(sizes + sizes)[:-1])
        return tuple(CpuData(**{name: piece.reshape(shapes[name]) for name, piece in
                                zip(names, pieces[half * len(names):])})
                     for half in (0, 1))

    def _call(self, method: str, *inputs: Array) -> CpuData:
        """The simulator's `method` ("step" or "start") as a host call."""
        outputs = host_call(f"{self._key}/{method}", self._result_shapes,
                            *(jnp.asarray(x, jnp.float32) for x in inputs))
        return CpuData(**dict(zip(STATE_FIELDS + DERIVED_FIELDS, outputs)))


def with_contact_force_probe(xml: str) -> mujoco.MjModel:
    """The model of `xml` with an accelerometer on a site of the world body: MuJoCo's
    forward pass computes cfrc_ext only when a sensor needs it."""
    spec = mujoco.MjSpec.from_string(xml)
    spec.worldbody.add_site(name=_PROBE)
    spec.add_sensor(type=mujoco.mjtSensor.mjSENS_ACCELEROMETER, name=_PROBE,
                    objtype=mujoco.mjtObj.mjOBJ_SITE, objname=_PROBE)
    return spec.compile()


def restart_from(started: CpuData) -> Callable[..., CpuData]:
    """A `restart` for `ModularEnv.end_step` that takes its fresh start from `started`
    (made beforehand, as `CpuPhysics.step_on_host` does): the same selection as
    `CpuPhysics.restart_where`, without a host call."""

    def restart(done: Bool[Array, ""], data: CpuData, qpos: Array, qvel: Array) -> CpuData:
        return jax.tree.map(lambda new, old: jnp.where(done, new, old), started, data)

    return restart
