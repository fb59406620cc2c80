"""Stage 3 of the pipeline: module-keyed actor-critic networks (Flax NNX).

Contract (what later stages may use):
- `make_network(body, obs_sizes, config, *, rngs) -> ModularNetwork` builds the network of
  `config.arch` for a `BodyGraph`; `obs_sizes` is the env's module -> observation size.
  Action sizes are the modules' actuator counts; actions are in [-1, 1].
- `ModularNetwork` (stateful; see `contract.py`):
  - `initialize_state(batch_size)` -> state, a pytree whose leaves have a leading batch
    axis (recurrent carries; no leaves without a recurrent core).
  - `reset_state(state, done[batch])` -> state zeroed (= initial) where done.
  - `__call__(state, obs, extras=None, deterministic=False) -> StepOutput`: obs is module
    -> Float[batch, obs_size] for every module. Returns `next_state`, `output` =
    `NetworkOutput(actions, loglikelihoods, value_estimates, extras)` with actions and
    log-likelihoods keyed by actuated module, values keyed by every module, and
    `regularization_loss` = -entropy_weight * policy entropy (summed over actuated
    modules, averaged over the batch). extras=None samples from the network's own
    `nnx.Rngs` stream (deterministic=True takes the mode, squash(mean)); passing an
    earlier call's `output.extras` (pre-squash samples, "raw_actions") re-scores those
    same actions under the current parameters, drawing no randomness.
  - `update_statistics(obs)`: merge module -> Float[..., obs_size] into the running
    observation statistics; call it outside the gradient step.
- Everything the network holds is nnx state: `nnx.Param` (what optimizers and `jax.grad`
  act on), `NormalizerStatistic` (running observation statistics, not a Param) and the
  sampling RNG, so `nnx.split` / `nnx.merge` around `jax.jit`, and checkpoints of
  `nnx.state(network)`, carry all of it. Body structure (module order, tree, hop mask)
  is static, in the graph definition.
- `NetworkConfig` (with `GraphConfig` and `AttentionConfig` nested as `graph` and
  `attention`): frozen, tyro-ready, validated (`NetworkConfigError`, a ValueError, names
  the field; the same error names the module or key for bad `obs_sizes`, observations,
  extras or state). Architectures: "separate" (policy and value MLPs per module),
  "shared" (one MLP over all module tokens: padded observations plus a module one-hot),
  "graph" (message passing along the module tree, one hop per round, both directions),
  "attention" (a transformer over module tokens, optionally masked to modules at most
  `attention.max_hops` apart). Every architecture has separate policy and value streams,
  an optional recurrent core (GRU / LSTM) and an optional centralized critic (values see
  all modules' observations; policies stay local). The shared, graph and attention
  weights do not depend on the body: build a network for another body with the same
  config (with `max_modules` / `max_obs_size` / `max_action_size` set) and
  `nnx.update(other, nnx.state(network, nnx.Param))`.
- `count_parameters(network) -> dict[str, int]`: "total" and per part ("policy",
  "value", "policy/<module>" or "policy/trunk", ...).
- `ActionDistribution`: tanh-squashed or clipped diagonal Gaussian (log-likelihood with
  the tanh Jacobian, entropy), for code that needs the same calculus.
"""

from modular_ppo.networks.actor_critic import ModularActorCritic
from modular_ppo.networks.config import AttentionConfig, GraphConfig, NetworkConfig
from modular_ppo.networks.contract import ModularNetwork, NetState, NetworkOutput, StepOutput
from modular_ppo.networks.distributions import ActionDistribution
from modular_ppo.networks.errors import NetworkConfigError
from modular_ppo.networks.factory import make_network
from modular_ppo.networks.normalizer import NormalizerStatistic
from modular_ppo.networks.parameters import count_parameters

__all__ = [
    "ActionDistribution",
    "AttentionConfig",
    "GraphConfig",
    "ModularActorCritic",
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
