"""What every architecture shares: input checks, normalization, sampling and scoring."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jaxtyping import Array, Bool, Float

from modular_ppo.networks.config import NetworkConfig
from modular_ppo.networks.contract import ModularNetwork, NetState, NetworkOutput, StepOutput
from modular_ppo.networks.distributions import ActionDistribution
from modular_ppo.networks.errors import NetworkConfigError
from modular_ppo.networks.layout import BodyLayout
from modular_ppo.networks.normalizer import ObservationNormalizer

GaussianParameters = tuple[Float[Array, "batch _act"], Float[Array, "batch _act"]]
"""(mean, std) of one module's pre-squash Gaussian."""


class ModularActorCritic(ModularNetwork):
    """A policy per actuated module and a value per module, from module-keyed observations.

    Subclasses build `self.policy` / `self.value` and implement `initialize_state` and
    `forward`, which maps normalized observations to Gaussian parameters per actuated
    module and a value per module. Sampling, log-likelihoods and the entropy bonus are here.
    """

    def __init__(self, layout: BodyLayout, config: NetworkConfig, *, rngs: nnx.Rngs):
        self.layout = layout
        self.config = config
        self.distribution = ActionDistribution(config.distribution)
        self.normalizer = (
            ObservationNormalizer(
                dict(zip(layout.modules, layout.obs_sizes)), config.observation_clip
            )
            if config.normalize_observations
            else None
        )
        # Its own stream, so sampling does not depend on how many parameters were drawn.
        self.sampling = nnx.Rngs(action=rngs.action())

    def reset_state(
        self, state: NetState, done: Bool[Array, "batch"] | Float[Array, "batch"]
    ) -> NetState:
        """Zero (the initial state) every entry whose `done` is set."""

        def reset(leaf: Array) -> Array:
            where = done.astype(bool).reshape(done.shape + (1,) * (leaf.ndim - done.ndim))
            return jnp.where(where, jnp.zeros_like(leaf), leaf)

        return jax.tree.map(reset, state)

    def update_statistics(self, obs: dict[str, Float[Array, "... _obs"]]) -> None:
        self.layout.check_observations(obs, batch_dims=None)
        if self.normalizer is not None:
            self.normalizer.update(obs)

    def __call__(
        self,
        state: NetState,
        obs: dict[str, Float[Array, "batch _obs"]],
        extras: dict[str, Any] | None = None,
        deterministic: bool = False,
    ) -> StepOutput:
        self.layout.check_observations(obs, batch_dims=1)
        self._check_state(state)
        if extras is not None:
            self.layout.check_extras(extras)
        if self.normalizer is not None:
            obs = self.normalizer(obs)
        next_state, policies, values = self.forward(state, obs)

        if extras is not None:
            raw = dict(extras["raw_actions"])
        elif deterministic:
            raw = {m: mean for m, (mean, _) in policies.items()}
        else:
            raw = self._sample(policies)
        dist = self.distribution
        entropy = sum(dist.entropy(mean, std).mean() for mean, std in policies.values())
        return StepOutput(
            next_state=next_state,
            output=NetworkOutput(
                actions={m: dist.squash(raw[m]) for m in policies},
                loglikelihoods={m: dist.log_likelihood(*policies[m], raw[m]) for m in policies},
                value_estimates=values,
                extras={"raw_actions": raw},
            ),
            regularization_loss=-self.config.entropy_weight * entropy,
        )

    def forward(
        self, state: NetState, obs: dict[str, Float[Array, "batch _obs"]]
    ) -> tuple[NetState, dict[str, GaussianParameters], dict[str, Float[Array, "batch"]]]:
        raise NotImplementedError

    def _sample(
        self, policies: dict[str, GaussianParameters]
    ) -> dict[str, Float[Array, "batch _act"]]:
        """Pre-squash samples for every actuated module from one draw of noise (one RNG
        call, whatever the number of modules)."""
        sizes = [mean.shape[-1] for mean, _ in policies.values()]
        batch = next(iter(policies.values()))[0].shape[0]
        noise = jax.random.normal(self.sampling.action(), (batch, sum(sizes)))
        pieces = jnp.split(noise, np.cumsum(sizes)[:-1], axis=-1)
        return {
            m: self.distribution.sample(mean, std, eps)
            for (m, (mean, std)), eps in zip(policies.items(), pieces)
        }

    def _check_state(self, state: NetState) -> None:
        expected = jax.tree.structure(jax.eval_shape(lambda: self.initialize_state(1)))
        if jax.tree.structure(state) != expected:
            raise NetworkConfigError(
                f"state has structure {jax.tree.structure(state)}, but this network's "
                f"state is {expected}. Pass `initialize_state(batch)` or the `next_state` "
                "of the previous call."
            )
