"""`replay` folds time into the batch for networks without recurrent state; it must give
the outputs and gradients of the step-by-step `replay_through_time`."""

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo.rollout import replay, replay_through_time

STEPS, ENVS = 3, 4


def test_folded_replay_matches_replay_through_time_with_gradients():
    env = TargetReachingEnv()
    network = make_network(env.body, env.obs_sizes, NetworkConfig(arch="separate"),
                           rngs=nnx.Rngs(0))
    graphdef, state = nnx.split(network)
    keys = iter(jax.random.split(jax.random.key(0), 8))
    obs = {m: jax.random.normal(next(keys), (STEPS, ENVS, n)) for m, n in env.obs_sizes.items()}
    raw = {m: jax.random.normal(next(keys), (STEPS, ENVS, n))
           for m, n in env.action_sizes.items()}
    extras = {"raw_actions": raw}
    done = jnp.zeros((STEPS, ENVS)).at[1, 0].set(1.0)
    recurrent = network.initialize_state(ENVS)
    params, rest = nnx.split_state(state, nnx.Param, ...)

    def outputs_and_grads(replay_fn):
        def scalar(params):
            out = replay_fn(graphdef, nnx.merge_state(params, rest), recurrent, obs, extras, done)
            total = out.regularization_loss + sum(
                jnp.sum(jnp.sin(x)) for x in jax.tree.leaves((out.loglikelihoods, out.values))
            )
            return total, out
        return jax.jit(jax.grad(scalar, has_aux=True))(params)

    folded = outputs_and_grads(replay)
    stepped = outputs_and_grads(replay_through_time)
    assert jax.tree.structure(folded) == jax.tree.structure(stepped)
    for a, b in zip(jax.tree.leaves(folded), jax.tree.leaves(stepped), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert any(float(jnp.abs(g).max()) > 0 for g in jax.tree.leaves(folded[0]))
