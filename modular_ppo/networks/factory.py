"""make_network: a BodyGraph, the env's observation sizes and a config -> a network."""

from __future__ import annotations

from collections.abc import Mapping

from flax import nnx

from modular_ppo.body import BodyGraph
from modular_ppo.networks.actor_critic import ModularActorCritic
from modular_ppo.networks.config import NetworkConfig
from modular_ppo.networks.layout import BodyLayout
from modular_ppo.networks.registry import architecture


def make_network(
    body: BodyGraph, obs_sizes: Mapping[str, int], config: NetworkConfig, *, rngs: nnx.Rngs
) -> ModularActorCritic:
    """Build the `config.arch` network for `body` (`networks.registry`).

    obs_sizes: module name -> observation size, for every module of the body (the env's
    `obs_sizes`). Action sizes are the modules' actuator counts. Parameters are drawn from
    `rngs.params()`, and the sampling stream is seeded from `rngs.action()` (each falls
    back to the default stream: `nnx.Rngs(seed)` is enough).

    The shared, graph and attention weights do not depend on the body: build a network
    for another body with the same config (with `max_modules` / `max_obs_size` /
    `max_action_size` set) and `nnx.update(other, nnx.state(network, nnx.Param))`.
    """
    layout = BodyLayout.build(body, obs_sizes, config)
    return architecture(config.arch).build(layout, config, rngs)
