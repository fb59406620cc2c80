"""Morphology features on module tokens and the attention's hop bias: what they reach,
that they keep the weights body-independent, and that they leave the defaults alone
(the defaults themselves: test_networks_default_pinned.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from modular_ppo.body import MORPHOLOGY_WIDTH, load_body
from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.networks import (
    AttentionConfig,
    NetworkConfig,
    NetworkConfigError,
    count_parameters,
    make_network,
)
from modular_ppo.networks.transformer import hop_buckets, self_attention
from modular_ppo.ppo import PPOConfig, train_from_scratch

BATCH = 8
TOKEN_ARCHS = ("shared", "graph", "attention")
WITH_FEATURES = {"morphology": "policy_and_value", "attention": {"hop_bias": 2}}


@nnx.jit
def mode_of(net, obs):
    return net(net.initialize_state(BATCH), obs, deterministic=True).output


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"arch": "separate", "morphology": "value"}, "NetworkConfig.morphology"),
        ({"arch": "shared", "morphology": "policy"}, "NetworkConfig.morphology"),
        ({"attention": AttentionConfig(hop_bias=-1)}, "NetworkConfig.attention.hop_bias"),
    ],
)
def test_invalid_morphology_settings_name_the_field(fields, named):
    with pytest.raises(NetworkConfigError, match=named.replace(".", r"\.")):
        NetworkConfig(**fields)


def test_self_attention_is_the_modules_own_call_without_a_bias():
    """The written-out attention computes exactly what nnx.MultiHeadAttention computes."""
    attention = nnx.MultiHeadAttention(2, 8, decode=False, keep_rngs=False, rngs=nnx.Rngs(0))
    x = jnp.asarray(np.random.default_rng(0).standard_normal((3, 5, 8)), jnp.float32)
    mask = (np.abs(np.subtract.outer(np.arange(5), np.arange(5))) <= 1)[None, None]
    for m in (None, mask):
        np.testing.assert_array_equal(self_attention(attention, x, m, None), attention(x, mask=m))


def test_hop_buckets_cap_the_distance():
    hops = ((0, 1, 2, 3, -1), (1, 0, 1, 2, -1))
    assert hop_buckets(hops, 2) == ((0, 1, 2, 2, 2), (1, 0, 1, 2, 2))
    assert hop_buckets(hops, None) is None


@pytest.mark.parametrize("arch", TOKEN_ARCHS)
def test_finite_outputs_and_gradients_on_two_bodies(
    arch, bodies, obs_sizes_of, random_obs, padded, build
):
    for body_name in ("chain", "ant"):
        net = nnx.clone(build(body_name, arch=arch, **WITH_FEATURES, **padded))
        obs = random_obs(obs_sizes_of(bodies[body_name]), BATCH)
        graphdef, params, rest = nnx.split(net, nnx.Param, ...)

        def loss(params):
            network = nnx.merge(graphdef, params, rest)
            out = network(network.initialize_state(BATCH), obs, deterministic=True).output
            return (sum(v.mean() for v in out.value_estimates.values())
                    + sum(a.mean() for a in out.actions.values()))

        value, grads = jax.jit(jax.value_and_grad(loss))(params)
        assert np.isfinite(value), body_name
        for part in ("policy", "value"):
            leaves = jax.tree.leaves(grads[part])
            assert all(np.all(np.isfinite(g)) for g in leaves), (body_name, part)
            assert any(np.any(g != 0) for g in leaves), (body_name, part)


def test_features_tell_modules_apart_that_observations_do_not(bodies, obs_sizes_of, build):
    """Without a module index every ant leg seeing the same observations acts alike; with
    the morphology features (the legs' ankle axes point different ways) they do not."""
    ant = bodies["ant"]
    obs = {m: np.ones((BATCH, n), np.float32) for m, n in obs_sizes_of(ant).items()}
    for morphology, alike in (("none", True), ("policy_and_value", False)):
        net = build("ant", arch="shared", module_identity="none", morphology=morphology)
        actions = mode_of(net, obs).actions
        legs = [np.asarray(actions[m]) for m in ant.actuated_modules]
        assert all(np.allclose(leg, legs[0], atol=1e-6) for leg in legs) == alike, morphology


def test_a_morphology_conditioned_critic_leaves_the_policy_as_it_was(
    bodies, obs_sizes_of, random_obs, build
):
    """morphology "value": the value stream reads the features, the policy does not, so the
    policy's weights and actions are those of a network without features."""
    chain = bodies["chain"]
    critic_only = build("chain", arch="graph", morphology="value")
    plain = nnx.clone(build("chain", arch="graph"))
    plain_widths = jax.tree.map(jnp.shape, nnx.state(plain.value, nnx.Param))
    critic_widths = jax.tree.map(jnp.shape, nnx.state(critic_only.value, nnx.Param))
    first = plain_widths["trunk"]["encoder"]["layers"][0]["kernel"]
    assert critic_widths["trunk"]["encoder"]["layers"][0]["kernel"] == (
        first[0] + MORPHOLOGY_WIDTH, first[1])
    nnx.update(plain.policy, nnx.state(critic_only.policy, nnx.Param))
    obs = random_obs(obs_sizes_of(chain), BATCH)
    with_critic, without = mode_of(critic_only, obs), mode_of(plain, obs)
    for m in chain.actuated_modules:
        np.testing.assert_array_equal(with_critic.actions[m], without.actions[m])


def test_a_large_negative_hop_bias_acts_as_a_hop_mask(bodies, obs_sizes_of, random_obs, build):
    """A bias of -1e9 on every pair 2 or more hops apart gives the attention of
    max_hops=1: the bias lands on the right module pairs in every head."""
    chain = bodies["chain"]
    biased = nnx.clone(build("chain", arch="attention", attention={"hop_bias": 2}))
    masked = build("chain", arch="attention", attention={"max_hops": 1})
    shared_weights = {path: v for path, v in nnx.to_flat_state(nnx.state(biased, nnx.Param))
                      if "hop_bias" not in path}
    assert shared_weights.keys() == dict(nnx.to_flat_state(nnx.state(masked, nnx.Param))).keys()
    for path, variable in nnx.to_flat_state(nnx.state(biased, nnx.Param)):
        if "hop_bias" in path:
            assert variable[...].shape == (2, 3)  # heads x distances 0..2, for any body
            variable[...] = jnp.array([[0.0, 0.0, -1e9]] * 2)
    nnx.update(masked, nnx.from_flat_state(shared_weights))
    obs = random_obs(obs_sizes_of(chain), BATCH)
    got, expected = mode_of(biased, obs), mode_of(masked, obs)
    for m in chain.module_names:
        np.testing.assert_allclose(got.value_estimates[m], expected.value_estimates[m],
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("arch", TOKEN_ARCHS)
def test_a_network_built_for_centipede_4_acts_on_centipede_6_and_8(
    arch, obs_sizes_of, random_obs, small_config
):
    """The features exist for any body and have one width, so weights made for centipede-4
    (with max sizes that hold centipede-8) act unchanged on the larger bodies."""
    centipedes = {n: load_body(f"centipede-{n}") for n in (4, 6, 8)}
    sizes = {n: obs_sizes_of(b) for n, b in centipedes.items()}
    config = small_config(arch=arch, **WITH_FEATURES, max_modules=12,
                          max_obs_size=max(sizes[8].values()), max_action_size=2)
    trained = make_network(centipedes[4], sizes[4], config, rngs=nnx.Rngs(0))
    weights = nnx.state(trained, nnx.Param)
    for n in (6, 8):
        other = make_network(centipedes[n], sizes[n], config, rngs=nnx.Rngs(n))
        assert count_parameters(other) == count_parameters(trained)
        nnx.update(other, weights)
        out = mode_of(other, random_obs(sizes[n], BATCH))
        assert set(out.actions) == set(centipedes[n].actuated_modules)
        assert all(np.all(np.isfinite(a)) for a in out.actions.values()), n
        assert all(np.all(np.isfinite(v)) for v in out.value_estimates.values()), n


def test_attention_with_morphology_and_hop_bias_learns_the_toy_task():
    """As test_networks_learning.py (threshold -15; a working learner reaches about -7)."""
    env = TargetReachingEnv(episode_length=20)
    network = make_network(
        env.body, env.obs_sizes,
        NetworkConfig(arch="attention", policy_hidden_sizes=(32, 32),
                      value_hidden_sizes=(32, 32), embedding_size=32, morphology="policy_and_value",
                      attention=AttentionConfig(layers=1, hop_bias=2)),
        rngs=nnx.Rngs(0),
    )
    config = PPOConfig(n_envs=32, rollout_length=20, n_epochs=4, n_minibatches=4,
                       learning_rate=3e-3, total_steps=32 * 20 * 40, iterations_per_call=10)
    final = train_from_scratch([(env, network)], config).metrics["episode/team_return"]
    print("attention with morphology and hop bias", final)
    assert final > -15.0, final
