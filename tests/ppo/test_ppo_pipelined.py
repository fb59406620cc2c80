"""`--backend cpu-pipelined`: the pipelined rollout and training step compute what the
jitted CPU backend computes on each half of the environments (pipelined_rollout.py).

Tolerances: the pipelined steps are other XLA programs than the jitted rollout's scan, and
XLA may fuse the same float operations otherwise. A rollout from a fresh network came out
bit-identical but for 1 ulp of a reward-term metric (compared to rtol 1e-5 / atol 1e-6
here); after updates the network's actions differ by ulps too, the physics carries them,
and PPO's clipping turns them into differences of up to ~1e-3 of an array's largest
entry within 4 iterations (compared to 3e-3 of it). Random keys and integers: exactly.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from ppo_test_network import PerModuleMLP

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.ppo import BodyGroupError, PPOConfig, new_training_state
from modular_ppo.ppo.pipelined_rollout import collect_pipelined, other_stream
from modular_ppo.ppo.pipelined_step import learn_from_rollouts, pipelined_train_step
from modular_ppo.ppo.rollout import collect_rollout, joined_rollouts
from modular_ppo.ppo.step import combined_metrics

BODY = "hopper-modular"
"""Falls within a few dozen steps of a random policy: episodes end by termination too."""


@pytest.fixture(scope="module")
def cpu_env():
    return make_env(load_body(BODY), EnvConfig(episode_length=7), "cpu", nthread=1)


def network(env, seed=0):
    return PerModuleMLP(env.obs_sizes, env.action_sizes, hidden=16, recurrent=True,
                        rngs=nnx.Rngs(seed))


def halves_rollout(env, graphdef, network_state, env_state, recurrent, length):
    """The jitted CPU backend's `collect_rollout` on each half of the environments (the
    second with the network's `other_stream`), joined: what `collect_pipelined` computes."""
    size = env_state.done.shape[0] // 2

    def first(tree):
        return jax.tree.map(lambda x: x[:size], tree)

    def second(tree):
        return jax.tree.map(lambda x: x[size:], tree)

    a = collect_rollout(env, graphdef, network_state, first(env_state), first(recurrent),
                        length)
    b = collect_rollout(env, graphdef, other_stream(network_state), second(env_state),
                        second(recurrent), length)
    both = functools.partial(jax.tree.map, lambda x, y: jnp.concatenate([x, y]))
    return a[0], both(a[1], b[1]), both(a[2], b[2]), joined_rollouts(a[3], b[3])


def reference_step(groups, config, state):
    """`pipelined_train_step`'s call with the rollouts of the jitted CPU backend
    (`halves_rollout`) and the same update (`learn_from_rollouts`)."""
    rollouts = jax.jit(halves_rollout, static_argnums=(0, 1, 5))
    outputs = []
    for _ in range(config.iterations_per_call):
        collections = {group.name: rollouts(
            group.env, group.graphdef, state.network_state(group.name),
            state.groups[group.name].env_state, state.groups[group.name].recurrent,
            config.rollout_length) for group in groups}
        state, output = learn_from_rollouts(groups, config, state, collections)
        outputs.append(output)
    stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *outputs)
    return state, combined_metrics(groups, state, stacked)


def assert_close(expected, actual, of_largest=None):
    """Equal trees: floats to rtol 1e-5 / atol 1e-6, or with `of_largest`, to that share
    of each array's largest magnitude; keys and integers exactly."""
    assert jax.tree.structure(expected) == jax.tree.structure(actual)
    for (path, x), y in zip(jax.tree_util.tree_leaves_with_path(expected),
                            jax.tree.leaves(actual)):
        where = jax.tree_util.keystr(path)
        if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            np.testing.assert_array_equal(jax.random.key_data(y), jax.random.key_data(x), where)
        elif not jnp.issubdtype(x.dtype, jnp.floating):
            np.testing.assert_array_equal(np.asarray(y), np.asarray(x), where)
        elif of_largest is None:
            np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-5, atol=1e-6,
                                       err_msg=where)
        else:
            largest = float(np.max(np.abs(x), initial=0.0))
            np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=0,
                                       atol=of_largest * largest + 1e-6, err_msg=where)


def test_pipelined_rollout_is_the_cpu_backends_rollout_of_each_half(cpu_env):
    net = network(cpu_env)
    graphdef, network_state = nnx.split(net)
    n_envs, length = 6, 12
    env_state = jax.vmap(cpu_env.reset)(jax.random.split(jax.random.key(3), n_envs))
    # Envs 1 and 4 (one per half) start tilted past the healthy angle: they terminate.
    tilted = env_state.data.qpos.at[jnp.array([1, 4]), 2].set(0.6)
    env_state = env_state.replace(data=env_state.data.replace(qpos=tilted))
    recurrent = net.initialize_state(n_envs)
    expected = jax.jit(halves_rollout, static_argnums=(0, 1, 5))(
        cpu_env, graphdef, network_state, env_state, recurrent, length)
    actual = collect_pipelined(cpu_env, graphdef, network_state, env_state, recurrent, length)
    assert_close(expected, actual)
    rollout = actual[3]
    assert float(rollout.done.sum()) > float(rollout.truncated.sum()) > 0  # both ways to end
    assert rollout.done.shape == (length, n_envs)


def test_pipelined_training_matches_the_jitted_cpu_backend(cpu_env):
    config = PPOConfig(n_envs=8, rollout_length=5, n_epochs=2, n_minibatches=2,
                       iterations_per_call=2, total_steps=80)
    groups, state = new_training_state([(cpu_env, network(cpu_env))], config, seed=0)
    step = pipelined_train_step(groups, config)
    expected, actual = state, state
    for _ in range(2):
        expected, expected_metrics = reference_step(groups, config, expected)
        actual, actual_metrics = step(actual)
        assert_close(expected_metrics, actual_metrics, of_largest=3e-3)
    assert_close(expected, actual, of_largest=3e-3)
    assert int(actual.iteration) == 4


def test_an_env_off_the_cpu_backend_is_refused():
    env = make_env(load_body(BODY), EnvConfig(episode_length=7), "mjx")
    config = PPOConfig(n_envs=8, rollout_length=5, n_minibatches=2)
    groups, _ = new_training_state([(env, network(env))], config, seed=0)
    with pytest.raises(BodyGroupError, match="cpu-pipelined.*make_env"):
        pipelined_train_step(groups, config)
