"""The environment contract: MuJoCo Playground's `State`, with module-keyed obs and reward."""

from __future__ import annotations

from typing import Any, Protocol

from flax import struct
from jaxtyping import Array, Float, PRNGKeyArray

from modular_ppo.body import BodyGraph


@struct.dataclass
class State:
    """One environment's state (a batch of them under `vmap`), with MuJoCo Playground's
    fields.

    data: the simulator's state (`mjx.Data`).
    obs: module name -> Float[obs_size] for every module.
    reward: module name -> Float[] for every module; summed over modules it equals the
        single-agent task reward (run_forward: Gymnasium v5's locomotion reward with the
        body's weights, see tasks.py).
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


@struct.dataclass
class StepRequest:
    """What `ModularEnv.begin_step` hands the physics and `end_step`: one environment's."""

    ctrl: Float[Array, "nu"]
    """The controls the physics holds for the step."""
    action: dict[str, Float[Array, "act"]]
    """The action as sanitized (non-finite entries 0), which the control cost reads."""
    invalid: Float[Array, ""]
    """1.0 if the action had a non-finite entry, else 0.0."""
    rng: PRNGKeyArray
    """The env's key after the step."""
    start_qpos: Float[Array, "nq"]
    """The fresh start's qpos, used if the step ends the episode."""
    start_qvel: Float[Array, "nv"]


class ModularEnvProtocol(Protocol):
    """What the PPO core needs of an environment. Single-env functions; callers vmap."""

    body: BodyGraph
    """The morphology and its partition into modules."""
    obs_sizes: dict[str, int]
    """module name -> observation size, for every module."""
    action_sizes: dict[str, int]
    """actuated module name -> number of actions; actions are in [-1, 1]."""
    episode_length: int
    """Control steps before an episode is truncated."""

    def reset(self, key: PRNGKeyArray) -> State:
        """The first state of an episode, its reset noise drawn from `key`."""
        ...

    def step(self, state: State, action: dict[str, Float[Array, "act"]]) -> State:
        """One control step; `action` is keyed by exactly the actuated modules, each in
        [-1, 1]. On done the returned state is already the next episode's first (see
        `State`)."""
        ...


__all__ = ["State", "StepRequest", "ModularEnvProtocol"]
