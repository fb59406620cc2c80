"""The PPO objective: a clipped policy loss per policy key, a critic loss per value key."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import nnx, struct
from jaxtyping import Array, Float

from modular_ppo.ppo.batch import Minibatch
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.rollout import replay


def clipped_policy_loss(
    loglikelihoods: Float[Array, "*batch"],
    old_loglikelihoods: Float[Array, "*batch"],
    advantages: Float[Array, "*batch"],
    clip_range: float,
) -> Float[Array, ""]:
    """-mean(min(r * A, clip(r, 1 - eps, 1 + eps) * A)) with r the likelihood ratio."""
    ratio = jnp.exp(loglikelihoods - old_loglikelihoods)
    clipped = jnp.clip(ratio, 1.0 - clip_range, 1.0 + clip_range)
    return -jnp.mean(jnp.minimum(ratio * advantages, clipped * advantages))


def clipping_fraction(
    loglikelihoods: Float[Array, "*batch"],
    old_loglikelihoods: Float[Array, "*batch"],
    clip_range: float,
) -> Float[Array, ""]:
    """Share of samples whose likelihood ratio lies outside [1 - eps, 1 + eps]."""
    ratio = jnp.exp(loglikelihoods - old_loglikelihoods)
    return jnp.mean((jnp.abs(ratio - 1.0) > clip_range).astype(jnp.float32))


def critic_loss(
    values: Float[Array, "*batch"], targets: Float[Array, "*batch"]
) -> Float[Array, ""]:
    return 0.5 * jnp.mean((values - targets) ** 2)


def normalize(advantages: Float[Array, "*batch"]) -> Float[Array, "*batch"]:
    return (advantages - advantages.mean()) / (advantages.std() + 1e-8)


@struct.dataclass
class LossTerms:
    actor: dict[str, Float[Array, ""]]
    critic: dict[str, Float[Array, ""]]
    clipping_fraction: dict[str, Float[Array, ""]]
    regularization: Float[Array, ""]
    total: Float[Array, ""]


def ppo_loss(
    params: nnx.State,
    rest: nnx.State,
    graphdef: nnx.GraphDef,
    batch: Minibatch,
    config: PPOConfig,
) -> tuple[Float[Array, ""], LossTerms]:
    """Total loss = sum of actor losses + critic_loss_weight * sum of critic losses + the
    network's regularization loss. `params` (nnx.Param) is what gets differentiated."""
    outputs = replay(
        graphdef, nnx.merge_state(params, rest), batch.recurrent, batch.obs, batch.extras,
        batch.done,
    )
    advantages = batch.advantages
    if config.normalize_advantages:
        advantages = jax.tree.map(normalize, advantages)
    actor = {
        key: clipped_policy_loss(
            outputs.loglikelihoods[key], batch.old_loglikelihoods[key], advantages[key],
            config.clip_range,
        )
        for key in batch.old_loglikelihoods
    }
    critic = {key: critic_loss(outputs.values[key], batch.value_targets[key])
              for key in batch.value_targets}
    total = (
        sum(actor.values())
        + config.critic_loss_weight * sum(critic.values())
        + outputs.regularization_loss
    )
    clipped = {
        key: clipping_fraction(outputs.loglikelihoods[key], batch.old_loglikelihoods[key],
                               config.clip_range)
        for key in batch.old_loglikelihoods
    }
    return total, LossTerms(actor, critic, clipped, outputs.regularization_loss, total)
