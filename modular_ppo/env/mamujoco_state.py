"""MaMuJoCo's global state (`MultiAgentMujocoEnv.state()`): the observation of the
Gymnasium v5 env it factorizes, with that env's default settings, as a function of a state.

- Ant-v5: qpos[2:], qvel, cfrc_ext[1:] clipped to [-1, 1] (105);
- HalfCheetah-v5: qpos[1:], qvel (17);
- Hopper-v5, Walker2d-v5: qpos[1:], qvel clipped to [-10, 10] (11, 17);
- Humanoid-v5: qpos[2:], qvel, cinert[1:], cvel[1:], qfrc_actuator[6:], cfrc_ext[1:] (348).

Computed in float32 from the state's own fields (cinert and qfrc_actuator as
`mamujoco_quantities` computes them), so it reads what Gymnasium's `_get_obs` reads.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
from jaxtyping import Array, Float
from mujoco import mjx

from modular_ppo.body import BodyGraph
from modular_ppo.env.mamujoco import body_scenario
from modular_ppo.env.mamujoco_quantities import ComInertia, MotorForces
from modular_ppo.env.physics import contact_forces


def mamujoco_state(body: BodyGraph) -> Callable[[mjx.Data], Float[Array, "state"]]:
    """The global state of the MaMuJoCo scenario `body` reproduces (module docstring);
    raises EnvError for a body that reproduces none."""
    name = body_scenario(body).name
    if name == "Ant":
        return lambda d: jnp.concatenate(
            [d.qpos[2:], d.qvel, jnp.clip(contact_forces(d)[1:], -1.0, 1.0).ravel()])
    if name == "HalfCheetah":
        return lambda d: jnp.concatenate([d.qpos[1:], d.qvel])
    if name in ("Hopper", "Walker2d"):
        return lambda d: jnp.concatenate([d.qpos[1:], jnp.clip(d.qvel, -10.0, 10.0)])
    inertia, motors = ComInertia(body.model), MotorForces(body)
    return lambda d: jnp.concatenate([
        d.qpos[2:], d.qvel, inertia(d.xpos, d.xmat, d.subtree_com)[1:].ravel(),
        d.cvel[1:].ravel(), motors(d.ctrl)[6:], contact_forces(d)[1:].ravel(),
    ])
