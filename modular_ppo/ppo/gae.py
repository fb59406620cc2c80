"""Generalized advantage estimation per module, and the team advantage."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, PyTree


def gae(
    rewards: Float[Array, "time batch"],
    values: Float[Array, "time batch"],
    last_value: Float[Array, "batch"],
    done: Float[Array, "time batch"],
    truncated: Float[Array, "time batch"],
    gamma: float,
    gae_lambda: float,
) -> Float[Array, "time batch"]:
    """GAE(lambda) of one reward stream.

    `done[t]` ends the episode at step t: the value after it is not bootstrapped and no
    advantage flows back across it. `truncated[t]` (a time limit, so also done) zeroes the
    advantage of step t itself: the return after a cut-off is unknown, so that step teaches
    nothing. `values[t]` estimates the state before step t; `last_value` the state after the
    last step.
    """
    next_values = jnp.concatenate([values[1:], last_value[None]], axis=0)

    def backwards(next_advantage, step):
        reward, value, next_value, step_done, step_truncated = step
        delta = reward + gamma * (1.0 - step_done) * next_value - value
        delta = jnp.where(step_truncated > 0, 0.0, delta)
        advantage = delta + gamma * gae_lambda * (1.0 - step_done) * next_advantage
        return advantage, advantage

    _, advantages = jax.lax.scan(
        backwards,
        jnp.zeros_like(last_value),
        (rewards, values, next_values, done, truncated),
        reverse=True,
    )
    return advantages


def per_key_gae(
    rewards: PyTree[Float[Array, "time batch"], "T"],
    values: PyTree[Float[Array, "time batch"], "T"],
    last_values: PyTree[Float[Array, "batch"], "T"],
    done: Float[Array, "time batch"],
    truncated: Float[Array, "time batch"],
    gamma: float,
    gae_lambda: float,
) -> PyTree[Float[Array, "time batch"], "T"]:
    """`gae` for every key of matching pytrees (one stream per module); done is shared."""
    per_stream = functools.partial(
        gae, done=done, truncated=truncated, gamma=gamma, gae_lambda=gae_lambda
    )
    return jax.tree.map(per_stream, rewards, values, last_values)


def team_advantage(
    advantages: PyTree[Float[Array, "time batch"]],
) -> Float[Array, "time batch"]:
    """The modules' advantages summed: GAE of the summed rewards with the summed values."""
    return functools.reduce(jnp.add, jax.tree.leaves(advantages))
