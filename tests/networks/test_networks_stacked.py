"""The separate network runs same-shaped modules as one call over stacked weights: the
same outputs and gradients as one stream at a time, with fewer matrix products."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from modular_ppo.networks import separate
from modular_ppo.networks.stacked import same_shapes

BATCH = 8


def one_by_one(streams, carries, inputs):
    next_carries, outputs = {}, {}
    for key, stream in streams.items():
        next_carries[key], outputs[key] = stream(carries[key], inputs[key])
    return next_carries, outputs


def loss_and_outputs(net, obs):
    """Sum of log-likelihoods and squared values, differentiated by parameter; the
    outputs and the next state beside it."""
    graphdef, params, rest = nnx.split(net, nnx.Param, ...)
    raw = {m: jnp.full((BATCH, net.layout.action_size(m)), 0.3) for m in net.layout.actuated}

    def loss(params):
        out = nnx.merge(graphdef, params, rest)(
            net.initialize_state(BATCH), obs, {"raw_actions": raw}
        )
        total = sum(jnp.sum(x) for x in out.output.loglikelihoods.values()) + sum(
            jnp.sum(v**2) for v in out.output.value_estimates.values()
        )
        return total, (out.output, out.next_state)

    return jax.value_and_grad(loss, has_aux=True)(params)


def dot_products(net, obs) -> int:
    jaxpr = jax.make_jaxpr(lambda: loss_and_outputs(net, obs))()
    return str(jaxpr).count("dot_general")


@pytest.mark.parametrize("recurrent", ["none", "gru"])
def test_stacked_streams_equal_one_at_a_time_with_fewer_products(
    recurrent, bodies, obs_sizes_of, random_obs, build, monkeypatch
):
    ant = bodies["ant"]
    net = build("ant", arch="separate", recurrent=recurrent)
    obs = random_obs(obs_sizes_of(ant), BATCH)
    (stacked_loss, (stacked_out, stacked_state)), stacked_grads = loss_and_outputs(net, obs)
    stacked_products = dot_products(net, obs)

    monkeypatch.setattr(separate, "run_streams", one_by_one)
    (loss, (out, state)), grads = loss_and_outputs(net, obs)
    products = dot_products(net, obs)

    np.testing.assert_allclose(stacked_loss, loss, rtol=1e-6)
    for got, want in zip(jax.tree.leaves((stacked_out, stacked_state, stacked_grads)),
                         jax.tree.leaves((out, state, grads)), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert stacked_products < products


def test_the_ants_legs_form_one_group_per_stream_kind(bodies, obs_sizes_of, random_obs, build):
    """Four same-shaped legs, each with a policy and a value stream, and a torso with a
    value stream of its own observation size: four policy calls become one, five value
    calls two."""
    ant = bodies["ant"]
    net = build("ant", arch="separate")
    obs = random_obs(obs_sizes_of(ant), BATCH)
    state = net.initialize_state(BATCH)
    legs = ["front_left", "front_right", "back_left", "back_right"]
    assert list(ant.actuated_modules) == legs
    assert same_shapes(net.policy, state["policy"], obs) == [legs]
    assert same_shapes(net.value, state["value"], obs) == [["torso"], legs]
