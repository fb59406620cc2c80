"""The squashed Gaussians against numpy references (change of variables, Monte Carlo)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from modular_ppo.networks import ActionDistribution

TANH = ActionDistribution("tanh_gaussian")
CLIPPED = ActionDistribution("clipped_gaussian")

# (mean, std) per action dimension: centered, shifted, saturated, wide, narrow.
MEANS = np.array([0.0, 0.7, -2.5, 0.3, 1.5])
STDS = np.array([0.6, 0.2, 1.0, 2.0, 0.05])


def numpy_tanh_log_density(action: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """Density of a = tanh(u), u ~ N(mean, std), in float64: p(a) = N(atanh a) / (1 - a^2)."""
    u = np.arctanh(action)
    gauss = -0.5 * ((u - mean) / std) ** 2 - np.log(std) - 0.5 * np.log(2 * np.pi)
    return gauss - np.log1p(-(action**2))


def test_tanh_log_likelihood_matches_change_of_variables():
    rng = np.random.default_rng(0)
    raw = MEANS + STDS * rng.standard_normal((64, MEANS.size))
    raw = np.clip(raw, -4.0, 4.0)  # keep atanh(tanh(u)) exact in float64
    ll = TANH.log_likelihood(
        jnp.asarray(MEANS, jnp.float32),
        jnp.asarray(STDS, jnp.float32),
        jnp.asarray(raw, jnp.float32),
    )
    reference = numpy_tanh_log_density(np.tanh(raw), MEANS, STDS).sum(axis=-1)
    np.testing.assert_allclose(np.asarray(ll), reference, rtol=1e-4, atol=1e-3)


def test_tanh_density_integrates_to_one_over_actions():
    # Integrate exp(log p(a)) over a in (-1, 1) per dimension, with a = tanh(u) on a fine
    # grid of u: da = (1 - tanh(u)^2) du.
    u = np.linspace(-12, 12, 200_001)
    for mean, std in zip(MEANS, STDS):
        ll = TANH.log_likelihood(
            jnp.full((u.size, 1), mean, jnp.float32),
            jnp.full((u.size, 1), std, jnp.float32),
            jnp.asarray(u[:, None], jnp.float32),
        )
        da = 1.0 - np.tanh(u) ** 2
        mass = np.trapezoid(np.exp(np.asarray(ll, np.float64)) * da, u)
        assert mass == pytest.approx(1.0, abs=2e-3), (mean, std)


def test_tanh_entropy_matches_monte_carlo():
    rng = np.random.default_rng(1)
    u = MEANS + STDS * rng.standard_normal((400_000, MEANS.size))
    u = np.clip(u, -9.0, 9.0)  # |u| > 9 has probability < 1e-5 here; keeps atanh exact
    log_p = numpy_tanh_log_density(np.tanh(u), MEANS, STDS)
    mc_per_dim = -log_p.mean(axis=0)
    mc_error = log_p.std(axis=0) / np.sqrt(u.shape[0])
    entropy = [
        float(TANH.entropy(jnp.asarray([m], jnp.float32), jnp.asarray([s], jnp.float32)))
        for m, s in zip(MEANS, STDS)
    ]
    np.testing.assert_allclose(entropy, mc_per_dim, atol=5 * mc_error.max() + 2e-3)


def test_tanh_entropy_is_differentiable_in_mean_and_std():
    entropy_grad = jax.jit(jax.grad(lambda m, s: TANH.entropy(m, s).sum(), argnums=(0, 1)))
    grad_mean, grad_std = entropy_grad(
        jnp.asarray(MEANS, jnp.float32), jnp.asarray(STDS, jnp.float32)
    )
    # Saturation lowers entropy: moving the mean away from 0 decreases it.
    assert np.all(np.sign(np.asarray(grad_mean))[MEANS != 0] == -np.sign(MEANS[MEANS != 0]))
    assert np.all(np.isfinite(np.asarray(grad_std)))


def test_clipped_gaussian_scores_the_unclipped_sample():
    mean, std = jnp.asarray(MEANS, jnp.float32), jnp.asarray(STDS, jnp.float32)
    raw = jnp.asarray([0.5, 1.7, -3.0, -0.2, 1.4], jnp.float32)
    np.testing.assert_allclose(
        np.asarray(CLIPPED.squash(raw)), np.clip(np.asarray(raw), -1, 1), atol=0
    )
    gauss = -0.5 * ((np.asarray(raw) - MEANS) / STDS) ** 2 - np.log(STDS) - 0.5 * np.log(2 * np.pi)
    assert float(CLIPPED.log_likelihood(mean, std, raw)) == pytest.approx(gauss.sum(), rel=1e-5)
    gauss_entropy = (0.5 * np.log(2 * np.pi * np.e * STDS**2)).sum()
    assert float(CLIPPED.entropy(mean, std)) == pytest.approx(gauss_entropy, rel=1e-5)


def test_actions_stay_in_range():
    raw = jnp.asarray([-50.0, -1.5, -0.3, 0.0, 0.9, 3.0, 50.0])
    for dist in (TANH, CLIPPED):
        actions = np.asarray(dist.squash(raw))
        assert np.all(np.abs(actions) <= 1.0)
        assert np.all(np.diff(actions) >= 0)
