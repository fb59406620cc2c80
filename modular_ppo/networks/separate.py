"""The `separate` architecture: an independent policy and value MLP per module."""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.networks.actor_critic import GaussianParameters, ModularActorCritic
from modular_ppo.networks.config import NetworkConfig
from modular_ppo.networks.contract import NetState
from modular_ppo.networks.heads import GaussianHead, ValueHead
from modular_ppo.networks.layout import BodyLayout
from modular_ppo.networks.mlp import MLP
from modular_ppo.networks.stream import Stream


class SeparateNetwork(ModularActorCritic):
    """`policy[module]` for each actuated module, `value[module]` for every module.

    A value head sees its module's observations, or with a centralized critic all
    modules' observations concatenated in module order. The state is keyed by module.
    """

    def __init__(self, layout: BodyLayout, config: NetworkConfig, *, rngs: nnx.Rngs):
        super().__init__(layout, config, rngs=rngs)
        critic_inputs = {
            m: sum(layout.obs_sizes) if config.centralized_critic else layout.obs_size(m)
            for m in layout.modules
        }

        def stream(
            inputs: int, hidden: tuple[int, ...], make_head: Callable[[int], nnx.Module]
        ) -> Stream:
            trunk = MLP(inputs, hidden, config.activation, rngs=rngs)
            return Stream(trunk, trunk.out_features, make_head, config, rngs=rngs)

        self.policy = nnx.Dict(
            {
                m: stream(
                    layout.obs_size(m),
                    config.policy_hidden_sizes,
                    lambda n, m=m: GaussianHead(n, layout.action_size(m), config, rngs=rngs),
                )
                for m in layout.actuated
            }
        )
        self.value = nnx.Dict(
            {
                m: stream(
                    critic_inputs[m], config.value_hidden_sizes, lambda n: ValueHead(n, rngs=rngs)
                )
                for m in layout.modules
            }
        )

    def initialize_state(self, batch_size: int) -> NetState:
        return {
            "policy": {m: s.initial_carry((batch_size,)) for m, s in self.policy.items()},
            "value": {m: s.initial_carry((batch_size,)) for m, s in self.value.items()},
        }

    def forward(
        self, state: NetState, obs: dict[str, Float[Array, "batch _obs"]]
    ) -> tuple[NetState, dict[str, GaussianParameters], dict[str, Float[Array, "batch"]]]:
        next_state: dict[str, dict] = {"policy": {}, "value": {}}
        policies, values = {}, {}
        for m, stream in self.policy.items():
            next_state["policy"][m], policies[m] = stream(state["policy"][m], obs[m])
        if self.config.centralized_critic:
            everything = jnp.concatenate([obs[m] for m in self.layout.modules], axis=-1)
            critic_inputs = {m: everything for m in self.value}
        else:
            critic_inputs = obs
        for m, stream in self.value.items():
            next_state["value"][m], values[m] = stream(state["value"][m], critic_inputs[m])
        return next_state, policies, values
