"""Running observation statistics against numpy, and how networks use them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from modular_ppo.networks import NormalizerStatistic, make_network
from modular_ppo.networks.normalizer import RunningStatistics


def test_merged_statistics_match_numpy_over_all_batches():
    rng = np.random.default_rng(0)
    # Uneven batches with leading [time, batch] axes, offset and scaled features.
    batches = [
        rng.normal(3.0, [0.5, 2.0, 10.0], size=shape) for shape in [(7, 3, 3), (1, 3), (40, 2, 3)]
    ]
    stats = RunningStatistics(3)
    for batch in batches:
        stats.update(jnp.asarray(batch, jnp.float32))
    everything = np.concatenate([b.reshape(-1, 3) for b in batches])
    assert float(stats.count[...]) == everything.shape[0]
    np.testing.assert_allclose(np.asarray(stats.mean[...]), everything.mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(stats.variance), everything.var(axis=0), rtol=1e-4)


def test_pooled_statistics_match_numpy_over_every_source():
    rng = np.random.default_rng(1)
    batches = [rng.normal(m, s, size=(n, 2)) for m, s, n in [(0.0, 1.0, 50), (4.0, 3.0, 7),
                                                               (-2.0, 0.1, 300)]]
    sources = []
    for batch in batches:
        stats = RunningStatistics(2)
        stats.update(jnp.asarray(batch, jnp.float32))
        sources.append(stats)
    pooled = RunningStatistics(2)
    pooled.update(jnp.ones((5, 2)))  # replaced, not added to
    pooled.merge(sources)
    everything = np.concatenate(batches)
    assert float(pooled.count[...]) == everything.shape[0]
    np.testing.assert_allclose(np.asarray(pooled.mean[...]), everything.mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(pooled.variance), everything.var(axis=0), rtol=1e-4)


def test_normalize_is_standardization_clipped_and_identity_before_data():
    stats = RunningStatistics(2)
    x = jnp.asarray([[1.0, -200.0], [3.0, 5.0]])
    np.testing.assert_array_equal(np.asarray(stats.normalize(x, clip=10.0)), np.asarray(x))
    data = np.asarray([[0.0, 10.0], [2.0, 10.0], [4.0, 10.0]], np.float32)
    stats.update(jnp.asarray(data))
    out = np.asarray(stats.normalize(x, clip=10.0))
    std = data.std(axis=0)
    np.testing.assert_allclose(out[:, 0], (np.asarray(x)[:, 0] - 2.0) / std[0], rtol=1e-5)
    # A constant feature has no spread: deviations from it are clipped, not blown up to inf.
    np.testing.assert_array_equal(out[:, 1], [-10.0, -10.0])


@nnx.jit
def update(net, obs):
    net.update_statistics(obs)


@nnx.jit
def mode(net, obs):
    return net(net.initialize_state(4), obs, deterministic=True).output


def test_network_normalizes_inside_call_with_statistics_outside_params(
    bodies, obs_sizes_of, random_obs, small_config
):
    body = bodies["chain"]
    sizes = obs_sizes_of(body)
    config = small_config(arch="shared")
    net = make_network(body, sizes, config, rngs=nnx.Rngs(3))
    plain = make_network(
        body, sizes, small_config(arch="shared", normalize_observations=False), rngs=nnx.Rngs(3)
    )
    rng = np.random.default_rng(1)
    data = {
        m: (2.0 + 3.0 * rng.standard_normal((8, 8, n))).astype(np.float32) for m, n in sizes.items()
    }
    update(net, data)

    statistics = {path[-2] for path, _ in nnx.to_flat_state(nnx.state(net, NormalizerStatistic))}
    assert statistics == set(body.module_names)
    param_paths = [path for path, _ in nnx.to_flat_state(nnx.state(net, nnx.Param))]
    assert param_paths and not any("normalizer" in path for path in param_paths)

    obs = random_obs(sizes, 4, seed=2)
    standardized = {
        m: (np.asarray(o) - data[m].mean(axis=(0, 1))) / data[m].std(axis=(0, 1))
        for m, o in obs.items()
    }
    out = mode(net, obs)
    ref = mode(plain, standardized)
    for m in out.actions:
        np.testing.assert_allclose(out.actions[m], ref.actions[m], rtol=1e-4, atol=1e-6)
    for m in out.value_estimates:
        np.testing.assert_allclose(
            out.value_estimates[m], ref.value_estimates[m], rtol=1e-4, atol=1e-5
        )

    # Restoring a checkpoint of the full nnx state restores the statistics.
    fresh = make_network(body, sizes, config, rngs=nnx.Rngs(9))
    nnx.update(fresh, nnx.state(net))
    restored = mode(fresh, obs)
    for m in out.actions:
        np.testing.assert_array_equal(restored.actions[m], out.actions[m])


def test_gradients_leave_statistics_alone(bodies, obs_sizes_of, random_obs, small_config):
    body = bodies["chain"]
    sizes = obs_sizes_of(body)
    net = make_network(body, sizes, small_config(arch="separate"), rngs=nnx.Rngs(0))
    net.update_statistics(random_obs(sizes, 16, seed=4))
    graphdef, params, rest = nnx.split(net, nnx.Param, ...)
    obs = random_obs(sizes, 4, seed=5)

    def loss(p):
        out = nnx.merge(graphdef, p, rest)(net.initialize_state(4), obs, deterministic=True)
        return sum(v.sum() for v in out.output.value_estimates.values())

    grads = jax.jit(jax.grad(loss))(params)
    leaves = jax.tree.leaves(grads)
    assert leaves and all(np.all(np.isfinite(g)) for g in leaves)
    assert any(np.any(g != 0) for g in leaves)
    assert all(not isinstance(v, NormalizerStatistic) for _, v in nnx.to_flat_state(grads))
