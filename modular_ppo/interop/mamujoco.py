"""MaMuJoCo to the letter: gymnasium_robotics' `mamujoco_v1.parallel_env` on this project's env.

    env = mamujoco_env("Ant", "2x4", agent_obsk=1)      # as mamujoco_v1.parallel_env(...)
    env = make("MaMuJoCo-Ant-2x4-v0")                   # a registered id (`MAMUJOCO_IDS`)
    observations, infos = env.reset(seed=0)
    observations, rewards, terminations, truncations, infos = env.step(actions)
    env.state(), env.state_space

Field by field, as gymnasium_robotics' `MultiAgentMujocoEnv` (v1) with default settings:
- bodies: Gymnasium's own v5 MJCF files, stepped as Gymnasium steps them
  (`mamujoco_bodies`, `env/gymnasium_physics.py`), Gymnasium v5's task and frame_skip;
- agents: "agent_0".."agent_{n-1}" in MaMuJoCo's order for `agent_conf`;
- actions: per agent Box(low, high, (n,), float32) with the single-agent env's first
  bound, entries in the order of MaMuJoCo's agent (its nodes: Ant 2x4's agent_1 is hip3,
  ankle3, hip4, ankle4 = actuators 6, 7, 0, 1), in ctrl units;
- observations: MaMuJoCo's (obsk.py's `build_obs` with `agent_obsk` hops and the global
  categories qpos, qvel: `env/mamujoco.py`), float64;
- rewards: every agent gets the team reward, Gymnasium v5's single-agent reward;
- terminations / truncations: Gymnasium's (unhealthy state; 1000 steps), the same for
  every agent, after which `agents` is empty until `reset`;
- `state()` / `state_space`: the Gymnasium v5 env's observation (`env/mamujoco_state.py`),
  float64.
What differs (docs/mamujoco.md): the state is carried in float32 between control steps
(observations, rewards and states agree with gymnasium_robotics' to 1e-5 on the same
state); the reset noise is drawn with JAX's generator from the seed, not numpy's; infos
hold "forward_velocity" only; render modes are "rgb_array" only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from modular_ppo.body.physics_options import with_physics
from modular_ppo.env import EnvConfig, ModularEnv, make_task
from modular_ppo.env.actions import check_action_dict
from modular_ppo.env.gymnasium_physics import GymnasiumPhysics
from modular_ppo.env.mamujoco import body_scenario, module_agents
from modular_ppo.env.mamujoco_state import mamujoco_state
from modular_ppo.interop.action_checks import checked_ctrl_action
from modular_ppo.interop.errors import AgentActionError, InteropError
from modular_ppo.interop.mamujoco_bodies import SCENARIO_NAMES, mamujoco_body, scenario_named
from modular_ppo.interop.pettingzoo_env import ParallelModularEnv
from modular_ppo.interop.team import SharedRewardTeam, Team


@dataclasses.dataclass(frozen=True)
class MaMuJoCoTeam(SharedRewardTeam):
    """MaMuJoCo's agents: actions in ctrl units and MaMuJoCo's order, the team reward.

    order: agent -> for each entry of its action, the index into its module's action
        (whose entries follow MuJoCo's actuator order);
    low, high: agent -> each entry's ctrl range, in the agent's order.
    """

    order: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    low: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    high: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def module_actions(
        self, actions: Mapping[str, Float[Array, "act"]]
    ) -> dict[str, Float[Array, "act"]]:
        """Agent-keyed ctrl-unit actions in MaMuJoCo's order -> module-keyed actions in
        [-1, 1] and actuator order (the env maps them back onto the same ctrl)."""
        check_action_dict(actions, self.action_sizes, keyed_by="agent", error=AgentActionError)
        module_actions = {}
        for agent, module in self.module_of.items():
            low, high = self.low[agent], self.high[agent]
            scaled = (2.0 * jnp.asarray(actions[agent], jnp.float32) - (high + low)) / (high - low)
            module_actions[module] = jnp.zeros_like(scaled).at[self.order[agent]].set(scaled)
        return module_actions


def _team(env: ModularEnv) -> MaMuJoCoTeam:
    """Module agent_i <-> MaMuJoCo's agent i, with its node order and ctrl ranges."""
    body = env.body
    agents = module_agents(body, body_scenario(body))
    module_of, order, low, high, sizes = {}, {}, {}, {}, {}
    for module in sorted(agents, key=lambda m: int(m.rsplit("_", 1)[1])):
        actuators = [node.actuator for node in agents[module]]
        own = body.modules[module].actuator_ids.tolist()
        module_of[module] = module
        order[module] = np.array([own.index(a) for a in actuators])
        ranges = body.model.actuator_ctrlrange[actuators]
        low[module] = ranges[:, 0].astype(np.float32)
        high[module] = ranges[:, 1].astype(np.float32)
        sizes[module] = len(actuators)
    return MaMuJoCoTeam(module_of, sizes, order, low, high)


class MaMuJoCoParallelEnv(ParallelModularEnv):
    """gymnasium_robotics' `MultiAgentMujocoEnv(scenario, agent_conf, agent_obsk)` with
    default settings, on this project's env (module docstring)."""

    obs_dtype = np.float64

    def __init__(
        self, scenario: str, agent_conf: str, agent_obsk: int = 1,
        render_mode: str | None = None,
    ):
        if not isinstance(agent_obsk, int) or agent_obsk < 0:
            raise InteropError(
                f"agent_obsk={agent_obsk!r}: give the hops each agent observes, 0 or more "
                "(MaMuJoCo's default 1). The single-agent setting (None) is Gymnasium's "
                f"own {scenario}-v5."
            )
        self.scenario, self.agent_conf = scenario, agent_conf
        config = EnvConfig(observation="mamujoco", neighbor_hops=agent_obsk)
        super().__init__(mamujoco_body(scenario, agent_conf), None, config, render_mode, 1)
        self.metadata["name"] = f"MaMuJoCo-{scenario}-{agent_conf}"
        bound_low = float(self.body.model.actuator_ctrlrange[0, 0])
        bound_high = float(self.body.model.actuator_ctrlrange[0, 1])
        self._action_spaces = {
            a: gymnasium.spaces.Box(bound_low, bound_high, (n,), np.float32)
            for a, n in self.team.action_sizes.items()
        }
        self._state_of = jax.jit(mamujoco_state(self.body))
        size = jax.eval_shape(lambda key: self._state_of(self.env.reset(key).data),
                              jax.random.PRNGKey(0)).shape
        self.state_space = gymnasium.spaces.Box(-np.inf, np.inf, size, np.float64)
        """The global state's space (`state()`)."""
        self.agent_actuators = {
            agent: self.body.modules[module].actuator_ids[self.team.order[agent]]
            for agent, module in self.team.module_of.items()
        }
        """Agent -> the actuator of each entry of its action (MaMuJoCo's order)."""

    def _make_env(self, config: EnvConfig, nthread: int) -> ModularEnv:
        body = with_physics(self.body, config.physics_options())
        return ModularEnv(body, make_task(body, config), config, physics=GymnasiumPhysics(body))

    def _make_team(self) -> Team:
        return _team(self.env)

    def state(self) -> Float[np.ndarray, "state"]:
        """The Gymnasium v5 env's observation of the current state, float64."""
        if self._state is None:
            raise InteropError("state() before reset(): call reset() first.")
        return np.asarray(self._state_of(self._state.data), np.float64)

    def global_action(self, actions: Mapping[str, np.ndarray]) -> Float[np.ndarray, "nu"]:
        """MaMuJoCo's `map_local_actions_to_global_action`: the single-agent action
        (actuator order, ctrl units) the agents' actions make up."""
        check_action_dict(actions, self.team.action_sizes, keyed_by="agent",
                          error=AgentActionError)
        action = np.zeros(self.body.model.nu)
        for agent, actuators in self.agent_actuators.items():
            action[actuators] = actions[agent]
        return action


def mamujoco_env(
    scenario: str, agent_conf: str, agent_obsk: int = 1, render_mode: str | None = None
) -> MaMuJoCoParallelEnv:
    """`mamujoco_v1.parallel_env(scenario, agent_conf, agent_obsk)` (module docstring)."""
    return MaMuJoCoParallelEnv(scenario, agent_conf, agent_obsk, render_mode)


MAMUJOCO_IDS: dict[str, tuple[str, str]] = {
    f"MaMuJoCo-{name}-{conf}-v0": (name, conf)
    for name in SCENARIO_NAMES for conf in scenario_named(name).partitions
}
"""Registered ids -> (scenario, agent_conf): every scenario / agent_conf served here."""


def make(env_id: str, **kwargs) -> MaMuJoCoParallelEnv:
    """The env of a registered id ("MaMuJoCo-Ant-2x4-v0"); kwargs: agent_obsk, render_mode."""
    if env_id not in MAMUJOCO_IDS:
        raise InteropError(f"unknown id {env_id!r}; registered: {', '.join(MAMUJOCO_IDS)}.")
    return mamujoco_env(*MAMUJOCO_IDS[env_id], **kwargs)


class MaMuJoCoGymnasiumEnv(gymnasium.Env):
    """The single-agent view of a MaMuJoCo scenario: Gymnasium's `<scenario>-v5` env with
    default settings (MaMuJoCo's `agent_obsk=None`), on this project's env.

    observation: `state()` (Gymnasium v5's observation, float64); action: Box over every
    actuator in MuJoCo's order, in ctrl units (float32); reward: Gymnasium v5's; terminated
    / truncated as Gymnasium's. Registered as "modular_ppo/<scenario>-v5" (`gymnasium.make`
    after importing this module).
    """

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, scenario: str, render_mode: str | None = None):
        agent_conf = next(iter(scenario_named(scenario).partitions))
        self.parallel = MaMuJoCoParallelEnv(scenario, agent_conf, 1, render_mode)
        """The multi-agent env stepped underneath."""
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "render_fps": self.parallel.metadata["render_fps"]}
        self.observation_space = self.parallel.state_space
        ranges = self.parallel.body.model.actuator_ctrlrange.astype(np.float32)
        self.action_space = gymnasium.spaces.Box(ranges[:, 0], ranges[:, 1], dtype=np.float32)

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[Float[np.ndarray, "obs"], dict]:
        super().reset(seed=seed)
        self.parallel.reset(seed=seed, options=options)
        return self.parallel.state(), {}

    def step(self, action: Float[np.ndarray, "nu"]) -> tuple[
        Float[np.ndarray, "obs"], float, bool, bool, dict
    ]:
        action = checked_ctrl_action(action, self.action_space.shape)
        _, rewards, terminations, truncations, infos = self.parallel.step(
            {agent: action[ids] for agent, ids in self.parallel.agent_actuators.items()})
        return (self.parallel.state(), rewards["agent_0"], terminations["agent_0"],
                truncations["agent_0"], infos["agent_0"])

    def render(self) -> np.ndarray | None:
        return self.parallel.render()

    def close(self) -> None:
        self.parallel.close()


for _scenario in SCENARIO_NAMES:
    if f"modular_ppo/{_scenario}-v5" not in gymnasium.registry:
        gymnasium.register(f"modular_ppo/{_scenario}-v5",
                           entry_point=MaMuJoCoGymnasiumEnv, max_episode_steps=None,
                           kwargs={"scenario": _scenario})
