"""Episode statistics kept in `State.info`: running sums and the last finished episode."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, PRNGKeyArray


def empty_episode(module_names: tuple[str, ...]) -> dict[str, Float[Array, ""]]:
    """team_return, return/<module>, length, forward_velocity: all zero."""
    keys = ["team_return", *(f"return/{n}" for n in module_names), "length", "forward_velocity"]
    return {key: jnp.zeros(()) for key in keys}


def start_info(module_names: tuple[str, ...], rng: PRNGKeyArray) -> dict[str, Any]:
    """`State.info` of a reset: no truncation, step 0, empty running and last episodes,
    and `rng`, the key of the next fresh start."""
    episode = empty_episode(module_names)
    return {"truncation": jnp.zeros(()), "steps": jnp.zeros((), jnp.int32), "episode": episode,
            "last_episode": episode, "rng": rng}


def accumulate(
    running: dict[str, Float[Array, ""]],
    reward: dict[str, Float[Array, ""]],
    forward_velocity: Float[Array, ""],
) -> dict[str, Float[Array, ""]]:
    """Add one step to the running sums."""
    return {
        "team_return": running["team_return"] + sum(reward.values(), jnp.zeros(())),
        **{f"return/{n}": running[f"return/{n}"] + r for n, r in reward.items()},
        "length": running["length"] + 1.0,
        "forward_velocity": running["forward_velocity"] + forward_velocity,
    }


def close(
    running: dict[str, Float[Array, ""]],
    last: dict[str, Float[Array, ""]],
    done: Float[Array, ""],
) -> tuple[dict[str, Float[Array, ""]], dict[str, Float[Array, ""]]]:
    """Where `done`: last <- the finished episode (forward_velocity as its mean over the
    episode's steps) and the running sums restart from zero."""
    finished = {**running, "forward_velocity": running["forward_velocity"] / running["length"]}
    last = jax.tree.map(lambda new, old: jnp.where(done > 0, new, old), finished, last)
    running = jax.tree.map(lambda v: jnp.where(done > 0, jnp.zeros_like(v), v), running)
    return running, last
