"""The stateful contract with a recurrent core: state carries memory and resets where done."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

BATCH = 4
DONE = jnp.asarray([True, False, True, False])


@nnx.jit
def act(net, state, obs):
    return net(state, obs, deterministic=True)


# Separate networks keep a carry per module; the token architectures share one code path
# (a core over [modules, batch]), covered here by shared and graph with both cell kinds.
@pytest.mark.parametrize(
    ("arch", "recurrent"), [("separate", "gru"), ("shared", "lstm"), ("graph", "gru")]
)
def test_recurrent_state_carries_memory_and_resets_where_done(
    arch, recurrent, chain, obs_sizes_of, random_obs, build
):
    net = build("chain", arch=arch, recurrent=recurrent)
    obs = random_obs(obs_sizes_of(chain), BATCH)
    initial = net.initialize_state(BATCH)
    leaves = jax.tree.leaves(initial)
    assert leaves and all(x.shape[0] == BATCH and not np.any(x) for x in leaves)

    first = act(net, initial, obs)
    carried = first.next_state
    assert jax.tree.structure(carried) == jax.tree.structure(initial)
    assert all(np.any(x) for x in jax.tree.leaves(carried))
    # The same observations act differently with memory of a step than without.
    second = act(net, carried, obs)
    assert any(
        not np.allclose(second.output.actions[m], first.output.actions[m], atol=1e-6)
        for m in chain.actuated_modules
    )

    reset = net.reset_state(carried, DONE)
    for before, after in zip(jax.tree.leaves(carried), jax.tree.leaves(reset)):
        np.testing.assert_array_equal(after[np.asarray(DONE)], 0.0)
        np.testing.assert_array_equal(after[~np.asarray(DONE)], before[~np.asarray(DONE)])
    # Reset entries act like a fresh start; the others keep their memory.
    after_reset = act(net, reset, obs).output
    for m in chain.actuated_modules:
        expected = np.where(DONE[:, None], first.output.actions[m], second.output.actions[m])
        np.testing.assert_allclose(after_reset.actions[m], expected, rtol=1e-5, atol=1e-6)


def test_feedforward_networks_have_an_empty_state(chain, obs_sizes_of, random_obs, build):
    net = build("chain", arch="shared")
    state = net.initialize_state(BATCH)
    assert jax.tree.leaves(state) == []
    obs = random_obs(obs_sizes_of(chain), BATCH)
    step = nnx.eval_shape(lambda n: n(state, obs, deterministic=True), net)  # shapes only
    assert jax.tree.leaves(step.next_state) == []
    assert jax.tree.leaves(net.reset_state(step.next_state, DONE)) == []
