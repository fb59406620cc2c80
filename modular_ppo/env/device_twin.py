"""A CPU-backend env's twin on MJX: the same task, observations and episodes, its states
`CpuData` like the CPU backend's, stepped by MJX on the device. `--backend cpu-pipelined
--device-share` steps a share of the environments with it while the host's C simulator
steps the rest, so the two engines' environments make one batch of one state type."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float
from mujoco import mjx

from modular_ppo.env.cpu_simulator import STATE_FIELDS, CpuData, CpuPhysics
from modular_ppo.env.errors import EnvError
from modular_ppo.env.modular_env import ModularEnv
from modular_ppo.env.physics import Physics, StartsEverywhere, contact_forces


class MjxOnCpuData(StartsEverywhere):
    """A `Simulator` stepping `CpuData` with MJX (`Physics`): each step builds an
    `mjx.Data` from the state fields CpuData carries (time, qpos, qvel, act,
    qacc_warmstart, ctrl; `mjx.step` recomputes everything else from them) and keeps the
    derived fields observations read. So a state moves between this and the C simulator
    unchanged, and a step is MJX's step of the same state."""

    def __init__(self, physics: Physics):
        self._physics = physics
        self.model = physics.model
        self.frame_skip = physics.frame_skip
        self.dt = physics.dt
        self.contact_forces = physics.contact_forces

    def _as_cpu_data(self, data: mjx.Data) -> CpuData:
        cfrc_ext = (contact_forces(data) if self.contact_forces
                    else jnp.zeros_like(contact_forces(data)))
        return CpuData(time=data.time, qpos=data.qpos, qvel=data.qvel, act=data.act,
                       qacc_warmstart=data.qacc_warmstart, ctrl=data.ctrl, xpos=data.xpos,
                       xmat=data.xmat, cvel=data.cvel, subtree_com=data.subtree_com,
                       cfrc_ext=cfrc_ext)

    def start(self, qpos: Float[Array, "nq"], qvel: Float[Array, "nv"]) -> CpuData:
        return self._as_cpu_data(self._physics.start(qpos, qvel))

    def step(self, data: CpuData, ctrl: Float[Array, "nu"]) -> CpuData:
        """`Physics.step` with substeps that carry only the state fields, the same states
        bit for bit: vmap traces a loop carrying the whole `mjx.Data` twice (the blank
        fields turn batched after one substep), and tracing MJX's step is on the critical
        path of the share's first compile (ant: 3.0 -> 2.0 s of tracing on CPU)."""
        def substep(_, fields: dict[str, Array]) -> dict[str, Array]:
            stepped = mjx.step(self.model, self._physics.blank_with(**fields))
            return {name: getattr(stepped, name) for name in fields}

        state = {name: getattr(data, name) for name in STATE_FIELDS}
        fields = jax.lax.fori_loop(0, self.frame_skip, substep, {**state, "ctrl": ctrl})
        return self._as_cpu_data(self._physics.derived(self._physics.blank_with(**fields)))


@functools.lru_cache(maxsize=64)  # one per body of a run, shared by its rollouts' programs
def device_twin(env: ModularEnv) -> ModularEnv:
    """`env` (a CPU-backend ModularEnv) with MJX stepping its `CpuData` states
    (`MjxOnCpuData`); EnvError, naming the body and the fix, where MJX refuses the body."""
    if not isinstance(env.physics, CpuPhysics):
        raise EnvError(f"{env.body.source}: a device twin is made of a CPU-backend env "
                       f"(make_env(body, config, \"cpu\")), not of one on "
                       f"{type(env.physics).__name__}.")
    physics = Physics(env.body, contact_forces=env.physics.contact_forces)
    return ModularEnv(env.body, env.task, env.config, physics=MjxOnCpuData(physics))
