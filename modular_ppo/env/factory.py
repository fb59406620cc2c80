"""make_env: a BodyGraph, an EnvConfig and a simulator backend -> a ModularEnv."""

from __future__ import annotations

from typing import Literal

from modular_ppo.body import BodyGraph
from modular_ppo.body.physics_options import with_physics
from modular_ppo.env.config import EnvConfig
from modular_ppo.env.cpu_backend import cpu_unsupported_reason, default_backend
from modular_ppo.env.cpu_simulator import CpuPhysics
from modular_ppo.env.errors import EnvError
from modular_ppo.env.modular_env import ModularEnv
from modular_ppo.env.observations import observation_reads_contact_forces
from modular_ppo.env.tasks import Task, make_task
from modular_ppo.env.warp_physics import WarpPhysics, warp_unavailable_reason

Backend = Literal["auto", "mjx", "cpu", "warp"]
BACKENDS: tuple[str, ...] = ("auto", "mjx", "cpu", "warp")


def make_env(
    body: BodyGraph, config: EnvConfig = EnvConfig(), backend: Backend = "mjx",
    nthread: int = 0,
) -> ModularEnv:
    """The environment for `body` with the task, observations and episodes of `config`.

    backend: "mjx" (MuJoCo MJX, in JAX), "cpu" (MuJoCo's C simulator on a thread pool,
    see cpu_backend.py), "warp" (MJX's MuJoCo Warp implementation, NVIDIA GPUs, see
    warp_physics.py) or "auto" (`default_backend`: "cpu" when JAX runs on CPU and the body
    allows it, else "mjx"). nthread: threads of the CPU backend (0: one per core the
    process may run on). `config.physics` rebuilds the body with those solver settings
    first (the env's `body` is then that one).
    """
    if backend not in BACKENDS:
        raise EnvError(f"backend = {backend!r}; use \"auto\", \"mjx\", \"cpu\" or \"warp\".")
    body = with_physics(body, config.physics_options())
    if backend == "auto":
        backend = default_backend(body)
    task = make_task(body, config)
    if backend == "mjx":
        return ModularEnv(body, task, config)
    if backend == "warp":
        return ModularEnv(body, task, config, physics=_warp_physics(body, config, task))
    reason = cpu_unsupported_reason(body)
    if reason:
        raise EnvError(f"{body.source}: the CPU backend cannot run this env: {reason}.")
    contact_forces = task.needs_contact_forces or observation_reads_contact_forces(body, config)
    return ModularEnv(body, task, config, physics=CpuPhysics(body, nthread, contact_forces))


def _warp_physics(body: BodyGraph, config: EnvConfig, task: Task) -> WarpPhysics:
    reason = warp_unavailable_reason()
    if reason:
        raise EnvError(f"--backend warp: {reason}.")
    if task.needs_contact_forces or observation_reads_contact_forces(body, config):
        raise EnvError(
            f"{body.source}: the warp backend does not compute contact forces, which this "
            "task or its observations use (contact cost, --env.contact-forces, MaMuJoCo's Ant "
            "or Humanoid). Use --backend mjx."
        )
    return WarpPhysics(body)
