"""The stateful network contract between networks and the PPO core."""

from __future__ import annotations

from typing import Any

from flax import nnx, struct
from jaxtyping import Array, Bool, Float

NetState = Any
"""A pytree with a leading batch axis on every leaf (recurrent state), possibly empty ()."""


@struct.dataclass
class NetworkOutput:
    actions: dict[str, Float[Array, "batch act"]]
    """Actuated module -> actions in [-1, 1] (what the env receives)."""
    loglikelihoods: dict[str, Float[Array, "batch"]]
    """Actuated module -> log-likelihood of `actions` under the current policy."""
    value_estimates: dict[str, Float[Array, "batch"]]
    """Every module -> its value estimate."""
    extras: dict[str, Any]
    """What the network needs to re-evaluate the same actions later (e.g. pre-squash
    samples keyed by module). Stored by the rollout and passed back as `extras`."""


@struct.dataclass
class StepOutput:
    next_state: NetState
    output: NetworkOutput
    regularization_loss: Float[Array, ""]
    """The network's own loss term (entropy bonus as a negative loss, weighted)."""


class ModularNetwork(nnx.Module):
    """Base class of every architecture.

    `__call__(state, obs, extras=None, deterministic=False)`:
      obs: module -> Float[batch, obs_size]. With `extras=None` the policy samples new
      actions (or takes the mode when deterministic); with `extras` from an earlier call
      it re-evaluates those same actions (log-likelihoods under the current parameters).
    `update_statistics(obs)`: update observation normaliser statistics from a batch
      module -> Float[..., obs_size]; called outside the gradient step.
    """

    def initialize_state(self, batch_size: int) -> NetState:
        raise NotImplementedError

    def reset_state(self, state: NetState, done: Bool[Array, "batch"]) -> NetState:
        raise NotImplementedError

    def __call__(
        self,
        state: NetState,
        obs: dict[str, Float[Array, "batch obs"]],
        extras: dict[str, Any] | None = None,
        deterministic: bool = False,
    ) -> StepOutput:
        raise NotImplementedError

    def update_statistics(self, obs: dict[str, Float[Array, "... obs"]]) -> None:
        raise NotImplementedError
