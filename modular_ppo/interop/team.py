"""Agents = the actuated modules of an env: names, per-agent actions and rewards.

A module without actuators (the ant's torso) is no agent: it has nothing to act with. Its
observation is still inside the agents' own (every module observes its neighbors and the
global features, see `modular_ppo.env.observations`), and its reward (its share of the
team terms) is split evenly between the agents, so the agents' rewards add up to the
env's team reward.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from modular_ppo.env import ModularEnv
from modular_ppo.env.actions import check_action_dict
from modular_ppo.interop.errors import AgentActionError


def flat_slices(sizes: dict[str, int]) -> dict[str, slice]:
    """Agent -> its slice of the flat vector that concatenates the agents' vectors of
    these sizes, in the order of `sizes`."""
    ends = np.cumsum(list(sizes.values()))
    return {a: slice(int(end - n), int(end)) for (a, n), end in zip(sizes.items(), ends)}


@dataclasses.dataclass(frozen=True)
class Team:
    """The agents of an env and the module each one is.

    module_of: agent name -> actuated module name, in agent order.
    action_sizes: agent name -> number of actions, each in [-1, 1].
    """

    module_of: dict[str, str]
    action_sizes: dict[str, int]

    @classmethod
    def of(cls, env: ModularEnv, agent_names: Mapping[str, str] | None = None) -> Team:
        """The env's actuated modules as agents, named and ordered by `agent_names`
        (actuated module -> agent name, every actuated module once; default the module
        names in module order)."""
        names = dict(agent_names or {m: m for m in env.action_sizes})
        return cls(
            module_of={agent: module for module, agent in names.items()},
            action_sizes={agent: env.action_sizes[module] for module, agent in names.items()},
        )

    @property
    def agents(self) -> list[str]:
        """Agent names, in agent order."""
        return list(self.module_of)

    def module_actions(
        self, actions: Mapping[str, Float[Array, "act"]]
    ) -> dict[str, Float[Array, "act"]]:
        """Agent-keyed actions of one env -> the env's module-keyed actions.

        Raises AgentActionError (at trace time under jit) for a missing or unknown agent
        or a wrong shape, naming the agent and the shape it expects.
        """
        check_action_dict(actions, self.action_sizes, keyed_by="agent", error=AgentActionError)
        return {self.module_of[a]: jnp.asarray(actions[a], jnp.float32) for a in self.agents}

    def rewards(self, reward: Mapping[str, Float[Array, ""]]) -> dict[str, Float[Array, ""]]:
        """Module-keyed rewards -> agent-keyed: each agent's module reward plus an even
        share of the rewards of the modules that are no agent (their sum: the team's)."""
        agent_modules = set(self.module_of.values())
        others = [r for m, r in reward.items() if m not in agent_modules]
        share = sum(others, jnp.zeros(())) / len(self.module_of)
        return {a: reward[m] + share for a, m in self.module_of.items()}


@dataclasses.dataclass(frozen=True)
class SharedRewardTeam(Team):
    """A team whose every agent gets the team reward, as MABrax and MaMuJoCo give it."""

    def rewards(self, reward: Mapping[str, Float[Array, ""]]) -> dict[str, Float[Array, ""]]:
        """Every agent gets the team reward (the sum of the modules' rewards)."""
        return dict.fromkeys(self.module_of, sum(reward.values(), jnp.zeros(())))
