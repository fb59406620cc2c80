"""Stage 3 of the pipeline: module-keyed actor-critic networks (Flax NNX). Each name's
docstring is its contract:

- building a network: `make_network(body, obs_sizes, config, rngs=...)` (factory.py);
  settings: `NetworkConfig` with `GraphConfig` and `AttentionConfig` nested (config.py:
  the architectures "separate", "shared", "graph", "attention"; the body's morphology
  features on module tokens, `morphology`, and the attention's hop bias, `hop_bias`);
- the stateful contract the PPO core relies on: `ModularNetwork`, `NetState`,
  `NetworkOutput`, `StepOutput` (contract.py: calls, state, what the network holds);
  the base of every architecture: `ModularActorCritic` (actor_critic.py);
- observation statistics: `NormalizerStatistic` (normalizer.py: nnx state, not a Param);
- the policy distribution: `ActionDistribution` (distributions.py: tanh-squashed or
  clipped diagonal Gaussian, log-likelihoods and entropy);
- `count_parameters` (parameters.py);
- errors: `NetworkConfigError`, `MaxSizeTooSmall` (errors.py).
"""

from modular_ppo.networks.actor_critic import ModularActorCritic
from modular_ppo.networks.config import AttentionConfig, GraphConfig, NetworkConfig
from modular_ppo.networks.contract import ModularNetwork, NetState, NetworkOutput, StepOutput
from modular_ppo.networks.distributions import ActionDistribution
from modular_ppo.networks.errors import MaxSizeTooSmall, NetworkConfigError
from modular_ppo.networks.factory import make_network
from modular_ppo.networks.normalizer import NormalizerStatistic
from modular_ppo.networks.parameters import count_parameters

__all__ = [
    "ActionDistribution",
    "AttentionConfig",
    "GraphConfig",
    "ModularActorCritic",
    "MaxSizeTooSmall",
    "ModularNetwork",
    "NetState",
    "NetworkConfig",
    "NetworkConfigError",
    "NetworkOutput",
    "NormalizerStatistic",
    "StepOutput",
    "count_parameters",
    "make_network",
]
