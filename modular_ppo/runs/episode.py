"""One recorded episode of a trained policy: the joint positions to render."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jaxtyping import Float, PRNGKeyArray

from modular_ppo.env import ModularEnv


def record_episode(
    env: ModularEnv,
    graphdef: nnx.GraphDef,
    network_state: nnx.State,
    key: PRNGKeyArray,
    length: int,
    deterministic: bool = True,
) -> Float[np.ndarray, "time nq"]:
    """qpos at every control step of one episode (it continues past a done, auto-reset)."""

    @jax.jit
    def run(network_state: nnx.State, key: PRNGKeyArray):
        env_state = jax.vmap(env.reset)(key[None])
        recurrent = nnx.merge(graphdef, network_state).initialize_state(1)

        def step(carry, _):
            env_state, recurrent = carry
            network = nnx.merge(graphdef, network_state)
            out = network(recurrent, env_state.obs, deterministic=deterministic)
            env_state = jax.vmap(env.step)(env_state, out.output.actions)
            recurrent = network.reset_state(out.next_state, env_state.done > 0)
            return (env_state, recurrent), env_state.data.qpos[0]

        _, qpos = jax.lax.scan(step, (env_state, recurrent), length=length)
        return jnp.concatenate([env_state.data.qpos, qpos])

    return np.asarray(run(network_state, key))
