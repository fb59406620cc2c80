"""A body as a JaxMARL `MultiAgentEnv`: agents = actuated modules, on MJX, jit / vmap-able.

    env = JaxMARLEnv("ant-modular")            # a bundled body, "centipede-6", an MJCF path
    env = JaxMARLEnv("ant_4x2")                # a MABrax task, MABrax's observations
    obs, state = env.reset(key)
    obs, state, rewards, dones, infos = env.step(key, state, actions)

JaxMARL's own `MultiAgentEnv.step` resets finished episodes (fresh reset noise from its
key); `step_env` is one step without reset, whose observation is the terminal one when the
episode ends (see `episodes`).

    env = mabrax_env("ant_4x2")                # MABrax to the letter (docs/interop.md)

Per step, keyed by agent: obs (Float[obs_size]: the module's observation, or MABrax's for
a MABrax task), rewards (the module's reward plus an even share of the non-agent modules',
see `team`, or with `shared_reward` the team reward, which MABrax gives every agent;
`rewards["__all__"]` is the team reward),
dones (bool, the same for every agent, also under `"__all__"`). infos: "truncation"
(1.0 when the episode hit its time limit and did not terminate) and the env's per-step
metrics ("forward_velocity", "reward/<term>", "invalid_action").

Importing jaxmarl takes about 4 s (its package imports every environment it ships, and
prints lines about optional ones, silenced here).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, PRNGKeyArray

from modular_ppo.body import BodyGraph, Partition, load_body
from modular_ppo.interop.action_checks import check_traced_actions
from modular_ppo.interop.bodies import resolve_body
from modular_ppo.env import Backend, EnvConfig, State, make_env
from modular_ppo.interop.episodes import episodic
from modular_ppo.interop.errors import InteropError
from modular_ppo.interop.mabrax import MABRAX_TASKS, agent_names, index_maps, mabrax_observer
from modular_ppo.interop.team import SharedRewardTeam, Team


@contextlib.contextmanager
def _quiet_stdout():
    """Swallow what jaxmarl prints on import. Its MABrax module (with Brax installed) sets
    sys.stdout back to sys.__stdout__ while importing, so both are replaced."""
    original, sink = sys.__stdout__, io.StringIO()
    sys.__stdout__ = sink
    try:
        with contextlib.redirect_stdout(sink):
            yield
    finally:
        sys.__stdout__ = original


with _quiet_stdout():
    from jaxmarl.environments import spaces
    from jaxmarl.environments.multi_agent_env import MultiAgentEnv


class JaxMARLEnv(MultiAgentEnv):
    """`body` (see module docstring) as a JaxMARL environment.

    body: a bundled body name, a generated one ("centipede-6"), an MJCF path, a
        BodyGraph, or one of MABrax's task names (`MABRAX_TASKS`: "ant_4x2", ...).
    partition: a partition of the body (e.g. "2x4" for the ant); not with a MABrax name.
    config: the env's settings (observations, episode length, task overrides).
    backend: "mjx" (default), or "cpu" (MuJoCo's C simulator through a callback).
    shared_reward: every agent gets the team reward (MABrax's reward), not its module's
        reward and share.
    """

    def __init__(
        self,
        body: str | BodyGraph,
        partition: Partition | None = None,
        config: EnvConfig = EnvConfig(),
        backend: Backend = "mjx",
        shared_reward: bool = False,
    ):
        task = body if isinstance(body, str) and body in MABRAX_TASKS else None
        if task is not None:
            if partition is not None:
                raise InteropError(
                    f"MABrax task '{task}' has its own partition "
                    f"({MABRAX_TASKS[task][1]}); drop partition={partition!r}."
                )
            body = load_body(*MABRAX_TASKS[task])
        self.body = resolve_body(body, partition)
        """The morphology and its partition into modules."""
        self.env = episodic(make_env(self.body, config, backend))
        """The ModularEnv stepped, without auto-reset."""
        self.mabrax_task = task
        """The MABrax task name, or None."""
        team = SharedRewardTeam if shared_reward else Team
        if task is None:
            self.team = team.of(self.env)
            obs_sizes = {a: self.env.obs_sizes[m] for a, m in self.team.module_of.items()}
            self._observe: Callable[[State], dict[str, Array]] = lambda state: {
                a: state.obs[m] for a, m in self.team.module_of.items()
            }
        else:
            action_map, obs_map = index_maps(task)
            self.team = team.of(self.env, agent_names(self.body, task, action_map))
            obs_sizes = {a: int(obs_map[a].size) for a in self.team.agents}
            observer = mabrax_observer(task, self.body, obs_map)
            self._observe = lambda state: observer(state.data)
        super().__init__(num_agents=len(self.team.agents))
        self.agents = self.team.agents
        self.observation_spaces = {
            a: spaces.Box(-jnp.inf, jnp.inf, (n,)) for a, n in obs_sizes.items()
        }
        self.action_spaces = {
            a: spaces.Box(-1.0, 1.0, (n,)) for a, n in self.team.action_sizes.items()
        }

    @partial(jax.jit, static_argnums=(0,))
    def reset(self, key: PRNGKeyArray) -> tuple[dict[str, Float[Array, "obs"]], State]:
        """The first observations and state of an episode, reset noise drawn from `key`."""
        state = self.env.reset(key)
        return self.get_obs(state), state

    def step(self, key: PRNGKeyArray, state: State, actions: dict[str, Float[Array, "act"]],
             reset_state: State | None = None) -> tuple:
        """JaxMARL's step (auto-reset), the actions' agents, shapes and dtypes checked first
        (AgentActionError naming the agent and its space), before JAX sees them."""
        check_traced_actions(actions, self.action_spaces)
        return super().step(key, state, actions, reset_state)

    @partial(jax.jit, static_argnums=(0,))
    def step_env(
        self, key: PRNGKeyArray, state: State, actions: dict[str, Float[Array, "act"]]
    ) -> tuple[
        dict[str, Float[Array, "obs"]], State, dict[str, Float[Array, ""]],
        dict[str, Bool[Array, ""]], dict[str, Float[Array, ""]],
    ]:
        """One control step without reset. actions: agent -> Float[action_size] in
        [-1, 1]; a missing agent or a wrong shape raises AgentActionError."""
        state = self.env.step(state, self.team.module_actions(actions))
        rewards = self.team.rewards(state.reward)
        rewards["__all__"] = sum(state.reward.values(), jnp.zeros(()))
        done = state.done > 0
        dones = {a: done for a in self.agents} | {"__all__": done}
        infos = {"truncation": state.info["truncation"], **state.metrics}
        return self.get_obs(state), state, rewards, dones, infos

    def get_obs(self, state: State) -> dict[str, Float[Array, "obs"]]:
        """Agent -> its observation of `state`."""
        return self._observe(state)

    @property
    def agent_classes(self) -> dict[str, list[str]]:
        """One class: every agent is a module of the same body."""
        return {"modules": list(self.agents)}


def mabrax_env(task: str, episode_length: int = 1000, backend: Backend = "mjx") -> JaxMARLEnv:
    """MABrax's `jaxmarl.make(task, episode_length=...)` on MJX: MABrax's agents
    ("agent_0", ...), observation and action spaces (Box, float32, actions in [-1, 1]),
    observations (MABrax's index maps on Brax's observation, `mabrax`), every agent's
    reward the team reward, `dones` True for every agent when the episode terminates or
    reaches `episode_length` steps (then infos["truncation"] is 1.0 unless it also
    terminated), and JaxMARL's auto-reset in `step`.

    task: one of `MABRAX_TASKS` ("ant_4x2", "halfcheetah_6x1", "hopper_3x1",
        "humanoid_9|8", "walker2d_2x3").
    """
    if task not in MABRAX_TASKS:
        raise InteropError(
            f"mabrax_env: no MABrax task '{task}'; use one of {', '.join(MABRAX_TASKS)} "
            "(JaxMARLEnv serves any other body)."
        )
    return JaxMARLEnv(task, config=EnvConfig(episode_length=episode_length), backend=backend,
                      shared_reward=True)
