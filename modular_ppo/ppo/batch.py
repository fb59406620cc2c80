"""From a rollout to the training batch, and from the batch to minibatches of environments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct
from jax.sharding import Mesh
from jaxtyping import Array, Float, Int

from modular_ppo.networks.contract import NetState
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.gae import per_key_gae, team_advantage
from modular_ppo.ppo.rollout import Rollout
from modular_ppo.ppo.sharding import along_envs


@struct.dataclass
class Minibatch:
    """Whole trajectories of a set of environments; leaves are [T, B, ...] unless noted."""

    recurrent: NetState
    """The network's recurrent state at the start of the rollout, [B, ...]."""
    obs: dict[str, Float[Array, "time env _obs"]]
    extras: dict[str, Any]
    done: Float[Array, "time env"]
    old_loglikelihoods: dict[str, Float[Array, "time env"]]
    advantages: dict[str, Float[Array, "time env"]]
    """Policy key -> the advantage its head is trained on (not yet normalized)."""
    value_targets: dict[str, Float[Array, "time env"]]
    """Value key -> the GAE return its head regresses to."""


def policy_advantages(
    advantages: dict[str, Float[Array, "*batch"]],
    policy_keys: Sequence[str],
    combine: bool,
) -> dict[str, Float[Array, "*batch"]]:
    """The advantage each policy head is trained on: its own module's, or with `combine`
    the team advantage (summed over every module with a value head) for all of them."""
    if combine:
        team = team_advantage(advantages)
        return {key: team for key in policy_keys}
    return {key: advantages[key] for key in policy_keys}


def make_batch(
    recurrent: NetState, rollout: Rollout, config: PPOConfig
) -> tuple[Minibatch, dict[str, Float[Array, "time env"]]]:
    """The whole rollout as one batch (all N environments), and each module's GAE.

    recurrent: the network's recurrent state when the rollout started, [N, ...].
    """
    rewards = jax.tree.map(lambda reward: reward * config.reward_scale, rollout.rewards)
    advantages = per_key_gae(
        rewards, rollout.values, rollout.last_values, rollout.done, rollout.truncated,
        config.gamma, config.gae_lambda,
    )
    batch = Minibatch(
        recurrent=recurrent,
        obs=rollout.obs,
        extras=rollout.extras,
        done=rollout.done,
        old_loglikelihoods=rollout.loglikelihoods,
        advantages=policy_advantages(
            advantages, tuple(rollout.loglikelihoods), config.combine_advantages
        ),
        value_targets=jax.tree.map(jnp.add, rollout.values, advantages),
    )
    return batch, advantages


def split_environments(
    batch: Minibatch, order: Int[Array, "env"], n_minibatches: int
) -> Minibatch:
    """Shuffle environments by `order` and cut them into n_minibatches minibatches, stacked
    on a new leading axis (time stays whole)."""

    def env_first(x):  # [N, ...] -> [M, N / M, ...]
        return x[order].reshape(n_minibatches, -1, *x.shape[1:])

    def time_first(x):  # [T, N, ...] -> [M, T, N / M, ...]
        x = x[:, order].reshape(x.shape[0], n_minibatches, -1, *x.shape[2:])
        return jnp.moveaxis(x, 1, 0)

    return batch.replace(
        recurrent=jax.tree.map(env_first, batch.recurrent),
        **{
            field: jax.tree.map(time_first, getattr(batch, field))
            for field in ("obs", "extras", "done", "old_loglikelihoods", "advantages",
                          "value_targets")
        },
    )


def minibatch_shardings(minibatches: Minibatch, mesh: Mesh) -> Minibatch:
    """For minibatches stacked by `split_environments`: each minibatch's environments split
    over the mesh, so every device trains on its share of every minibatch."""
    return along_envs(minibatches, 2, mesh).replace(
        recurrent=along_envs(minibatches.recurrent, 1, mesh)
    )
