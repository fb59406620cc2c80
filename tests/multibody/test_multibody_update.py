"""The shared update: every body's data reaches the shared parameters, weighted by its
share, and nothing of one body (its data, or the padded weights only it uses) reaches
another body's outputs."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from multibody_setup import PPO
from flax import nnx

from modular_ppo.ppo import collect_rollout, make_batch, ppo_loss, train_step
from modular_ppo.ppo.step import weighted_loss


@functools.partial(jax.jit, static_argnums=0)
def collect(groups, state):
    """Each body's rollout from `state`, as one batch, and its non-parameter state."""
    rests, batches = {}, {}
    for group in groups:
        own = state.groups[group.name]
        network_state, _, _, rollout = collect_rollout(
            group.env, group.graphdef, state.network_state(group.name), own.env_state,
            own.recurrent, PPO.rollout_length,
        )
        _, rests[group.name] = nnx.split_state(network_state, nnx.Param, ...)
        batches[group.name], _ = make_batch(own.recurrent, rollout, PPO)
    return rests, batches


shared_gradient = jax.jit(jax.grad(weighted_loss, has_aux=True), static_argnums=(1, 4))
shared_loss = jax.jit(weighted_loss, static_argnums=(1, 4))
body_gradient = jax.jit(jax.grad(ppo_loss, has_aux=True), static_argnums=(2, 4))


@pytest.fixture(scope="module")
def rollouts(groups_and_state):
    groups, state = groups_and_state
    return collect(groups, state)


def leaves(tree):
    return [np.asarray(leaf) for leaf in jax.tree.leaves(tree)]


def trunk_kernels(grads):
    return [np.asarray(grads["policy"]["trunk"]["layers"][0]["kernel"][...]),
            np.asarray(grads["value"]["trunk"]["layers"][0]["kernel"][...])]


def test_the_shared_gradient_is_the_weighted_sum_of_every_bodys_own(groups_and_state,
                                                                      rollouts):
    groups, state = groups_and_state
    rests, batches = rollouts
    shared, _ = shared_gradient(state.params, groups, rests, batches, PPO)
    expected = None
    for group in groups:
        own, _ = body_gradient(state.params, rests[group.name], group.graphdef,
                               batches[group.name], PPO)
        for kernel in trunk_kernels(own):  # every body moves the shared trunk
            assert np.linalg.norm(kernel) > 1e-6
        part = jax.tree.map(lambda g, w=group.loss_weight: w * g, own)
        expected = part if expected is None else jax.tree.map(jnp.add, expected, part)
    for got, want in zip(leaves(shared), leaves(expected)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-7)


def test_one_update_step_changes_the_shared_parameters_with_every_bodys_data(
    groups_and_state,
):
    groups, state = groups_and_state
    updated, metrics = train_step(groups, PPO, state)
    before, after = leaves(state.params), leaves(updated.params)
    assert any(not np.allclose(b, a) for b, a in zip(before, after))
    for group in groups:
        for module in group.env.obs_sizes:
            assert np.isfinite(metrics[f"losses/critic/{group.name}/{module}"])
        # Other data for this body alone (fresh resets) must change the shared update.
        own = state.groups[group.name]
        resets = jax.jit(jax.vmap(group.env.reset))(jax.random.split(jax.random.key(7),
                                                                     group.body_envs))
        own = own.replace(env_state=jax.tree.map(_placed_like, resets, own.env_state))
        other = state.replace(groups={**state.groups, group.name: own})
        updated_other, _ = train_step(groups, PPO, other)
        assert any(not np.allclose(a, b)
                   for a, b in zip(after, leaves(updated_other.params))), group.name


def test_another_bodys_data_never_reaches_a_bodys_losses(groups_and_state, rollouts):
    groups, state = groups_and_state
    rests, batches = rollouts
    _, terms = shared_loss(state.params, groups, rests, batches, PPO)
    for group in groups:
        name = group.name
        garbage = batches[name].replace(
            obs=jax.tree.map(lambda o: 100.0 * o + 3.0, batches[name].obs),
            value_targets=jax.tree.map(lambda t: t - 50.0, batches[name].value_targets),
        )
        _, other_terms = shared_loss(state.params, groups, rests, {**batches, name: garbage},
                                     PPO)
        for other in groups:
            same = all(np.array_equal(a, b) for a, b in
                       zip(leaves(terms[other.name]), leaves(other_terms[other.name])))
            assert same == (other.name != name), (name, other.name)


@functools.partial(jax.jit, static_argnums=0)
def act(group, params, rest, obs):
    network = nnx.merge(group.graphdef, params, rest)
    out = network(network.initialize_state(3), obs, deterministic=True).output
    return out.actions, out.loglikelihoods, out.value_estimates


def outputs(group, params, rest, obs):
    return leaves(act(group, params, rest, obs))


def test_weights_that_serve_only_another_bodys_larger_sizes_never_reach_a_body(
    groups_and_state,
):
    """The swimmer's tokens are padded from at most 47 observations to 112, its module
    one-hot from 3 to 8 and its actions from 1 to 2; the weights on those padded inputs
    and outputs are the centipede's alone. Scrambling them leaves the swimmer's actions,
    log-likelihoods and values exactly as they were, and changes the centipede's."""
    groups, state = groups_and_state
    swimmer, centipede = groups
    largest_obs = max(swimmer.env.obs_sizes.values())
    first_one_hot = 112 + len(swimmer.env.obs_sizes)
    padded_rows = np.r_[largest_obs:112, first_one_hot:120]
    noise = jax.random.normal(jax.random.key(3), (120, 8)) * 5.0

    def scramble(path, leaf):
        name = jax.tree_util.keystr(path)
        if "trunk" in name and "kernel" in name:
            return leaf.at[padded_rows].set(noise[padded_rows])
        if "policy" in name and "head" in name:  # the second action's weights
            return leaf.at[..., 1].add(3.0)
        return leaf

    scrambled = jax.tree_util.tree_map_with_path(scramble, state.params)
    rng = np.random.default_rng(0)
    for group, changes in ((swimmer, False), (centipede, True)):
        obs = {m: jnp.asarray(rng.normal(size=(3, n)), jnp.float32)
               for m, n in group.env.obs_sizes.items()}
        rest = state.groups[group.name].network
        before = outputs(group, state.params, rest, obs)
        after = outputs(group, scrambled, rest, obs)
        same = all(np.array_equal(b, a) for b, a in zip(before, after))
        assert same != changes, group.name


def _placed_like(new: jax.Array, old: jax.Array) -> jax.Array:
    """`new` with `old`'s dtype and placement (PRNG keys keep their key type)."""
    if not jax.dtypes.issubdtype(new.dtype, jax.dtypes.prng_key):
        new = new.astype(old.dtype)
    return jax.device_put(new, old.sharding)
