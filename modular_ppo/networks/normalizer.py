"""Running per-module observation statistics and the normalization they define."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import nnx
from jaxtyping import Array, Float

# Features whose spread is below this (e.g. constant ones) are centered, not amplified.
_STD_FLOOR = 1e-6


class NormalizerStatistic(nnx.Variable):
    """Running observation statistics: nnx state (saved in checkpoints) that is not an
    `nnx.Param`, so optimizers and `jax.grad` over parameters leave it alone."""


class RunningStatistics(nnx.Module):
    """Count, mean and sum of squared deviations (M2) of one module's observations.

    Batches are merged with the parallel form of Welford's algorithm (Chan et al.), so
    the result matches the mean and variance of all observations seen, in any batching.
    """

    def __init__(self, size: int):
        self.count = NormalizerStatistic(jnp.zeros((), jnp.float32))
        self.mean = NormalizerStatistic(jnp.zeros(size, jnp.float32))
        self.m2 = NormalizerStatistic(jnp.zeros(size, jnp.float32))

    def update(self, batch: Float[Array, "... obs"]) -> None:
        batch = batch.reshape(-1, batch.shape[-1]).astype(jnp.float32)
        n_b = jnp.asarray(batch.shape[0], jnp.float32)
        mean_b = batch.mean(axis=0)
        m2_b = ((batch - mean_b) ** 2).sum(axis=0)
        n_a, mean_a, m2_a = self.count[...], self.mean[...], self.m2[...]
        n = n_a + n_b
        delta = mean_b - mean_a
        self.count[...] = n
        self.mean[...] = mean_a + delta * (n_b / n)
        self.m2[...] = m2_a + m2_b + delta**2 * (n_a * n_b / n)

    def merge(self, others: list[RunningStatistics]) -> None:
        """Replace these statistics by those of all observations `others` saw together."""
        count = sum(o.count[...] for o in others)
        mean = sum(o.count[...] * o.mean[...] for o in others) / jnp.maximum(count, 1.0)
        m2 = sum(o.m2[...] + o.count[...] * (o.mean[...] - mean) ** 2 for o in others)
        self.count[...], self.mean[...], self.m2[...] = count, mean, m2

    @property
    def variance(self) -> Float[Array, "obs"]:
        """Population variance of everything seen (0 before the first update)."""
        return self.m2[...] / jnp.maximum(self.count[...], 1.0)

    def normalize(self, obs: Float[Array, "*batch obs"], clip: float) -> Float[Array, "*batch obs"]:
        """(obs - mean) / std, clipped; the identity until statistics exist."""
        mean = jax.lax.stop_gradient(self.mean[...])
        std = jnp.maximum(jnp.sqrt(jax.lax.stop_gradient(self.variance)), _STD_FLOOR)
        normalized = jnp.clip((obs - mean) / std, -clip, clip)
        return jnp.where(self.count[...] > 0, normalized, obs)


class ObservationNormalizer(nnx.Module):
    """Running statistics for each module's observations, keyed by module name."""

    def __init__(self, obs_sizes: dict[str, int], clip: float):
        self.clip = clip
        self.statistics = nnx.Dict({m: RunningStatistics(n) for m, n in obs_sizes.items()})

    def update(self, obs: dict[str, Float[Array, "... _obs"]]) -> None:
        for module, stats in self.statistics.items():
            stats.update(obs[module])

    def __call__(
        self, obs: dict[str, Float[Array, "batch _obs"]]
    ) -> dict[str, Float[Array, "batch _obs"]]:
        return {m: stats.normalize(obs[m], self.clip) for m, stats in self.statistics.items()}
