"""Policy heads: the std parameterization and its initial value."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from flax import nnx

from modular_ppo.networks import NetworkConfig
from modular_ppo.networks.heads import GaussianHead

FEATURES = jnp.asarray(np.random.default_rng(0).standard_normal((4, 16)), jnp.float32)


def test_state_independent_std_starts_at_init_and_ignores_features():
    config = NetworkConfig(init_log_std=-1.2)
    head = GaussianHead(16, 3, config, rngs=nnx.Rngs(0))
    mean, std = head(FEATURES)
    assert mean.shape == std.shape == (4, 3)
    np.testing.assert_allclose(std, np.exp(-1.2), rtol=1e-5)
    head.std_raw[...] = jnp.asarray([0.0, 1.0, -30.0])
    _, std = head(FEATURES)
    assert std[0, 1] > std[0, 0] > std[0, 2]
    np.testing.assert_allclose(std[:, 2], config.min_std, rtol=1e-3)  # floor, not zero


def test_state_dependent_std_is_an_output_of_the_features():
    config = NetworkConfig(init_log_std=-1.2, state_dependent_std=True)
    head = GaussianHead(16, 3, config, rngs=nnx.Rngs(0))
    _, std = head(jnp.zeros((1, 16)))
    np.testing.assert_allclose(std, np.exp(-1.2), rtol=1e-5)
    head.linear.kernel[...] = head.linear.kernel[...].at[:, 3:].add(0.5)
    _, std = head(FEATURES)
    assert not np.allclose(std[0], std[1])
