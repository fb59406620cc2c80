import jax
import jax.numpy as jnp
import numpy as np
import optax

from modular_ppo.ppo import PPOConfig, make_optimizer


def updates(config, gradients, params=(1.0,)):
    optimizer = make_optimizer(config)
    params = jnp.asarray(params)
    state = optimizer.init(params)
    steps = []
    for g in gradients:
        update, state = optimizer.update(jnp.asarray(g), state, params)
        params = optax.apply_updates(params, update)
        steps.append(float(update[0]))
    return steps


def test_gradient_clipping_caps_the_global_norm_before_adam():
    # Clipped to norm 1, gradients 10 then 1 look identical to Adam: the second step is a
    # full learning-rate step. Unclipped, the large first gradient shrinks it.
    clipped = updates(PPOConfig(learning_rate=0.1, gradient_clipping=1.0), [[10.0], [1.0]])
    unclipped = updates(PPOConfig(learning_rate=0.1, gradient_clipping=None), [[10.0], [1.0]])
    np.testing.assert_allclose(clipped[1], -0.1, rtol=1e-4)
    assert -0.08 < unclipped[1] < -0.07


def test_weight_decay_switches_to_adamw():
    decayed = updates(PPOConfig(learning_rate=0.1, weight_decay=0.5), [[0.0]], params=(2.0,))
    plain = updates(PPOConfig(learning_rate=0.1, weight_decay=None), [[0.0]], params=(2.0,))
    np.testing.assert_allclose(decayed[0], -0.1 * 0.5 * 2.0, rtol=1e-5)
    assert plain[0] == 0.0


def test_parameters_stacked_by_shape_get_the_per_array_update():
    """The optimizer runs on the parameters stacked by shape: the same clipped AdamW step for
    every parameter as the per-array chain gives, and Adam's moments held as those stacks."""
    params = {"a": jnp.arange(6.0).reshape(2, 3), "b": {"c": jnp.ones(4), "d": -jnp.ones((2, 3))}}
    config = PPOConfig(learning_rate=0.1, gradient_clipping=1.0, weight_decay=0.01)
    per_array = optax.chain(optax.clip_by_global_norm(1.0),
                            optax.adamw(0.1, weight_decay=0.01))
    results = []
    for optimizer in (make_optimizer(config), per_array):
        state, current = optimizer.init(params), params
        for scale in (5.0, 0.5):
            grads = jax.tree.map(lambda x: scale * jnp.sin(3.0 * x + 1.0), current)
            update, state = optimizer.update(grads, state, current)
            current = optax.apply_updates(current, update)
        results.append((current, state))
    (stacked, stacked_state), (expected, _) = results
    for got, want in zip(jax.tree.leaves(stacked), jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert {np.shape(leaf) for leaf in jax.tree.leaves(stacked_state)} == {(), (1, 4), (2, 2, 3)}


def test_an_annealed_learning_rate_falls_linearly_to_zero_over_the_run():
    # 4 iterations of 2 epochs x 2 minibatches: 16 updates. With a constant gradient each
    # Adam step is the step size itself: 0.1 x (1 - k / 16) at update k.
    config = PPOConfig(n_envs=4, rollout_length=2, n_epochs=2, n_minibatches=2,
                       total_steps=32, learning_rate=0.1, anneal_learning_rate=True)
    assert config.total_updates == 16
    steps = updates(config, [[1.0]] * 17)
    np.testing.assert_allclose(steps, [-0.1 * (1 - k / 16) for k in range(17)], atol=1e-6)
    np.testing.assert_allclose(updates(PPOConfig(learning_rate=0.1), [[1.0]] * 3), -0.1,
                               atol=1e-6)  # off by default: a constant step size


def test_total_updates_count_the_last_partial_iteration():
    config = PPOConfig(n_envs=4, rollout_length=2, n_epochs=3, n_minibatches=2, total_steps=9)
    assert config.total_updates == 2 * 3 * 2  # 9 steps: 2 iterations of 8
