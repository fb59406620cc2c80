"""Stage 2 of the pipeline: BodyGraph -> ModularEnv (pure JAX, on MuJoCo MJX).

Contract (what later stages may use):
- `make_env(body, EnvConfig(...), backend="mjx") -> ModularEnv`; backend "cpu" steps
  MuJoCo's C simulator on a thread pool inside the jitted code (same observations and
  rewards), "auto" picks by hardware (`default_backend`). `ModularEnv(body, task, config,
  physics=None)` for a custom `Task` or another `Simulator` (default: MJX).
  `EnvConfig` is a frozen, validated, tyro-ready dataclass (task name, neighbor_hops,
  global / body / contact / previous-action features, episode_length, team_reward
  split, direction_deg, and overrides of the body's own task: reward weights, reset
  noise, termination). Tasks: `TASK_NAMES` ("run_forward", "run_direction"),
  `make_task(body, config) -> Task`: the body's `TaskSpec` (its MJCF's `modular_ppo:`
  annotations, see `modular_ppo.body.task`) with the overrides.
- `ModularEnv` implements `ModularEnvProtocol` (types.py): `reset(key) -> State` and
  `step(state, action) -> State`, single-env and pure (jit and vmap them);
  `obs_sizes` (every module), `action_sizes` (actuated modules), `episode_length`,
  `body`, `task`, `task_spec` (the resolved definition), `config`, `dt`, `obs_layout`
  (module -> tuple of `ObsBlock`), `mjx_model`.
- `State` follows MuJoCo Playground (`data, obs, reward, done, metrics, info`):
  obs / reward keyed by every module; summed over modules the reward equals the
  single-agent task reward (run_forward: Gymnasium v5's locomotion reward with the
  body's weights).
  metrics: "forward_velocity" (velocity along the task direction), "invalid_action"
  (1.0 when the action had a non-finite entry), "reward/<term>" (each term's value
  for the whole body). info: "truncation", "steps", "episode", "last_episode" (see
  `State`), "rng" (the key of the next fresh start).
- Actions: dict keyed by exactly the actuated modules, each Float[n_actuators] in
  [-1, 1], mapped affinely onto each actuator's ctrlrange (clipped; the control cost
  is taken on the action as given, as in Brax). Wrong keys or
  shapes raise `ActionError` at trace time. Non-finite entries are treated as 0 (the
  middle of the range) and flag metrics["invalid_action"] = 1.0, so a trainer's NaN guard
  can stop the run; the step itself stays finite.
- Episodes: termination when the state after a step leaves the task's healthy ranges
  (root height, root hinge angle, joint state; never without them); truncation after
  `episode_length` steps; done = either; on done the step returns a fresh start with new
  reset noise (qpos = body.init_qpos + U(-s, s), qvel = U(-s, s) or s * N(0, 1), as
  the task says). Observations, rewards and termination read one instant: the state
  after the step, with its kinematics.
- Observations per module: own blocks, then the own blocks of modules up to
  `neighbor_hops` away (module order), then global (root) blocks; see observations.py
  and features.py. `observation_layout(body, config)` and
  `describe_observations(body, config)` need no simulator (for `bodies show`).
- Errors are `EnvError` (a ValueError) naming the field / file / module and the fix;
  `UnsupportedModelError` when MJX refuses a model, `ActionError` for bad actions.
"""

from modular_ppo.env.config import EnvConfig
from modular_ppo.env.errors import ActionError, EnvError, UnsupportedModelError
from modular_ppo.env.cpu_backend import default_backend
from modular_ppo.env.factory import BACKENDS, Backend, make_env
from modular_ppo.env.modular_env import ModularEnv
from modular_ppo.env.observations import ObsBlock, describe_observations, observation_layout
from modular_ppo.env.physics import Simulator
from modular_ppo.env.tasks import TASK_NAMES, RewardTerm, Task, Transition, make_task
from modular_ppo.env.types import ModularEnvProtocol, State

__all__ = [
    "ActionError",
    "BACKENDS",
    "Backend",
    "EnvConfig",
    "EnvError",
    "ModularEnv",
    "ModularEnvProtocol",
    "ObsBlock",
    "RewardTerm",
    "Simulator",
    "State",
    "TASK_NAMES",
    "Task",
    "Transition",
    "UnsupportedModelError",
    "default_backend",
    "describe_observations",
    "make_env",
    "make_task",
    "observation_layout",
]
