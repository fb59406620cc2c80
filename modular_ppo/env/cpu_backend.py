"""The CPU backend: a ModularEnv whose physics is MuJoCo's C simulator (`CpuPhysics`).

On CPU, MuJoCo's C simulator stepped on a thread pool is several times faster than MJX
(see BENCHMARKS.md). The env is the MJX env's own `ModularEnv` with `CpuPhysics` as its
simulator: observations, rewards, termination, truncation, auto-reset and episode metrics
are the same code, run on the C simulator's states. The policy stays in JAX: the physics
is a host call inside the jitted rollout (cpu_simulator.py, host_call.py).

Differences from the MJX env: the C simulator runs in float64 within a control step (MJX
in float32), and with few solver iterations (the ant: one Newton iteration) the two
solvers stop at different approximate solutions once contacts form, so trajectories
agree to float tolerance only while the solver converges. Contact-force features and the
contact cost cost a full forward pass per control step (cpu_simulator.py). Where MuJoCo
detects a diverging simulation it resets that environment's physics to the model's
default pose with a warning, where MJX would propagate NaNs.
"""

from __future__ import annotations

from typing import Literal

import jax

from modular_ppo.body import BodyGraph
from modular_ppo.env.cpu_simulator import unsupported_reason


def cpu_unsupported_reason(body: BodyGraph) -> str | None:
    """Why the CPU backend cannot serve this body, or None if it can."""
    return unsupported_reason(body.model)


def default_backend(body: BodyGraph) -> Literal["mjx", "cpu"]:
    """"cpu" when JAX runs on CPU and the CPU backend supports the body, else "mjx" (on
    GPU / TPU, MJX is the faster simulator)."""
    if jax.default_backend() != "cpu":
        return "mjx"
    return "mjx" if cpu_unsupported_reason(body) else "cpu"
