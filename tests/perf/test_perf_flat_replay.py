"""The replay proposed to the PPO stage (benchmarks/proposals.py) gives the same loss and
gradients as `ppo.rollout.replay` for a network without recurrent state."""

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo import Minibatch, PPOConfig, ppo_loss

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from proposals import flat_replay_installed  # noqa: E402

STEPS, ENVS = 3, 4


def _minibatch(graphdef, state, obs_sizes) -> Minibatch:
    """Random observations, actions sampled by the network, made-up advantages."""
    keys = iter(jax.random.split(jax.random.key(0), 16))
    obs = {m: jax.random.normal(next(keys), (STEPS, ENVS, n)) for m, n in obs_sizes.items()}

    @jax.jit
    def sample(state, obs):
        network = nnx.merge(graphdef, state)
        flat = {m: o.reshape(STEPS * ENVS, -1) for m, o in obs.items()}
        output = network(network.initialize_state(STEPS * ENVS), flat).output
        return jax.tree.map(lambda x: x.reshape(STEPS, ENVS, *x.shape[1:]), output)

    network = nnx.merge(graphdef, state)
    sampled = sample(state, obs)
    noise = {m: jax.random.normal(next(keys), (STEPS, ENVS)) for m in obs_sizes}
    return Minibatch(
        recurrent=network.initialize_state(ENVS),
        obs=obs,
        extras=sampled.extras,
        done=jnp.zeros((STEPS, ENVS)).at[1, 0].set(1.0),
        old_loglikelihoods={m: v + 0.1 for m, v in sampled.loglikelihoods.items()},
        advantages={m: noise[m] for m in sampled.loglikelihoods},
        value_targets=noise,
    )


def test_flat_replay_gives_the_same_loss_and_gradients():
    env = TargetReachingEnv()
    obs_sizes = env.obs_sizes
    network = make_network(env.body, obs_sizes, NetworkConfig(arch="separate"),
                           rngs=nnx.Rngs(0))
    graphdef, state = nnx.split(network)
    batch = _minibatch(graphdef, state, obs_sizes)
    params, rest = nnx.split_state(state, nnx.Param, ...)

    def loss_and_grads():
        grad = jax.grad(ppo_loss, has_aux=True)
        return jax.jit(grad, static_argnums=(2, 4))(params, rest, graphdef, batch, PPOConfig())

    scan_grads, scan_terms = loss_and_grads()
    with flat_replay_installed():
        flat_grads, flat_terms = loss_and_grads()
    for scan_leaf, flat_leaf in zip(jax.tree.leaves((scan_grads, scan_terms)),
                                    jax.tree.leaves((flat_grads, flat_terms)), strict=True):
        np.testing.assert_allclose(flat_leaf, scan_leaf, rtol=1e-4, atol=1e-6)
    assert float(scan_terms.total) != 0.0
