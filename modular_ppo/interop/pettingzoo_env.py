"""A body as a PettingZoo `ParallelEnv` on MuJoCo's C simulator (the CPU backend).

    env = ParallelModularEnv("ant-modular", render_mode="rgb_array")
    observations, infos = env.reset(seed=0)
    observations, rewards, terminations, truncations, infos = env.step(actions)

Agents are the actuated modules (`team`), in module order; each observes its module's
observation (Box float32) and acts with Box(-1, 1, (n_actuators,), float32). Rewards are
the modules' (the non-agent modules' shared evenly), summing to the team reward. An
episode ends for every agent at once: `terminations` when the body left its task's
healthy ranges, `truncations` when it reached `config.episode_length` steps (the env's
`State.info["truncation"]`), after which `agents` is empty until `reset`. The step that
ends an episode returns its terminal observation (see `episodes`).

Seeding: `reset(seed=s)` draws the reset noise from `jax.random.PRNGKey(s)` and later
unseeded resets from the keys that follow, so the same seeds and actions give the same
episodes; the first reset without any seed takes one from the OS. infos[agent]:
"forward_velocity" of the step.

Each call runs the env's jitted single-env function (the first compiles, seconds):
torch-side code (TorchRL, BenchMARL, EPyMARL) drives it as any PettingZoo env.
"""

from __future__ import annotations

import gymnasium
import jax
import numpy as np
from jaxtyping import Float
from pettingzoo import ParallelEnv

from modular_ppo.body import BodyGraph, Partition
from modular_ppo.body.render import BodyRenderer
from modular_ppo.env import EnvConfig, ModularEnv, make_env
from modular_ppo.interop.action_checks import checked_agent_actions
from modular_ppo.interop.bodies import resolve_body
from modular_ppo.interop.episodes import episodic
from modular_ppo.interop.errors import InteropError
from modular_ppo.interop.team import Team

RENDER_MODES = ("rgb_array",)


class ParallelModularEnv(ParallelEnv):
    """`body` as a PettingZoo parallel environment (see module docstring).

    body: a bundled body name, a generated one ("centipede-6"), an MJCF path or a BodyGraph.
    partition: a partition of a named body (e.g. "2x4" for the ant).
    config: the env's settings (observations, episode length, task overrides).
    render_mode: None or "rgb_array" (`render()` returns a uint8 [height, width, 3] frame).
    nthread: threads of MuJoCo's C simulator (one env: 1).
    """

    def __init__(
        self,
        body: str | BodyGraph,
        partition: Partition | None = None,
        config: EnvConfig = EnvConfig(),
        render_mode: str | None = None,
        nthread: int = 1,
    ):
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise InteropError(
                f"render_mode={render_mode!r}; use None or one of {list(RENDER_MODES)}."
            )
        self.body = resolve_body(body, partition)
        """The morphology and its partition into modules."""
        self.env = episodic(self._make_env(config, nthread))
        """The ModularEnv stepped, on the CPU backend, without auto-reset."""
        self.team = self._make_team()
        self.render_mode = render_mode
        self.metadata = {
            "name": f"modular_ppo/{self.body.name}",
            "render_modes": list(RENDER_MODES),
            "render_fps": 1.0 / self.env.dt,
            "is_parallelizable": True,
        }
        self.possible_agents = self.team.agents
        self.agents: list[str] = []
        self._observation_spaces = {
            a: gymnasium.spaces.Box(-np.inf, np.inf, (self.env.obs_sizes[m],), self.obs_dtype)
            for a, m in self.team.module_of.items()
        }
        self._action_spaces = {
            a: gymnasium.spaces.Box(-1.0, 1.0, (n,), np.float32)
            for a, n in self.team.action_sizes.items()
        }
        self._reset = jax.jit(self.env.reset)
        self._step = jax.jit(self.env.step)
        self._key = None
        self._state = None
        self._renderer: BodyRenderer | None = None

    obs_dtype = np.float32
    """The observations' dtype."""

    def _make_env(self, config: EnvConfig, nthread: int) -> ModularEnv:
        """The env of `self.body` (before `episodic`): on the CPU backend."""
        return make_env(self.body, config, "cpu", nthread)

    def _make_team(self) -> Team:
        """The agents: the actuated modules, named after them."""
        return Team.of(self.env)

    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Box:
        return self._action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, Float[np.ndarray, "obs"]], dict[str, dict]]:
        if seed is not None:
            self._key = jax.random.PRNGKey(seed)
        elif self._key is None:
            self._key = jax.random.PRNGKey(np.random.SeedSequence().entropy % 2**32)
        self._key, key = jax.random.split(self._key)
        self._state = self._reset(key)
        self.agents = list(self.possible_agents)
        return self._observations(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Float[np.ndarray, "act"]]) -> tuple[
        dict[str, Float[np.ndarray, "obs"]], dict[str, float], dict[str, bool],
        dict[str, bool], dict[str, dict],
    ]:
        if not self.agents:
            raise InteropError("step() after the episode ended (or before reset()): call reset().")
        actions = checked_agent_actions(actions, self._action_spaces)
        self._state = self._step(self._state, self.team.module_actions(actions))
        state = self._state
        rewards = {a: float(r) for a, r in self.team.rewards(state.reward).items()}
        done = bool(state.done > 0)
        truncated = bool(state.info["truncation"] > 0)
        terminated = done and not truncated
        observations = self._observations()
        infos = {a: {"forward_velocity": float(state.metrics["forward_velocity"])}
                 for a in self.agents}
        terminations = dict.fromkeys(self.agents, terminated)
        truncations = dict.fromkeys(self.agents, truncated)
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, Float[np.ndarray, "obs"]]:
        obs = jax.device_get(self._state.obs)
        return {a: np.asarray(obs[m], self.obs_dtype) for a, m in self.team.module_of.items()}

    def render(self) -> np.ndarray | None:
        """The current state as a uint8 [height, width, 3] frame (render_mode "rgb_array")."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() without a render_mode: make the env with render_mode='rgb_array'."
            )
            return None
        if self._state is None:
            raise InteropError("render() before reset(): call reset() first.")
        if self._renderer is None:
            self._renderer = BodyRenderer(
                self.body, width=480, height=480, error=InteropError)
        return self._renderer(np.asarray(self._state.data.qpos, np.float64))

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
