"""The stateful network contract between networks and the PPO core.

Per-module arrays are in dicts keyed by module name; their feature sizes differ between
modules, so those axes are written `_obs` / `_act` (not checked for equality across keys).

Everything a network holds is nnx state: `nnx.Param` (what optimizers and `jax.grad` act
on), `NormalizerStatistic` (running observation statistics, not a Param) and the sampling
RNG, so `nnx.split` / `nnx.merge` around `jax.jit`, and checkpoints of
`nnx.state(network)`, carry all of it. Body structure (module order, tree, hop mask) is
static, in the graph definition.
"""

from __future__ import annotations

from typing import Any

from flax import nnx, struct
from jaxtyping import Array, Bool, Float

NetState = Any
"""A pytree with a leading batch axis on every leaf (recurrent carries); a network
without recurrence has a state with no leaves."""


@struct.dataclass
class NetworkOutput:
    """One call's actions, their log-likelihoods and the value estimates."""

    actions: dict[str, Float[Array, "batch _act"]]
    """Actuated module -> actions in [-1, 1] (what the env receives)."""
    loglikelihoods: dict[str, Float[Array, "batch"]]
    """Actuated module -> log-likelihood of `actions` under the current policy."""
    value_estimates: dict[str, Float[Array, "batch"]]
    """Every module -> its value estimate."""
    extras: dict[str, Any]
    """What the network needs to re-evaluate the same actions later: "raw_actions",
    actuated module -> pre-squash samples [batch, act]. Stored by the rollout and passed
    back as `extras`."""


@struct.dataclass
class StepOutput:
    """What `ModularNetwork.__call__` returns."""

    next_state: NetState
    """The network state after this step (the recurrent carries), batch-first."""
    output: NetworkOutput
    regularization_loss: Float[Array, ""]
    """The network's own loss term: -entropy_weight * policy entropy (summed over actuated
    modules, averaged over the batch)."""


class ModularNetwork(nnx.Module):
    """Base class of every architecture.

    `initialize_state(batch_size)`: the state at the start of an episode (a `NetState`:
      recurrent carries with a leading batch axis; no leaves without a recurrent core).
    `reset_state(state, done)`: `state` with the entries where `done` is set (bool, or
      float with nonzero meaning done, as in the env's `State.done`) back to their
      initial value, the others untouched.
    `__call__(state, obs, extras=None, deterministic=False)`:
      obs: module -> Float[batch, obs_size] for every module. With `extras=None` the policy
      samples new actions from the network's own `nnx.Rngs` stream (or takes the mode,
      squash(mean), when deterministic); with `extras` from an earlier call
      (`output.extras`: the pre-squash samples, "raw_actions") it re-evaluates those same
      actions (log-likelihoods under the current parameters, no randomness drawn).
      Returns a `StepOutput`: `next_state`, `output` (`NetworkOutput`: actions and
      log-likelihoods keyed by actuated module, values keyed by every module) and
      `regularization_loss`.
    `update_statistics(obs)`: update observation normalizer statistics from a batch
      module -> Float[..., obs_size]; called outside the gradient step.
    """

    def initialize_state(self, batch_size: int) -> NetState:
        raise NotImplementedError

    def reset_state(
        self, state: NetState, done: Bool[Array, "batch"] | Float[Array, "batch"]
    ) -> NetState:
        raise NotImplementedError

    def __call__(self, state: NetState, obs: dict[str, Float[Array, "batch _obs"]],
                 extras: dict[str, Any] | None = None,
                 deterministic: bool = False) -> StepOutput:
        raise NotImplementedError

    def update_statistics(self, obs: dict[str, Float[Array, "... _obs"]]) -> None:
        raise NotImplementedError
