"""The environment contract: MuJoCo Playground's `State`, with module-keyed obs and reward."""

from __future__ import annotations

from typing import Any, Protocol

from flax import struct
from jaxtyping import Array, Float, PRNGKeyArray

from modular_ppo.body import BodyGraph


@struct.dataclass
class State:
    """One environment's state (a batch of them under `vmap`).

    data: the simulator's state (`mjx.Data`).
    obs: module name -> Float[obs_size] for every module.
    reward: module name -> Float[] for every module; summed over modules it equals the
        single-agent task reward.
    done: Float[] 1.0 when this step ended the episode (termination or truncation).
    metrics: per-step scalars, at least "forward_velocity" (velocity along the task's
        direction). ModularEnv adds "invalid_action" (1.0 when the action had a non-finite
        entry, treated as 0) and "reward/<term>" (each term's value for the whole body).
    info: "truncation" Float[] (1.0 when the episode hit its time limit and did not
        terminate), "steps" Int[] steps in the current episode, "episode" running
        sums of the episode in progress, "last_episode" the values of the most recently
        finished episode (team_return, return/<module>, length, and forward_velocity as
        its mean over the episode's steps), and whatever the env needs for auto-reset
        (ModularEnv: "rng", the key of the next fresh start). After a done
        step the returned state is already the first state of the next episode
        (auto-reset), but `reward`, `done`, `metrics` and `info["truncation"]` describe
        the step that finished.
    """

    data: Any
    obs: dict[str, Float[Array, "..."]]
    reward: dict[str, Float[Array, "..."]]
    done: Float[Array, "..."]
    metrics: dict[str, Float[Array, "..."]]
    info: dict[str, Any]


class ModularEnvProtocol(Protocol):
    """What the PPO core needs of an environment. Single-env functions; callers vmap."""

    body: BodyGraph
    obs_sizes: dict[str, int]
    """module name -> observation size, for every module."""
    action_sizes: dict[str, int]
    """actuated module name -> number of actions; actions are in [-1, 1]."""
    episode_length: int

    def reset(self, key: PRNGKeyArray) -> State: ...

    def step(self, state: State, action: dict[str, Float[Array, "act"]]) -> State: ...


__all__ = ["State", "ModularEnvProtocol"]
