"""A body as one Gymnasium agent: all actuated modules' actions in one Box, on the CPU
backend (the `ParallelModularEnv` underneath).

    env = GymnasiumModularEnv("ant-modular")
    observation, info = env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(action)

action: Box(-1, 1, (sum of the agents' action sizes,), float32), the actuated modules'
actions concatenated in module order (`agents`), each module's in its actuators' MuJoCo
order; for ant-modular: front_left (hip_1, ankle_1), front_right (hip_2, ankle_2),
back_left (hip_3, ankle_3), back_right (hip_4, ankle_4). observation: the agents'
observations concatenated in the same order (Box float32; `slices` says where each
agent's lies). reward: the team reward. terminated / truncated: the episode left the
healthy ranges / hit `config.episode_length`. info: "rewards" (agent -> its reward) and
"forward_velocity". Seeding and rendering are the parallel env's.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from jaxtyping import Float

from modular_ppo.body import BodyGraph, Partition
from modular_ppo.env import EnvConfig
from modular_ppo.interop.action_checks import checked_flat_action
from modular_ppo.interop.pettingzoo_env import RENDER_MODES, ParallelModularEnv
from modular_ppo.interop.team import flat_slices


class GymnasiumModularEnv(gymnasium.Env):
    """`body` as a single-agent Gymnasium environment (see module docstring); the
    arguments are `ParallelModularEnv`'s."""

    metadata = {"render_modes": list(RENDER_MODES)}

    def __init__(self, body: str | BodyGraph, partition: Partition | None = None,
                 config: EnvConfig = EnvConfig(), render_mode: str | None = None,
                 nthread: int = 1):
        self.parallel = ParallelModularEnv(body, partition, config, render_mode, nthread)
        """The multi-agent env stepped underneath."""
        self.agents = list(self.parallel.possible_agents)
        """Agents (actuated modules) in the order of the concatenations."""
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "render_fps": self.parallel.metadata["render_fps"]}
        obs_sizes = {a: self.parallel.observation_space(a).shape[0] for a in self.agents}
        action_sizes = {a: self.parallel.action_space(a).shape[0] for a in self.agents}
        self.slices = {"observation": flat_slices(obs_sizes), "action": flat_slices(action_sizes)}
        """"observation" / "action" -> agent -> its slice of the flat vector."""
        self.observation_space = gymnasium.spaces.Box(
            -np.inf, np.inf, (sum(obs_sizes.values()),), np.float32
        )
        self.action_space = gymnasium.spaces.Box(
            -1.0, 1.0, (sum(action_sizes.values()),), np.float32
        )

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[Float[np.ndarray, "obs"], dict]:
        super().reset(seed=seed)
        observations, _ = self.parallel.reset(seed=seed, options=options)
        return self._flat(observations), {}

    def step(self, action: Float[np.ndarray, "act"]) -> tuple[
        Float[np.ndarray, "obs"], float, bool, bool, dict
    ]:
        action = checked_flat_action(action, self.action_space.shape, self.slices["action"])
        actions = {a: action[s] for a, s in self.slices["action"].items()}
        observations, rewards, terminations, truncations, infos = self.parallel.step(actions)
        first = self.agents[0]
        info = {"rewards": rewards, "forward_velocity": infos[first]["forward_velocity"]}
        return (
            self._flat(observations), float(sum(rewards.values())),
            terminations[first], truncations[first], info,
        )

    def _flat(self, observations: dict[str, np.ndarray]) -> Float[np.ndarray, "obs"]:
        return np.concatenate([observations[a] for a in self.agents]).astype(np.float32)

    def render(self) -> np.ndarray | None:
        return self.parallel.render()

    def close(self) -> None:
        self.parallel.close()
