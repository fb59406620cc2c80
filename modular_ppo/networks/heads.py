"""Output heads: Gaussian policy parameters and scalar values."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.networks.config import NetworkConfig

# Small initial policy outputs: actions start near 0 with the configured std
# (Andrychowicz et al. 2021, "What matters in on-policy RL").
_POLICY_KERNEL_INIT = nnx.initializers.variance_scaling(1e-4, "fan_in", "truncated_normal")


class GaussianHead(nnx.Module):
    """Features -> mean and std of the pre-squash Gaussian over `action_size` actions.

    std = min_std + softplus(raw + offset), with raw a learned parameter per action
    (state-independent) or a second output of the linear layer (state-dependent), and the
    offset chosen so that raw = 0 gives std = exp(init_log_std).
    """

    def __init__(
        self, in_features: int, action_size: int, config: NetworkConfig, *, rngs: nnx.Rngs
    ):
        self.action_size = action_size
        self.state_dependent_std = config.state_dependent_std
        self.min_std = config.min_std
        target = math.exp(config.init_log_std) - config.min_std
        self.std_offset = target + math.log(-math.expm1(-target))  # softplus^-1(target)
        outputs = 2 * action_size if config.state_dependent_std else action_size
        self.linear = nnx.Linear(in_features, outputs, kernel_init=_POLICY_KERNEL_INIT, rngs=rngs)
        if not config.state_dependent_std:
            self.std_raw = nnx.Param(jnp.zeros(action_size, jnp.float32))

    def __call__(
        self, features: Float[Array, "*batch feat"]
    ) -> tuple[Float[Array, "*batch act"], Float[Array, "*batch act"]]:
        out = self.linear(features)
        if self.state_dependent_std:
            mean, raw = out[..., : self.action_size], out[..., self.action_size :]
        else:
            mean, raw = out, jnp.broadcast_to(self.std_raw[...], out.shape)
        return mean, self.min_std + jax.nn.softplus(raw + self.std_offset)


class ValueHead(nnx.Module):
    """Features -> one value estimate."""

    def __init__(self, in_features: int, *, rngs: nnx.Rngs):
        self.linear = nnx.Linear(in_features, 1, rngs=rngs)

    def __call__(self, features: Float[Array, "*batch feat"]) -> Float[Array, "*batch"]:
        return self.linear(features)[..., 0]
