"""The `shared`, `graph` and `attention` architectures: one policy and one value stream
over module tokens, so every module is served by the same weights."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.networks.actor_critic import GaussianParameters, ModularActorCritic
from modular_ppo.networks.config import NetworkConfig
from modular_ppo.networks.contract import NetState
from modular_ppo.networks.heads import GaussianHead, ValueHead
from modular_ppo.networks.layout import BodyLayout
from modular_ppo.networks.recurrent import Carry
from modular_ppo.networks.stream import Stream
from modular_ppo.networks.tokens import (
    global_size,
    pack_tokens,
    padded_observations,
    token_size,
    with_global_features,
)

TrunkBuilder = Callable[[BodyLayout, NetworkConfig, int, tuple[int, ...], nnx.Rngs], Any]
"""(layout, config, inputs, hidden sizes, rngs) -> a token trunk [modules, batch, inputs]
-> [modules, batch, F] with an `out_features` attribute."""


def swap_batch_and_modules(carry: Carry) -> Carry:
    """The state keeps the batch axis first (the contract); the streams run module-major."""
    return jax.tree.map(lambda c: c.swapaxes(0, 1), carry)


class TokenNetwork(ModularActorCritic):
    """Policy and value streams over tokens [modules, batch, token].

    The policy head outputs `max_action_size` actions per token; a module uses the first
    `n_actuators` of them. Parameter shapes depend only on the config and the padded
    sizes, so the weights fit any body within `max_modules` / `max_obs_size` /
    `max_action_size`. The state holds carries [batch, modules, recurrent_size].
    Tokens carry the modules' morphology features where `config.morphology_in(stream)`.
    """

    def __init__(self, layout: BodyLayout, config: NetworkConfig, trunk: TrunkBuilder, *,
                 rngs: nnx.Rngs):
        """trunk: builds the architecture's token trunk (`networks.registry`), once for the
        policy stream and once for the value stream."""
        super().__init__(layout, config, rngs=rngs)
        identity = config.module_identity
        policy_inputs = token_size(layout, identity, config.morphology_in("policy"))
        value_inputs = token_size(layout, identity, config.morphology_in("value")) + (
            global_size(layout) if config.centralized_critic else 0
        )
        policy_trunk = trunk(layout, config, policy_inputs, config.policy_hidden_sizes, rngs)
        value_trunk = trunk(layout, config, value_inputs, config.value_hidden_sizes, rngs)
        self.policy = Stream(
            policy_trunk,
            policy_trunk.out_features,
            lambda n: GaussianHead(n, layout.max_action_size, config, rngs=rngs),
            config,
            rngs=rngs,
        )
        self.value = Stream(
            value_trunk,
            value_trunk.out_features,
            lambda n: ValueHead(n, rngs=rngs),
            config,
            rngs=rngs,
        )

    def initialize_state(self, batch_size: int) -> NetState:
        shape = (batch_size, len(self.layout.modules))
        return {
            "policy": self.policy.initial_carry(shape),
            "value": self.value.initial_carry(shape),
        }

    def forward(
        self, state: NetState, obs: dict[str, Float[Array, "batch _obs"]]
    ) -> tuple[NetState, dict[str, GaussianParameters], dict[str, Float[Array, "batch"]]]:
        layout = self.layout
        config = self.config
        padded = padded_observations(layout, obs)
        tokens = pack_tokens(layout, padded, config.module_identity, config.morphology_in("policy"))
        critic_tokens = pack_tokens(
            layout, padded, config.module_identity, config.morphology_in("value")
        )
        if config.centralized_critic:
            critic_tokens = with_global_features(layout, critic_tokens, padded)
        policy_carry, (mean, std) = self.policy(swap_batch_and_modules(state["policy"]), tokens)
        value_carry, value = self.value(swap_batch_and_modules(state["value"]), critic_tokens)
        policies = {}
        for m in layout.actuated:
            i, n = layout.index(m), layout.action_size(m)
            policies[m] = (mean[i, :, :n], std[i, :, :n])
        values = {m: value[i] for i, m in enumerate(layout.modules)}
        next_state = {
            "policy": swap_batch_and_modules(policy_carry),
            "value": swap_batch_and_modules(value_carry),
        }
        return next_state, policies, values
